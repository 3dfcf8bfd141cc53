package io.attnproof.attention.sinks;

import io.attnproof.attention.Require;
import io.attnproof.attention.dispatch.DispatchRegistry;
import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;
import java.util.TreeSet;

/**
 * The fused sinks kernel with the GPU kernels' structure: query-row tiles over key tiles, an online softmax with a
 * running max, the sink folded in after the last tile, and bottom-right-aligned causality and window applied inside
 * ({@code kv_offset = tk - tq}; row r sees {@code j <= r + kv_offset} and, with {@code window > 0},
 * {@code j >= r + kv_offset - window + 1}). Its mask parameter exists only to refuse a non-null mask. It is this
 * lane's CUDA and Metal fused arm and the reference the native ports are written from.
 */
public final class FusedSinksKernel {
    /** Query rows per tile (a thread block's rows), the registry's. */
    public static final int BLOCK_Q = DispatchRegistry.SINKS_BLOCK_Q;
    /** Keys per tile (one pass of the inner loop), the registry's. */
    public static final int BLOCK_K = DispatchRegistry.SINKS_BLOCK_K;

    private FusedSinksKernel() {
    }

    /** {@code flash_attn_sinks} (CUDA): head dims {@link SinksDispatch#FUSED_HEAD_DIMS} and 512; refuses a mask. */
    public static Tensor flashAttnSinks(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        refuseMask("flash_attn_sinks", mask);
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        Require.that(SinksDispatch.cudaEnvelope(call.headDim(), true), "head_dim", call.headDim(),
                "be in flash_attn_sinks's envelope " + new TreeSet<>(SinksDispatch.FUSED_HEAD_DIMS) + " or "
                + SinksDispatch.FLASH_512_HEAD_DIM);
        return launch(call, q, k, v, window);
    }

    /** {@code flash_attn_sinks_metal}: head dims {@link SinksDispatch#FUSED_HEAD_DIMS}; refuses a mask. */
    public static Tensor flashAttnSinksMetal(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        refuseMask("flash_attn_sinks_metal", mask);
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        Require.that(SinksDispatch.metalEnvelope(call.headDim()), "head_dim", call.headDim(),
                "be in flash_attn_sinks_metal's envelope " + new TreeSet<>(SinksDispatch.FUSED_HEAD_DIMS));
        return launch(call, q, k, v, window);
    }

    /**
     * {@code flash_attn_sinks_metal_decode}: the Metal single-query kernel, head dims
     * {@link SinksDispatch#METAL_DECODE_HEAD_DIMS} only (a call at 112 or 192 is refused: the kernel does not exist
     * there); {@code t_q} must be 1. It honours the sliding window like the prefill kernel, and splits the keys
     * (split-K) from {@link DispatchRegistry#SPLIT_K_MIN_KEYS} on. Refuses a mask.
     */
    public static Tensor flashAttnSinksMetalDecode(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask,
            int window) {
        refuseMask("flash_attn_sinks_metal_decode", mask);
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        Require.that(SinksDispatch.METAL_DECODE_HEAD_DIMS.contains(call.headDim()), "head_dim", call.headDim(),
                "be in flash_attn_sinks_metal_decode's envelope " + new TreeSet<>(SinksDispatch.METAL_DECODE_HEAD_DIMS)
                + " (the decode kernel does not exist at other head dims)");
        Require.that(DispatchRegistry.singleQuery(call.tq()), "t_q", call.tq(),
                "be <= " + DispatchRegistry.DECODE_MAX_Q + " (flash_attn_sinks_metal_decode is the single-query kernel)");
        return launchDecode(call, q, k, v, window);
    }

    private static Tensor launchDecode(SinksCall call, Tensor q, Tensor k, Tensor v, int window) {
        float[] out = run(call, q.toFloatArray(), k.toFloatArray(), v.toFloatArray(), window);
        return Tensor.of(out, q.dtype(), q.device(), call.batch(), call.queryHeads(), call.tq(), call.headDim());
    }

    /**
     * The kernel body for any head dim: {@code q[B,Hq,tq,D]}, {@code k, v[B,Hkv,tk,D]}, sinks {@code [Hq]};
     * returns {@code [B,Hq,tq,D]} in q's dtype and device. {@code mask} must be null.
     */
    public static Tensor attend(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        refuseMask("the fused sinks kernel", mask);
        return launch(SinksCall.of(q, k, v, sinks, window), q, k, v, window);
    }

    private static Tensor launch(SinksCall call, Tensor q, Tensor k, Tensor v, int window) {
        float[] out = run(call, q.toFloatArray(), k.toFloatArray(), v.toFloatArray(), window);
        return Tensor.of(out, q.dtype(), q.device(), call.batch(), call.queryHeads(), call.tq(), call.headDim());
    }

