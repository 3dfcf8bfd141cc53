package io.attnproof.attention.sinks;

import io.attnproof.attention.Require;
import io.attnproof.attention.dsv4.SinksLanes;
import io.attnproof.attention.tensor.Tensor;
import java.lang.foreign.MemorySegment;

/**
 * The unfused path in f32 on the union kernel's engines ({@link SinksLanes#unfused}): scores {@code (q . k) D^-0.5}
 * of every admitted key, plus the additive masks (a {@code -inf} key is never read), softmax with the sink in the
 * denominator (the weights normalised), times V. Applies no causality of its own: the rule a caller wants arrives as
 * the fused kernels' rule ({@code window}) or as a mask.
 */
final class UnfusedSinks {
    private UnfusedSinks() {
    }

    /**
     * Output {@code [B,Hq,tq,D]} of {@code call} over row-major {@code q[B,Hq,tq,D]}, {@code k, v[B,Hkv,tk,D]} (read
     * in place); {@code window} the fused kernels' rule (0: causal, no window) or -1 for none, {@code mask}
     * {@code [B|1, Hq|1, tq|1, tk]} or null (one of the two at least). A mask value must be finite or -inf.
     */
    static float[] attend(SinksCall call, MemorySegment q, MemorySegment k, MemorySegment v, int window, Tensor mask) {
        MemorySegment m = null;
        if (mask != null) {
            float[] values = mask.toFloatArray();
            for (float x : values) {
                Require.that(!Float.isNaN(x) && x != Float.POSITIVE_INFINITY, "mask value", x, "be finite or -inf");
            }
            m = MemorySegment.ofArray(values);
        }
        return SinksLanes.unfused(q, k, v, call.batch(), call.queryHeads(), call.kvHeads(), call.tq(), call.tk(),
                call.headDim(), call.sink(), window >= 0, Math.max(0, window), m, mask == null ? 1 : mask.dim(0),
                mask == null ? 1 : mask.dim(1), mask == null ? 1 : mask.dim(2));
    }
}
