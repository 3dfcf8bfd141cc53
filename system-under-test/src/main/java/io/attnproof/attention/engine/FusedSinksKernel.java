package io.attnproof.attention.engine;

import io.attnproof.attention.Require;
import io.attnproof.attention.dispatch.DispatchRegistry;
import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.tensor.Tensor;
import java.util.TreeSet;

/**
 * The fused sinks kernel with the GPU kernels' semantics: an online softmax over key tiles with a running max started
 * at the sink, and bottom-right-aligned causality and window applied inside ({@code kv_offset = tk - tq}; row r sees
 * {@code j <= r + kv_offset} and, with {@code window > 0}, {@code j >= r + kv_offset - window + 1}); keys outside a
 * row's window are never read. Its mask parameter exists only to refuse a non-null mask. It is this lane's CUDA and
 * Metal fused arm, and runs on the union kernel's engines ({@link SinksLanes}: the Vector API with row tiles on every
 * core).
 */
public final class FusedSinksKernel {

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
        return launch(call, q, k, v, window);
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
        float[] out = run(call, q, k, v, window);
        return Tensor.wrap(out, q.dtype(), q.device(), call.batch(), call.queryHeads(), call.tq(), call.headDim());
    }

    private static void refuseMask(String kernel, Tensor mask) {
        Require.that(mask == null, "mask", mask, "be null: " + kernel + " applies causality and the window itself"
                + " and cannot honour a caller mask (sinks_attn sends masked calls to sinks_attn_cpu)");
    }

    /**
     * The kernel body on the union kernel's engines ({@link SinksLanes#fused}): every query row over the keys the rule
     * admits, in tiles, with an online softmax whose running max starts at the sink. A single-query call
     * ({@code t_q == 1}) from {@link DispatchRegistry#SPLIT_K_MIN_KEYS} keys on splits its keys (split-K) into chunks
     * of {@link DispatchRegistry#SPLIT_K_CHUNK} key positions, each giving its running max, sum of exponentials and
     * unnormalised output with no sink, combined with the sink entering once ({@code m = max(sink, max_c m_c)},
     * {@code l = e^(sink-m) + sum_c e^(m_c-m) l_c}, {@code o = sum_c e^(m_c-m) o_c / l}); an empty chunk contributes
     * nothing. A row under the switch is computed exactly as the same row of a multi-query call (the same bits).
     */
    private static float[] run(SinksCall call, Tensor q, Tensor k, Tensor v, int window) {
        boolean split = DispatchRegistry.splitK(call.tq(), call.tk());
        DispatchTrace.last().sinksSplitChunks = split ? DispatchRegistry.splitChunks(call.tk()) : 0;
        return SinksLanes.fused(q.view(), k.view(), v.view(), call.batch(), call.queryHeads(), call.kvHeads(),
                call.tq(), call.tk(), call.headDim(), call.sink(), window);
    }
}
