package io.attnproof.attention.engine;

import java.lang.foreign.MemorySegment;

/**
 * GPT-OSS sinks attention on the union kernel's engines ({@link UnionLanes}: the Vector API engine with its row tiles
 * on every core, the scalar engine for small calls, split-K for long single-query rows). A GQA call {@code q[B,Hq,tq,D]},
 * {@code k, v[B,Hkv,tk,D]} is a union call whose batch entries are the {@code B * Hkv} (batch, KV head) pairs, each
 * with the {@code Hq / Hkv} query heads of its KV head as rows (the layouts coincide, so nothing is copied); the
 * sinks stay per query head ({@link UnionCall.Form#sinkPeriod()}). The scale is {@code D^-0.5}.
 * <ul>
 *   <li>{@link #fused}: the fused kernels' rule (bottom-right causality, optional window) with the engine's online
 *       softmax; single-query calls from {@code SPLIT_K_MIN_KEYS} keys split on key positions;</li>
 *   <li>{@link #unfused}: the same rule restricted further by a caller's additive mask, in the unfused form (all
 *       scores, then the softmax with the sink normalised, then PV).</li>
 * </ul>
 * Inputs are read in place; the result is a new {@code [B,Hq,tq,D]} array.
 */
public final class SinksLanes {
    private SinksLanes() {
    }

    /** The fused kernels' arithmetic: {@code window} 0 for none. */
    public static float[] fused(MemorySegment q, MemorySegment k, MemorySegment v, int batch, int queryHeads,
            int kvHeads, int tq, int tk, int headDim, float[] sink, int window) {
        return run(fusedCall(q, k, v, batch, queryHeads, kvHeads, tq, tk, headDim, sink, window));
    }

    /** The union call {@link #fused} runs (its output zeros). */
    static UnionCall fusedCall(MemorySegment q, MemorySegment k, MemorySegment v, int batch, int queryHeads,
            int kvHeads, int tq, int tk, int headDim, float[] sink, int window) {
        return call(q, k, v, batch, queryHeads, kvHeads, tq, tk, headDim, sink, Admission.causal(tq, tk, window),
                new UnionCall.Form(kvHeads, false, true));
    }

    /**
     * The unfused path: with {@code causal}, the fused kernels' rule ({@code window} 0 for none); when {@code mask} is
     * not null, an additive mask {@code [mb, mh, mq, tk]} (each of mb, mh, mq 1 or full; -inf removes a key, a finite
     * value is added to its score), on top of the rule where there is one. At least one of the two.
     */
    public static float[] unfused(MemorySegment q, MemorySegment k, MemorySegment v, int batch, int queryHeads,
            int kvHeads, int tq, int tk, int headDim, float[] sink, boolean causal, int window, MemorySegment mask,
            int mb, int mh, int mq) {
        return run(unfusedCall(q, k, v, batch, queryHeads, kvHeads, tq, tk, headDim, sink, causal, window, mask, mb,
                mh, mq));
    }

    /** The union call {@link #unfused} runs (its output zeros). */
    static UnionCall unfusedCall(MemorySegment q, MemorySegment k, MemorySegment v, int batch, int queryHeads,
            int kvHeads, int tq, int tk, int headDim, float[] sink, boolean causal, int window, MemorySegment mask,
            int mb, int mh, int mq) {
        if (!causal && mask == null) {
            throw new IllegalArgumentException("mask = null must be a mask when the call has no causal rule");
        }
        Admission.Causal rule = causal ? Admission.causal(tq, tk, window) : null;
        Admission admission = mask == null ? rule
                : Admission.gqaMask(mask, mb, mh, mq, tk, kvHeads, queryHeads / kvHeads, rule);
        return call(q, k, v, batch, queryHeads, kvHeads, tq, tk, headDim, sink, admission,
                new UnionCall.Form(kvHeads, true, false));
    }

    private static UnionCall call(MemorySegment q, MemorySegment k, MemorySegment v, int batch, int queryHeads,
            int kvHeads, int tq, int tk, int headDim, float[] sink, Admission admission, UnionCall.Form form) {
        int group = queryHeads / kvHeads;
        int entries = batch * kvHeads;
        float[] out = new float[entries * group * tq * headDim];
        float scale = (float) (1.0 / Math.sqrt(headDim));
        UnionRows keys = UnionRows.of(new UnionRows.Span(k, tk, 0, tk, headDim), null);
        UnionRows values = UnionRows.of(new UnionRows.Span(v, tk, 0, tk, headDim), null);
        return new UnionCall(q, entries, group, tq, headDim, scale, keys, values, admission, sink, out, form);
    }

    /** Runs {@code call} as {@code sinks_attn} does: split-K where it applies, else the engine for its size. */
    static float[] run(UnionCall call) {
        if (call.out().length == 0) {
            return call.out();
        }
        if (SplitKDecode.applies(call)) {
            SplitKDecode.run(call);
        } else {
            UnionLanes.forCall(call).run(call);
        }
        return call.out();
    }
}
