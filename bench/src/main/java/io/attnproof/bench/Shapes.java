package io.attnproof.bench;

import io.attnproof.attention.dsv4.CompressRatio;

/**
 * The benchmarked V4 shapes and their useful floating-point work. H = 64 query heads, D = 512, W = 128, one shared
 * K = V head, F32, CSA (ratio 4) unless stated. Decode: t_q = 1 at context T = 4 t_c, the 128 raw keys of the window
 * passed after {@code rawPrefix = T - 128} absent ones, t_c compressed blocks (all admitted). Prefill: t_q = t_k =
 * 512, B = 1, t_c = 128. The 43-layer step: decode at T = 2048 over the V4 ratio schedule (layers 0 and 1 STANDARD,
 * even 2..42 CSA with t_c 512, odd 3..41 HCA with t_c 16).
 *
 * <p>Useful work counts 4 D flops per (query row, admitted key): 2 D for the score, 2 D for the PV term; masked keys,
 * exp, max and the normalisation are not counted. The same count divides the NumPy time.
 *
 * <p>Every timed fork fixes its young generation ({@code -Xmn128m}) beside {@code -Xms}: with a 2–4 GiB heap and no
 * {@code -Xmn}, G1 sizes eden near a gigabyte, and a benchmark allocating its output per call (136 KiB at decode
 * B = 1) walks through never-touched pages for the whole fork. On this machine (a Firecracker VM) a first touch costs
 * about 20 µs a page, so decode B = 1 t_c = 32 measured 0.85–1.1 ms a call with {@code -Xms3g -Xmx3g} and 0.24–0.34 ms
 * with {@code -Xmn128m} added (same code, same load). A small eden is reused after every young collection, as in a
 * long-running server; pre-touching the heap instead ({@code -XX:+AlwaysPreTouch}) costs 24 s a fork here.
 */
public final class Shapes {
    public static final int HEADS = 64;
    public static final int HEAD_DIM = 512;
    public static final int WINDOW = 128;
    public static final int RAW_KEYS = 128;
    public static final int PREFILL_TQ = 512;
    public static final int PREFILL_TC = 128;
    public static final int STEP_CONTEXT = 2048;
    public static final int STEP_LAYERS = 43;

    private Shapes() {
    }

    /** Context length of a decode benchmark with {@code tc} CSA blocks. */
    public static int decodeContext(int tc) {
        return 4 * tc;
    }

    /** Useful flops of one decode call: every key of the window and every block is admitted. */
    public static double decodeFlops(int batch, int tc) {
        return 4.0 * batch * HEADS * HEAD_DIM * (RAW_KEYS + tc);
    }

    /** Useful flops of the prefill call: row r admits min(r + 1, W) raw keys and min(tc, floor((r + 1) / 4)) blocks. */
    public static double prefillFlops() {
        double pairs = 0;
        for (int r = 0; r < PREFILL_TQ; r++) {
            pairs += Math.min(r + 1, WINDOW) + Math.min(PREFILL_TC, (r + 1) / 4);
        }
        return 4.0 * HEADS * HEAD_DIM * pairs;
    }

    /** Compressed blocks of a step layer at {@link #STEP_CONTEXT}. */
    public static int stepBlocks(CompressRatio ratio) {
        return ratio == CompressRatio.STANDARD ? 0 : STEP_CONTEXT / ratio.value();
    }

    /** Useful flops of one 43-layer decode step. */
    public static double stepFlops(int batch) {
        double pairs = 0;
        for (int layer = 0; layer < STEP_LAYERS; layer++) {
            pairs += RAW_KEYS + stepBlocks(CompressRatio.forV4Layer(layer));
        }
        return 4.0 * batch * HEADS * HEAD_DIM * pairs;
    }
}
