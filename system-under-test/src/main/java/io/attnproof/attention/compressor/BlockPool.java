package io.attnproof.attention.compressor;

/**
 * One compressed block in f32: per channel one max-subtracted softmax over the gate logits (score + ape), the
 * weighted sum of the values, then RMSNorm with gamma; prefill and streaming both call it, so they agree bit for bit.
 */
final class BlockPool {
    /** The RMSNorm epsilon. */
    static final float EPS = 1e-6f;

    private final int ratio;
    private final int headDim;
    private final float[][] ape;
    private final float[] gamma;

    BlockPool(CompressorWeights weights) {
        this.ratio = weights.ratio();
        this.headDim = weights.headDim();
        this.ape = weights.ape();
        this.gamma = weights.gamma();
    }

    int headDim() {
        return headDim;
    }

    /**
     * The block whose current tokens are rows {@code [from, from+R)} of {@code kv}/{@code score} and, for R = 4 past
     * block 0, whose earlier tokens are rows {@code [earlierFrom, earlierFrom+R)} of {@code earlierKv}/{@code
     * earlierScore} (null: no earlier half, weight 0). R = 128: term i has logit {@code score[d] + ape[i][d]} and
     * value {@code kv[d]}. R = 4: earlier token i has logit {@code score[d] + ape[i][d]}, value {@code kv[d]} (the
     * "a" half); current token i has logit {@code score[D+d] + ape[R+i][d]}, value {@code kv[D+d]} (the "b" half).
     */
    float[] pool(float[][] earlierKv, float[][] earlierScore, int earlierFrom, float[][] kv, float[][] score, int from) {
        boolean earlier = earlierKv != null;
        int half = ratio == 4 ? headDim : 0;
        int apeCurrent = ratio == 4 ? ratio : 0;
        int n = earlier ? 2 * ratio : ratio;
        float[] logit = new float[n];
        float[] e = new float[n];
        float[] pooled = new float[headDim];
        for (int d = 0; d < headDim; d++) {
            int k = 0;
            if (earlier) {
                for (int i = 0; i < ratio; i++) {
                    logit[k++] = earlierScore[earlierFrom + i][d] + ape[i][d];
                }
            }
            for (int i = 0; i < ratio; i++) {
                logit[k++] = score[from + i][half + d] + ape[apeCurrent + i][d];
            }
            float m = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < n; j++) {
                m = Math.max(m, logit[j]);
            }
            float sum = 0f;
            for (int j = 0; j < n; j++) {
                e[j] = (float) Math.exp(logit[j] - m);
                sum += e[j];
            }
            float acc = 0f;
            k = 0;
            if (earlier) {
                for (int i = 0; i < ratio; i++) {
                    acc += e[k++] / sum * earlierKv[earlierFrom + i][d];
                }
            }
            for (int i = 0; i < ratio; i++) {
                acc += e[k++] / sum * kv[from + i][half + d];
            }
            pooled[d] = acc;
        }
        return rmsNorm(pooled);
    }

    /** {@code out[d] = pooled[d] / sqrt(mean_d(pooled^2) + eps) * gamma[d]}. */
    private float[] rmsNorm(float[] pooled) {
        float sumSquares = 0f;
        for (float p : pooled) {
            sumSquares += p * p;
        }
        float inv = (float) (1.0 / Math.sqrt(sumSquares / headDim + EPS));
        float[] out = new float[headDim];
        for (int d = 0; d < headDim; d++) {
            out[d] = pooled[d] * inv * gamma[d];
        }
        return out;
    }
}
