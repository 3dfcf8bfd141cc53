package io.attnproof.attention.engine;

import io.attnproof.attention.Require;
import io.attnproof.attention.mask.VarlenCausalMask;
import io.attnproof.attention.tensor.Tensor;
import java.lang.foreign.MemorySegment;

/**
 * The unfused path in f32 on the union kernel's engines ({@link SinksLanes#unfused}): scores {@code (q . k) D^-0.5}
 * of every admitted key, plus the additive masks (a {@code -inf} key is never read), softmax with the sink in the
 * denominator (the weights normalised), times V. Applies no causality of its own: the rule a caller wants arrives as
 * the fused kernels' rule ({@code window}) or as a mask.
 */
public final class UnfusedSinks {
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

    /**
     * {@code sinks_attn_cpu}, the unfused path on any device: scores, plus the fused kernels' causal/window rule
     * built as an additive mask, plus the caller's mask (-inf wins: a mask only ever removes keys or adds biases),
     * then softmax with sinks and PV. A caller mask that already encodes causality and the window (GPT-OSS's) adds
     * nothing the rule has not removed.
     */
    public static Tensor sinksAttnCpu(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        Tensor caller = call.mask4(mask, q);
        float[] out = UnfusedSinks.attend(call, q.view(), k.view(), v.view(), window, caller);
        return Tensor.wrap(out, q.dtype(), q.device(), call.batch(), call.queryHeads(), call.tq(), call.headDim());
    }

    /**
     * {@code sinks_attn_cpu_varlen}: packed {@code q[totalQ, Hq, D]}, {@code k, v[totalK, Hkv, D]}; sequence i owns
     * query rows {@code [cuSeqlensQ[i], cuSeqlensQ[i+1])} and keys {@code [cuSeqlensK[i], cuSeqlensK[i+1])} and sees
     * them through {@code varlen_causal_mask(q_len, kv_len, window)} from the single-slot memo. Returns
     * {@code [sequences, Hq, max_q, D]}, rows past a sequence's q_len zero.
     */
    public static Tensor sinksAttnCpuVarlen(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuSeqlensQ,
            int[] cuSeqlensK, int window) {
        SinksCall.checkPacked(q, k, v, window);
        int hq = q.dim(1);
        int d = q.dim(2);
        int hkv = k.dim(1);
        float[] sink = SinksCall.sinkValues(sinks, q);
        CuSeqlens cu = CuSeqlens.of(cuSeqlensQ, cuSeqlensK, q.dim(0), k.dim(0));
        int maxQ = cu.maxQ();
        float[] qa = q.toFloatArray();
        float[] ka = k.toFloatArray();
        float[] va = v.toFloatArray();
        float[] out = new float[cu.sequences() * hq * maxQ * d];
        VarlenCausalMask.Memo memo = VarlenCausalMask.Memo.current();
        for (int i = 0; i < cu.sequences(); i++) {
            int qLen = cu.qLen(i);
            int kvLen = cu.kvLen(i);
            if (qLen == 0) {
                continue;
            }
            // The sequence's rule is the memo's mask, as consumed: the only rule this row sees.
            Tensor rule = memo.get(qLen, kvLen, window);
            SinksCall row = new SinksCall(1, hq, hkv, qLen, kvLen, d, sink);
            float[] o = UnfusedSinks.attend(row, unpack(qa, cu.q()[i], qLen, hq, d), unpack(ka, cu.k()[i], kvLen, hkv, d),
                    unpack(va, cu.k()[i], kvLen, hkv, d), -1, rule.reshape(1, 1, qLen, kvLen));
            for (int h = 0; h < hq; h++) {
                System.arraycopy(o, h * qLen * d, out, ((i * hq + h) * maxQ) * d, qLen * d);
            }
        }
        return Tensor.of(out, q.dtype(), q.device(), cu.sequences(), hq, maxQ, d);
    }

    /** Packed rows {@code [start, start+len)} of {@code [total, H, D]} as {@code [1, H, len, D]}. */
    private static MemorySegment unpack(float[] packed, int start, int len, int h, int d) {
        float[] out = new float[h * len * d];
        for (int t = 0; t < len; t++) {
            for (int hi = 0; hi < h; hi++) {
                System.arraycopy(packed, ((start + t) * h + hi) * d, out, (hi * len + t) * d, d);
            }
        }
        return MemorySegment.ofArray(out);
    }
}
