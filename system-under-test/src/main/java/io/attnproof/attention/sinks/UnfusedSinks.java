package io.attnproof.attention.sinks;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.Tensor;

/**
 * The unfused loops in f32: scores {@code (q . k) D^-0.5}, plus the additive masks (a {@code -inf} key is never
 * read), softmax with the sink in the denominator, times V. Applies no causality of its own: whatever rule a caller
 * wants arrives as a mask.
 */
final class UnfusedSinks {
    private UnfusedSinks() {
    }

    /**
     * Output {@code [B,Hq,tq,D]} of {@code call} over row-major {@code q[B,Hq,tq,D]}, {@code k, v[B,Hkv,tk,D]};
     * {@code rule} is {@code [tq, tk]} or null, {@code mask} is {@code [B|1, Hq|1, tq|1, tk]} or null.
     */
    static float[] attend(SinksCall call, float[] q, float[] k, float[] v, Tensor rule, Tensor mask) {
        int hq = call.queryHeads();
        int hkv = call.kvHeads();
        int tq = call.tq();
        int tk = call.tk();
        int d = call.headDim();
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] out = new float[call.batch() * hq * tq * d];
        float[] scores = new float[tk];
        float[] probs = new float[tk];
        for (int b = 0; b < call.batch(); b++) {
            for (int h = 0; h < hq; h++) {
                int kvh = h / call.group();
                int kvBase = (b * hkv + kvh) * tk * d;
                for (int r = 0; r < tq; r++) {
                    int qOff = ((b * hq + h) * tq + r) * d;
                    for (int c = 0; c < tk; c++) {
                        float add = (rule == null ? 0f : rule.flat(r * tk + c)) + maskAt(mask, b, h, r, c);
                        scores[c] = add == Float.NEGATIVE_INFINITY ? add
                                : dot(q, qOff, k, kvBase + c * d, d) * scale + add;
                    }
                    SoftmaxWithSinks.row(scores, 0, tk, call.sink()[h], probs, 0);
                    for (int c = 0; c < tk; c++) {
                        if (scores[c] != Float.NEGATIVE_INFINITY) {
                            axpy(probs[c], v, kvBase + c * d, out, qOff, d);
                        }
                    }
                }
            }
        }
        return out;
    }

    private static float maskAt(Tensor mask, int b, int h, int r, int c) {
        if (mask == null) {
            return 0f;
        }
        int mb = mask.dim(0) == 1 ? 0 : b;
        int mh = mask.dim(1) == 1 ? 0 : h;
        int mr = mask.dim(2) == 1 ? 0 : r;
        float x = mask.flat(((mb * mask.dim(1) + mh) * mask.dim(2) + mr) * mask.dim(3) + c);
        Require.that(!Float.isNaN(x) && x != Float.POSITIVE_INFINITY, "mask value", x, "be finite or -inf");
        return x;
    }

    private static float dot(float[] a, int aOff, float[] b, int bOff, int d) {
        float acc = 0f;
        for (int i = 0; i < d; i++) {
            acc += a[aOff + i] * b[bOff + i];
        }
        return acc;
    }

    private static void axpy(float alpha, float[] x, int xOff, float[] y, int yOff, int d) {
        for (int i = 0; i < d; i++) {
            y[yOff + i] += alpha * x[xOff + i];
        }
    }
}
