package io.attnproof.attention.dsv4;

import io.attnproof.attention.sinks.SoftmaxWithSinks;
import io.attnproof.attention.tensor.Tensor;

/**
 * The score / softmax-with-sink / PV loops of union attention in f32; both paths take the same dot products.
 * A column masked to -inf is never read (no dot product, no PV term), so padded slots may hold anything.
 */
final class UnionKernel {
    private UnionKernel() {
    }

    /** Every query head against the single K/V head, row by row. */
    static float[] repeatKv(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink) {
        int batch = q.dim(0);
        int heads = q.dim(1);
        int tq = q.dim(2);
        int d = q.dim(3);
        int n = keys.dim(2);
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] qa = q.toFloatArray();
        float[] ka = keys.toFloatArray();
        float[] va = values.toFloatArray();
        float[] ma = mask.toFloatArray();
        float[] out = new float[batch * heads * tq * d];
        float[] scores = new float[n];
        float[] probs = new float[n];
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < heads; h++) {
                for (int r = 0; r < tq; r++) {
                    int qOff = ((b * heads + h) * tq + r) * d;
                    int mOff = maskRow(mask, b, h, r);
                    for (int c = 0; c < n; c++) {
                        float m = ma[mOff + c];
                        scores[c] = m == Float.NEGATIVE_INFINITY ? m : dot(qa, qOff, ka, (b * n + c) * d, d) * scale + m;
                    }
                    SoftmaxWithSinks.row(scores, 0, n, sink == null ? Float.NEGATIVE_INFINITY : sink[h], probs, 0);
                    for (int c = 0; c < n; c++) {
                        if (ma[mOff + c] != Float.NEGATIVE_INFINITY) {
                            axpy(probs[c], va, (b * n + c) * d, out, qOff, d);
                        }
                    }
                }
            }
        }
        return out;
    }

    /** Decode: the H query heads are the rows of one MQA head, scored key by key against the shared K. */
    static float[] absorbedMqa(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink) {
        int batch = q.dim(0);
        int heads = q.dim(1);
        int d = q.dim(3);
        int n = keys.dim(2);
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] qa = q.toFloatArray();
        float[] ka = keys.toFloatArray();
        float[] va = values.toFloatArray();
        float[] ma = mask.toFloatArray();
        float[] out = new float[batch * heads * d];
        float[] scores = new float[heads * n];
        float[] probs = new float[heads * n];
        for (int b = 0; b < batch; b++) {
            for (int c = 0; c < n; c++) {
                int kOff = (b * n + c) * d;
                for (int h = 0; h < heads; h++) {
                    float m = ma[maskRow(mask, b, h, 0) + c];
                    scores[h * n + c] = m == Float.NEGATIVE_INFINITY ? m : dot(qa, (b * heads + h) * d, ka, kOff, d) * scale + m;
                }
            }
            for (int h = 0; h < heads; h++) {
                SoftmaxWithSinks.row(scores, h * n, n, sink[h], probs, h * n);
            }
            for (int c = 0; c < n; c++) {
                int vOff = (b * n + c) * d;
                for (int h = 0; h < heads; h++) {
                    if (ma[maskRow(mask, b, h, 0) + c] != Float.NEGATIVE_INFINITY) {
                        axpy(probs[h * n + c], va, vOff, out, (b * heads + h) * d, d);
                    }
                }
            }
        }
        return out;
    }

    private static int maskRow(Tensor mask, int b, int h, int r) {
        int mb = mask.dim(0) == 1 ? 0 : b;
        int mh = mask.dim(1) == 1 ? 0 : h;
        return ((mb * mask.dim(1) + mh) * mask.dim(2) + r) * mask.dim(3);
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