    private static void refuseMask(String kernel, Tensor mask) {
        Require.that(mask == null, "mask", mask, "be null: " + kernel + " applies causality and the window itself"
                + " and cannot honour a caller mask (sinks_attn sends masked calls to sinks_attn_cpu)");
    }

    private static float[] run(SinksCall call, float[] q, float[] k, float[] v, int window) {
        DispatchTrace.last().sinksSplitChunks = 0;
        if (DispatchRegistry.singleQuery(call.tq()) && call.tq() == 1) {
            return decode(call, q, k, v, window);
        }
        int hq = call.queryHeads();
        int tq = call.tq();
        int tk = call.tk();
        int d = call.headDim();
        long kvOffset = (long) tk - tq;
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] out = new float[call.batch() * hq * tq * d];
        float[] m = new float[BLOCK_Q];
        float[] l = new float[BLOCK_Q];
        float[] acc = new float[BLOCK_Q * d];
        float[] s = new float[BLOCK_K];
        for (int b = 0; b < call.batch(); b++) {
            for (int h = 0; h < hq; h++) {
                int kvBase = (b * call.kvHeads() + h / call.group()) * tk * d;
                for (int r0 = 0; r0 < tq; r0 += BLOCK_Q) {
                    int rows = Math.min(BLOCK_Q, tq - r0);
                    Arrays.fill(m, Float.NEGATIVE_INFINITY);
                    Arrays.fill(l, 0f);
                    Arrays.fill(acc, 0f);
                    // Keys any row of this tile can see: tiles outside [lo, hi] are skipped, never loaded.
                    long lo = window == 0 ? 0 : Math.max(0, r0 + kvOffset - window + 1);
                    long hi = Math.min(tk - 1L, r0 + rows - 1 + kvOffset);
                    for (long c0 = lo / BLOCK_K * BLOCK_K; c0 <= hi; c0 += BLOCK_K) {
                        int cols = (int) Math.min(BLOCK_K, tk - c0);
                        for (int i = 0; i < rows; i++) {
                            int qOff = ((b * hq + h) * tq + r0 + i) * d;
                            long diagonal = r0 + i + kvOffset;
                            long from = Math.max(c0, window == 0 ? 0 : diagonal - window + 1);
                            long to = Math.min(c0 + cols - 1, diagonal);
                            if (from > to) {
                                continue;
                            }
                            float tileMax = Float.NEGATIVE_INFINITY;
                            for (long j = from; j <= to; j++) {
                                float x = dot(q, qOff, k, kvBase + (int) j * d, d) * scale;
                                s[(int) (j - c0)] = x;
                                tileMax = Math.max(tileMax, x);
                            }
                            float mNew = Math.max(m[i], tileMax);
                            float alpha = m[i] == Float.NEGATIVE_INFINITY ? 0f : (float) Math.exp(m[i] - mNew);
                            l[i] *= alpha;
                            for (int e = 0; e < d; e++) {
                                acc[i * d + e] *= alpha;
                            }
                            for (long j = from; j <= to; j++) {
                                float p = (float) Math.exp(s[(int) (j - c0)] - mNew);
                                l[i] += p;
                                int vOff = kvBase + (int) j * d;
                                for (int e = 0; e < d; e++) {
                                    acc[i * d + e] += p * v[vOff + e];
                                }
                            }
                            m[i] = mNew;
                        }
                    }
                    // After the last key tile: fold the sink into the denominator only, then normalise.
                    float sink = call.sink()[h];
                    for (int i = 0; i < rows; i++) {
                        float mFinal = Math.max(m[i], sink);
                        if (mFinal == Float.NEGATIVE_INFINITY) {
                            continue; // no key admitted and no sink: zeros
                        }
                        float alpha = m[i] == Float.NEGATIVE_INFINITY ? 0f : (float) Math.exp(m[i] - mFinal);
                        float denom = l[i] * alpha + (sink == Float.NEGATIVE_INFINITY ? 0f
                                : (float) Math.exp(sink - mFinal));
                        int oOff = ((b * hq + h) * tq + r0 + i) * d;
                        for (int e = 0; e < d; e++) {
                            out[oOff + e] = acc[i * d + e] * alpha / denom;
                        }
                    }
                }
            }
        }
        return out;
    }

    /**
     * A single query row per (b, h) ({@code t_q == 1}, so {@code kv_offset = tk - 1}): the same tiles and arithmetic
     * as that row in {@link #run}'s row tiles (so the same bits), or, from {@link DispatchRegistry#SPLIT_K_MIN_KEYS}
     * keys on, split-K: the keys in chunks of {@link DispatchRegistry#SPLIT_K_CHUNK}, each giving its running max,
     * sum of exponentials and unnormalised output with no sink, combined with the sink entering once
     * ({@code m = max(sink, max_c m_c)}, {@code l = e^(sink-m) + sum_c e^(m_c-m) l_c},
     * {@code o = sum_c e^(m_c-m) o_c / l}); an empty chunk contributes nothing.
     */
    private static float[] decode(SinksCall call, float[] q, float[] k, float[] v, int window) {
        int hq = call.queryHeads();
        int tk = call.tk();
        int d = call.headDim();
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] out = new float[call.batch() * hq * d];
        boolean split = DispatchRegistry.splitK(1, tk);
        int chunk = split ? DispatchRegistry.SPLIT_K_CHUNK : Math.max(tk, 1);
        int chunks = split ? DispatchRegistry.splitChunks(tk) : 1;
        DispatchTrace.last().sinksSplitChunks = split ? chunks : 0;
        float[] mc = new float[chunks];
        float[] lc = new float[chunks];
        float[] oc = new float[chunks * d];
        float[] s = new float[BLOCK_K];
        long hi = tk - 1L;
        long lo = window == 0 ? 0 : Math.max(0, hi - window + 1);
        for (int b = 0; b < call.batch(); b++) {
            for (int h = 0; h < hq; h++) {
                int kvBase = (b * call.kvHeads() + h / call.group()) * tk * d;
                int qOff = (b * hq + h) * d;
                java.util.Arrays.fill(oc, 0f);
                for (int c = 0; c < chunks; c++) {
                    long cLo = Math.max(lo, (long) c * chunk);
                    long cHi = Math.min(hi, (long) c * chunk + chunk - 1);
                    float m = Float.NEGATIVE_INFINITY;
                    float l = 0f;
                    for (long c0 = cLo / BLOCK_K * BLOCK_K; c0 <= cHi; c0 += BLOCK_K) {
                        long from = Math.max(c0, cLo);
                        long to = Math.min(c0 + BLOCK_K - 1, cHi);
                        if (from > to) {
                            continue;
                        }
                        float tileMax = Float.NEGATIVE_INFINITY;
                        for (long j = from; j <= to; j++) {
                            float x = dot(q, qOff, k, kvBase + (int) j * d, d) * scale;
                            s[(int) (j - c0)] = x;
                            tileMax = Math.max(tileMax, x);
                        }
                        float mNew = Math.max(m, tileMax);
                        float alpha = m == Float.NEGATIVE_INFINITY ? 0f : (float) Math.exp(m - mNew);
                        l *= alpha;
                        for (int e = 0; e < d; e++) {
                            oc[c * d + e] *= alpha;
                        }
                        for (long j = from; j <= to; j++) {
                            float p = (float) Math.exp(s[(int) (j - c0)] - mNew);
                            l += p;
                            int vOff = kvBase + (int) j * d;
                            for (int e = 0; e < d; e++) {
                                oc[c * d + e] += p * v[vOff + e];
                            }
                        }
                        m = mNew;
                    }
                    mc[c] = m;
                    lc[c] = l;
                }
                float sink = call.sink()[h];
                int oOff = (b * hq + h) * d;
                if (!split) {
                    // One chunk: exactly the prefill kernel's finish for this row.
                    float mFinal = Math.max(mc[0], sink);
                    if (mFinal == Float.NEGATIVE_INFINITY) {
                        continue; // no key admitted and no sink: zeros
                    }
                    float alpha = mc[0] == Float.NEGATIVE_INFINITY ? 0f : (float) Math.exp(mc[0] - mFinal);
                    float denom = lc[0] * alpha + (sink == Float.NEGATIVE_INFINITY ? 0f
                            : (float) Math.exp(sink - mFinal));
                    for (int e = 0; e < d; e++) {
                        out[oOff + e] = oc[e] * alpha / denom;
                    }
                    continue;
                }
                combine(mc, lc, oc, chunks, d, sink, out, oOff);
            }
        }
        return out;
    }

    /** The split-K combine: the sink enters once, here; chunks in order; zeros when nothing and no sink. */
    private static void combine(float[] mc, float[] lc, float[] oc, int chunks, int d, float sink, float[] out,
            int oOff) {
        float m = sink;
        for (int c = 0; c < chunks; c++) {
            m = Math.max(m, mc[c]);
        }
        if (m == Float.NEGATIVE_INFINITY) {
            return; // no key admitted and no sink: zeros
        }
        float l = sink == Float.NEGATIVE_INFINITY ? 0f : (float) Math.exp(sink - m);
        float[] w = new float[chunks];
        for (int c = 0; c < chunks; c++) {
            w[c] = mc[c] == Float.NEGATIVE_INFINITY ? 0f : (float) Math.exp(mc[c] - m);
            l += w[c] * lc[c];
        }
        for (int e = 0; e < d; e++) {
            float acc = 0f;
            for (int c = 0; c < chunks; c++) {
                acc += w[c] * oc[c * d + e];
            }
            out[oOff + e] = acc / l;
        }
    }

    private static float dot(float[] a, int aOff, float[] b, int bOff, int d) {
        float acc = 0f;
        for (int i = 0; i < d; i++) {
            acc += a[aOff + i] * b[bOff + i];
        }
        return acc;
    }
}
