package io.attnproof.attention.dispatch;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every dispatch threshold of the system in one place (claim B1): the head-dim envelopes per backend and per phase,
 * the {@code ARC_FLASH_512} head dim, varlen eligibility, the decode (single-query) switch, the CPU engine's
 * small-call and parallel switches, the tile sizes of the Java and native kernels, and the split-K switch and chunk.
 * Each decision of the system reads its threshold from here; {@link #all()} enumerates them, one {@link Threshold}
 * per boundary, with the lanes that have it, so that a test can walk every boundary at -1, 0 and +1.
 *
 * <p>The values are deliberately not compile-time constants ({@link #declare(int)}): a class that reads one keeps
 * reading it from here, so changing a value here changes every decision that depends on it.
 */
public final class DispatchRegistry {
    /** The lanes, as evidence lines name them. */
    public static final String CPU = "cpu";
    public static final String CUDA_EMU = "cuda-emu";
    public static final String METAL_EMU = "metal-emu";
    public static final String CUDA = "cuda";
    public static final String METAL = "metal";

    /** Head dims of {@code flash_attn_sinks} (CUDA) and of the Metal prefill kernel {@code flash_attn_sinks_metal}. */
    public static final Set<Integer> FUSED_HEAD_DIMS = Set.of(declare(64), declare(80), declare(96), declare(112),
            declare(128), declare(192), declare(256));
    /** Head dims of the Metal single-query (decode) kernel: fewer than the prefill kernel's (no 112, no 192). */
    public static final Set<Integer> METAL_DECODE_HEAD_DIMS = Set.of(declare(64), declare(80), declare(96),
            declare(128), declare(256));
    /** The CUDA-only head dim behind the {@code ARC_FLASH_512} switch (on unless disabled). */
    public static final int FLASH_512_HEAD_DIM = declare(512);
    /** Varlen only with no mask and at least this many batch rows. */
    public static final int VARLEN_MIN_BATCH = declare(2);
    /** A call with at most this many query rows is a single-query (decode) call. */
    public static final int DECODE_MAX_Q = declare(1);
    /** CPU union kernel: calls under this many multiply-adds take the scalar engine (same bits, no warm-up). */
    public static final long CPU_VECTOR_MIN_MACS = declare(1 << 20);
    /** CPU union kernel: calls of at least this many multiply-adds run on the common fork-join pool. */
    public static final long CPU_PARALLEL_MIN_MACS = declare(1 << 23);
    /** CPU union kernel: admitted keys per online-softmax tile. */
    public static final int UNION_TILE = declare(64);
    /** Native fused kernels ({@code BLOCK_Q}, {@code BLOCK_K} of native/cuda/sinks_attn.cu and the .metal source). */
    public static final int NATIVE_BLOCK_Q = declare(8);
    public static final int NATIVE_BLOCK_K = declare(16);
    /** Split-K (two-pass) decode: a single-query call with at least this many keys splits them into chunks. */
    public static final int SPLIT_K_MIN_KEYS = declare(1024);
    /** Split-K chunk: keys per chunk (a multiple of {@link #UNION_TILE} and {@link #NATIVE_BLOCK_K}). */
    public static final int SPLIT_K_CHUNK = declare(256);

    /**
     * Native split-K kernels ({@code SPLIT_K_THREADS} of both sources; they declare {@link #SPLIT_K_CHUNK} too, as
     * {@code SPLIT_K_CHUNK}, and refuse a grid of other chunks): threads per block; thread t owns output
     * elements t, t + this, ... of the row, so a head dim above it gives a thread a second element.
     */
    public static final int NATIVE_SPLIT_K_THREADS = declare(128);
    /**
     * {@code MAX_D} of native/cuda/sinks_attn.cu: the largest head dim of {@code flash_attn_sinks_varlen} and of the
     * split-K kernels; a varlen call above it runs each sequence through the unfused kernels, a decode through the
     * unfused kernels too.
     */
    public static final int CUDA_NATIVE_MAX_HEAD_DIM = declare(512);
    /** {@code MAX_D} of native/metal/sinks_attn.metal: the same limit for the Metal varlen and split-K kernels. */
    public static final int METAL_NATIVE_MAX_HEAD_DIM = declare(256);

    /** One boundary: where a decision switches, on which lanes, and the rule in words. */
    public record Threshold(String id, String decision, long value, List<String> lanes, String rule) {
    }

    private DispatchRegistry() {
    }

    /** A threshold's value; a method call, so that readers never inline it. */
    static int declare(int value) {
        return value;
    }

    /** Whether a call with {@code tq} query rows is a single-query (decode) call. */
    public static boolean singleQuery(int tq) {
        return tq <= DECODE_MAX_Q;
    }

    /** Whether a single-query row over {@code keys} keys takes split-K. */
    public static boolean splitK(int tq, long keys) {
        return singleQuery(tq) && keys >= SPLIT_K_MIN_KEYS;
    }

    /** Split-K chunks over {@code keys} keys. */
    public static int splitChunks(long keys) {
        return (int) ((keys + SPLIT_K_CHUNK - 1) / SPLIT_K_CHUNK);
    }

    /** Every boundary, in a stable order. */
    public static List<Threshold> all() {
        List<Threshold> out = new ArrayList<>();
        List<String> cudaLanes = List.of(CPU, CUDA_EMU, CUDA);
        List<String> metalLanes = List.of(CPU, METAL_EMU, METAL);
        List<String> every = List.of(CPU, CUDA_EMU, METAL_EMU, CUDA, METAL);
        for (int d : new TreeSet<>(FUSED_HEAD_DIMS)) {
            out.add(new Threshold("cuda.fused.head_dim." + d, "sinks_attn arm (CUDA)", d, cudaLanes,
                    "flash_attn_sinks runs head_dim " + d + " (no mask, B < " + VARLEN_MIN_BATCH + ")"));
            out.add(new Threshold("metal.prefill.head_dim." + d, "sinks_attn arm (Metal, t_q > 1)", d, metalLanes,
                    "flash_attn_sinks_metal (prefill) runs head_dim " + d));
        }
        for (int d : new TreeSet<>(METAL_DECODE_HEAD_DIMS)) {
            out.add(new Threshold("metal.decode.head_dim." + d, "Metal kernel for t_q == 1", d, metalLanes,
                    "the Metal decode kernel runs head_dim " + d));
        }
        out.add(new Threshold("cuda.flash512.head_dim", "sinks_attn arm (CUDA) with ARC_FLASH_512 on/off",
                FLASH_512_HEAD_DIM, cudaLanes, "head_dim " + FLASH_512_HEAD_DIM + " is fused only with the switch on"));
        out.add(new Threshold("sinks.varlen.min_batch", "sinks_attn arm: varlen", VARLEN_MIN_BATCH, every,
                "varlen only with no mask and B >= " + VARLEN_MIN_BATCH));
        out.add(new Threshold("sinks.decode.max_q", "single-query kernel", DECODE_MAX_Q, metalLanes,
                "t_q <= " + DECODE_MAX_Q + " is a decode call"));
        out.add(new Threshold("cpu.engine.vector_min_macs", "CPU union engine: scalar below", CPU_VECTOR_MIN_MACS,
                List.of(CPU), "calls under " + CPU_VECTOR_MIN_MACS + " multiply-adds take the scalar engine"));
        out.add(new Threshold("cpu.engine.parallel_min_macs", "CPU union engine: fork-join from",
                CPU_PARALLEL_MIN_MACS, List.of(CPU), "calls of " + CPU_PARALLEL_MIN_MACS
                + " multiply-adds or more run in parallel"));
        out.add(new Threshold("cpu.union.tile", "CPU union kernel online-softmax tile", UNION_TILE, List.of(CPU),
                UNION_TILE + " admitted keys per tile"));
        out.add(new Threshold("native.block_q", "native fused kernels' row tile", NATIVE_BLOCK_Q,
                List.of(CUDA_EMU, METAL_EMU, CUDA, METAL), NATIVE_BLOCK_Q + " query rows per block"));
        out.add(new Threshold("native.block_k", "native fused kernels' key tile", NATIVE_BLOCK_K,
                List.of(CUDA_EMU, METAL_EMU, CUDA, METAL), NATIVE_BLOCK_K + " keys per tile"));
        out.add(new Threshold("split_k.min_keys", "split-K decode from", SPLIT_K_MIN_KEYS, every,
                "t_q == 1 and k_len >= " + SPLIT_K_MIN_KEYS + " split the keys"));
        out.add(new Threshold("split_k.chunk", "split-K chunk", SPLIT_K_CHUNK, every,
                SPLIT_K_CHUNK + " keys per chunk"));
        out.add(new Threshold("native.split_k.threads", "native split-K kernels' threads per row",
                NATIVE_SPLIT_K_THREADS, List.of(CUDA_EMU, METAL_EMU, CUDA, METAL),
                "head dims above " + NATIVE_SPLIT_K_THREADS + " give a thread a second output element"));
        out.add(new Threshold("cuda.native.max_head_dim", "CUDA varlen and split-K kernels vs unfused",
                CUDA_NATIVE_MAX_HEAD_DIM, List.of(CUDA_EMU, CUDA), "flash_attn_sinks_varlen and the split-K kernels"
                + " run head dims up to " + CUDA_NATIVE_MAX_HEAD_DIM + "; above, the unfused kernels"));
        out.add(new Threshold("metal.native.max_head_dim", "Metal varlen and split-K kernels vs unfused",
                METAL_NATIVE_MAX_HEAD_DIM, List.of(METAL_EMU, METAL), "flash_attn_sinks_varlen_metal and the"
                + " split-K kernels run head dims up to " + METAL_NATIVE_MAX_HEAD_DIM + "; above, the unfused kernels"));
        return Collections.unmodifiableList(out);
    }
}
