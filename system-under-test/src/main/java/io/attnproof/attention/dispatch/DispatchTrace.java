package io.attnproof.attention.dispatch;

/**
 * The decisions the calling thread's last calls took, recorded by the system where it decides (so that a test pins
 * the decision on the system's own call path, not on a copy of its rule). Per thread; never read by the system.
 */
public final class DispatchTrace {
    /** The decisions of the last call of each kind on this thread (null: no such call yet). */
    public static final class Last {
        /** {@code sinks_attn}'s arm, e.g. {@code CUDA_FUSED}. */
        public String sinksArm;
        /** The fused kernel that ran, e.g. {@code flash_attn_sinks_metal_decode}. */
        public String sinksKernel;
        /** Whether the last fused sinks kernel split its keys (split-K), and into how many chunks. */
        public int sinksSplitChunks;
        /** The native varlen path of the last varlen call: its kernel's name, or {@code unfused-by-rows}. */
        public String varlenKernel;
        /** The CPU union engine decision: {@code scalar-small-call} or {@code default}. */
        public String unionEngine;
        /** Whether the last CPU union call ran on the fork-join pool. */
        public boolean unionParallel;
        /** Rows of the last CPU union call that took split-K. */
        public int unionSplitRows;
    }

    private static final ThreadLocal<Last> LAST = ThreadLocal.withInitial(Last::new);

    private DispatchTrace() {
    }

    /** This thread's record. */
    public static Last last() {
        return LAST.get();
    }
}
