package io.attnproof.attention.engine;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * Softmax with a per-head attention sink in the denominator only:
 * {@code y_k = e^{x_k - m} / (e^{sink_h - m} + sum_j e^{x_j - m})} with {@code m = max(sink_h, max_k x_k)}, the
 * mask added first, accumulated in f32. Starting the running max at the sink makes a fully masked row zeros,
 * never NaN; a -inf sink is no sink.
 */
public final class SoftmaxWithSinks {
    private SoftmaxWithSinks() {
    }

    /** {@code softmax_with_sinks(logits[b,h,q,k], sinks[h], mask)}; mask may be null or broadcast on b, h and q. */
    public static Tensor apply(Tensor logits, Tensor sinks, Tensor mask) {
        Require.present("logits", logits);
        Require.that(logits.rank() == 4, "logits.rank", logits.rank(), "be 4 [b, h, q, k]");
        int b = logits.dim(0);
        int h = logits.dim(1);
        int q = logits.dim(2);
        int k = logits.dim(3);
        float[] sink = sinkValues(sinks, h);
        if (mask != null) {
            Require.that(mask.rank() == 4, "mask.rank", mask.rank(), "be 4 [b|1, h|1, q|1, k]");
            int[] ms = mask.shape();
            Require.that((ms[0] == 1 || ms[0] == b) && (ms[1] == 1 || ms[1] == h) && (ms[2] == 1 || ms[2] == q)
                    && ms[3] == k, "mask.shape", ms, "broadcast to logits shape " + Arrays.toString(logits.shape()));
        }
        float[] x = new float[k];
        float[] y = new float[k];
        float[] out = new float[logits.numel()];
        for (int bi = 0; bi < b; bi++) {
            for (int hi = 0; hi < h; hi++) {
                for (int qi = 0; qi < q; qi++) {
                    int row = ((bi * h + hi) * q + qi) * k;
                    for (int c = 0; c < k; c++) {
                        x[c] = logits.flat(row + c);
                        if (mask != null) {
                            x[c] += mask.get(mask.dim(0) == 1 ? 0 : bi, mask.dim(1) == 1 ? 0 : hi,
                                    mask.dim(2) == 1 ? 0 : qi, c);
                        }
                    }
                    row(x, 0, k, sink[hi], y, 0);
                    System.arraycopy(y, 0, out, row, k);
                }
            }
        }
        return Tensor.of(out, logits.dtype(), logits.device(), logits.shape());
    }

    /** Validated sink logits {@code [heads]}: finite, or -inf for "no sink"; NaN and +inf are refused. */
    public static float[] sinkValues(Tensor sinks, int heads) {
        Require.present("sinks", sinks);
        Require.that(sinks.rank() == 1 && sinks.dim(0) == heads, "sinks.shape", sinks.shape(),
                "be [" + heads + "], one logit per query head");
        float[] s = sinks.toFloatArray();
        for (int i = 0; i < s.length; i++) {
            Require.that(!Float.isNaN(s[i]) && s[i] != Float.POSITIVE_INFINITY, "sinks[" + i + "]", s[i],
                    "be finite (or -inf for no sink)");
        }
        return s;
    }

    /** One row in place of the kernel: {@code y[yOff..yOff+n) = softmax_with_sink(x[xOff..xOff+n), sink)}. */
    public static void row(float[] x, int xOff, int n, float sink, float[] y, int yOff) {
        float m = sink;
        for (int c = 0; c < n; c++) {
            m = Math.max(m, x[xOff + c]);
        }
        if (sink == Float.NEGATIVE_INFINITY && m == Float.NEGATIVE_INFINITY) {
            // No sink and nothing admitted; with a sink, m >= sink is finite and the loops below give zeros.
            Arrays.fill(y, yOff, yOff + n, 0f);
            return;
        }
        float denom = (float) Math.exp(sink - m);
        for (int c = 0; c < n; c++) {
            float e = (float) Math.exp(x[xOff + c] - m);
            y[yOff + c] = e;
            denom += e;
        }
        for (int c = 0; c < n; c++) {
            y[yOff + c] /= denom;
        }
    }
}
