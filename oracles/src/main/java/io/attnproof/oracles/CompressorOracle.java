package io.attnproof.oracles;

import java.util.ArrayList;
import java.util.List;

/**
 * The V4 key compressor (docs/system.md §3) as naive fp64 loops over blocks and channels: the ground truth for claim K2.
 *
 * <p>Ratio R in {4, 128}, head dim D even. Token t brings a value {@code kv[t]} and a gate {@code score[t]}, both
 * of width D (R = 128) or 2D (R = 4). Prefill of T tokens gives floor(T/R) blocks; block b is, per channel d in
 * [0, D), one softmax over its terms (logit, value), then RMSNorm:
 * <ul>
 *   <li>R = 128: term i = 0..R-1 is token bR + i with logit {@code score[d] + ape[i][d]} and value {@code kv[d]};
 *   <li>R = 4: term i = 0..R-1 is earlier-block token (b-1)R + i with logit {@code score[d] + ape[i][d]} and value
 *       {@code kv[d]} (the "a" half; absent when b = 0, i.e. weight 0), and term R + i is current-block token
 *       bR + i with logit {@code score[D+d] + ape[R+i][d]} and value {@code kv[D+d]} (the "b" half);
 *   <li>{@code out[d] = pooled[d] / sqrt(mean_d(pooled^2) + 1e-6) * gamma[d]}.
 * </ul>
 * ape is {@code [R][D]} for R = 128 and {@code [2R][D]} for R = 4; gamma is {@code [D]}.
 */
public final class CompressorOracle {
    /** The RMSNorm epsilon. */
    public static final double EPS = 1e-6;

    private CompressorOracle() {}

    /** The compressed blocks {@code [floor(T/R)][D]} of a prefill of T = kv.length tokens, in fp64. */
    public static double[][] compress(double[][] kv, double[][] score, double[][] ape, double[] gamma, int ratio,
            int headDim) {
        check(kv, score, ape, gamma, ratio, headDim);
        int blocks = kv.length / ratio;
        double[][] out = new double[blocks][];
        for (int b = 0; b < blocks; b++) {
            double[] pooled = new double[headDim];
            for (int d = 0; d < headDim; d++) {
                List<double[]> terms = terms(kv, score, ape, ratio, headDim, b, d);
                double[] w = softmax(terms);
                for (int i = 0; i < w.length; i++) {
                    pooled[d] += w[i] * terms.get(i)[1];
                }
            }
            double sumSquares = 0;
            for (double p : pooled) {
                sumSquares += p * p;
            }
            double inv = 1.0 / Math.sqrt(sumSquares / headDim + EPS);
            out[b] = new double[headDim];
            for (int d = 0; d < headDim; d++) {
                out[b][d] = pooled[d] * inv * gamma[d];
            }
        }
        return out;
    }

    /**
     * The gate weights {@code [floor(T/R)][D][terms]} of every block and channel, in the term order of the class
     * comment (R = 4: the R earlier-block terms, absent for b = 0, then the R current-block terms); each sums to 1.
     */
    public static double[][][] gateWeights(double[][] score, double[][] ape, int ratio, int headDim) {
        checkGeometry(ratio, headDim);
        Require.that(score != null, "score must not be null");
        double[][] kv = new double[score.length][width(ratio, headDim)];   // values do not enter the weights
        check(kv, score, ape, new double[headDim], ratio, headDim);
        int blocks = kv.length / ratio;
        double[][][] out = new double[blocks][headDim][];
        for (int b = 0; b < blocks; b++) {
            for (int d = 0; d < headDim; d++) {
                out[b][d] = softmax(terms(kv, score, ape, ratio, headDim, b, d));
            }
        }
        return out;
    }

    /**
     * The same math done naively at {@code precision}: inputs rounded to it, every logit, exponential, sum,
     * weight, product and accumulation rounded to it (max-subtraction softmax, weights normalised before pooling),
     * RMSNorm with every step rounded. This is the "naive same-precision implementation" of the tolerance rule.
     */
    public static double[][] compressNaive(double[][] kv, double[][] score, double[][] ape, double[] gamma, int ratio,
            int headDim, Precision precision) {
        check(kv, score, ape, gamma, ratio, headDim);
        Require.that(precision != null, "precision must not be null");
        Precision p = precision;
        int blocks = kv.length / ratio;
        double[][] out = new double[blocks][];
        for (int b = 0; b < blocks; b++) {
            double[] pooled = new double[headDim];
            for (int d = 0; d < headDim; d++) {
                List<double[]> terms = terms(kv, score, ape, ratio, headDim, b, d);
                double[] logit = new double[terms.size()];
                double m = Double.NEGATIVE_INFINITY;
                for (int i = 0; i < logit.length; i++) {
                    logit[i] = p.round(p.round(terms.get(i)[0]) + p.round(terms.get(i)[2]));
                    m = Math.max(m, logit[i]);
                }
                double[] e = new double[logit.length];
                double sum = 0;
                for (int i = 0; i < e.length; i++) {
                    e[i] = p.round(Math.exp(p.round(logit[i] - m)));
                    sum = p.round(sum + e[i]);
                }
                double acc = 0;
                for (int i = 0; i < e.length; i++) {
                    acc = p.round(acc + p.round(p.round(e[i] / sum) * p.round(terms.get(i)[1])));
                }
                pooled[d] = acc;
            }
            double sumSquares = 0;
            for (double x : pooled) {
                sumSquares = p.round(sumSquares + p.round(x * x));
            }
            double inv = p.round(1.0 / p.round(Math.sqrt(p.round(p.round(sumSquares / headDim) + p.round(EPS)))));
            out[b] = new double[headDim];
            for (int d = 0; d < headDim; d++) {
                out[b][d] = p.round(p.round(pooled[d] * inv) * p.round(gamma[d]));
            }
        }
        return out;
    }

    /** Width of kv_t and score_t: D for R = 128, 2D (the "a" and "b" halves) for R = 4. */
    public static int width(int ratio, int headDim) {
        return ratio == 4 ? 2 * headDim : headDim;
    }

    /** Rows of ape: R for R = 128, 2R for R = 4. */
    public static int apeRows(int ratio) {
        return ratio == 4 ? 2 * ratio : ratio;
    }

    /**
     * The softmax terms of block b, channel d, each {@code {gate, value, ape}} with logit gate + ape: R = 128 the R
     * tokens of block b; R = 4 the R earlier-block "a" terms (none for b = 0), then the R current-block "b" terms.
     */
    private static List<double[]> terms(double[][] kv, double[][] score, double[][] ape, int ratio, int headDim, int b,
            int d) {
        List<double[]> terms = new ArrayList<>(2 * ratio);
        if (ratio == 128) {
            for (int i = 0; i < ratio; i++) {
                int t = b * ratio + i;
                terms.add(new double[] {score[t][d], kv[t][d], ape[i][d]});
            }
            return terms;
        }
        if (b > 0) {
            for (int i = 0; i < ratio; i++) {
                int t = (b - 1) * ratio + i;
                terms.add(new double[] {score[t][d], kv[t][d], ape[i][d]});
            }
        }
        for (int i = 0; i < ratio; i++) {
            int t = b * ratio + i;
            terms.add(new double[] {score[t][headDim + d], kv[t][headDim + d], ape[ratio + i][d]});
        }
        return terms;
    }

    /** softmax over the logits gate + ape of {@code terms}, with max-subtraction. */
    private static double[] softmax(List<double[]> terms) {
        double m = Double.NEGATIVE_INFINITY;
        for (double[] term : terms) {
            m = Math.max(m, term[0] + term[2]);
        }
        double[] w = new double[terms.size()];
        double sum = 0;
        for (int i = 0; i < w.length; i++) {
            w[i] = Math.exp(terms.get(i)[0] + terms.get(i)[2] - m);
            sum += w[i];
        }
        for (int i = 0; i < w.length; i++) {
            w[i] /= sum;
        }
        return w;
    }

    private static void checkGeometry(int ratio, int headDim) {
        Require.that(ratio == 4 || ratio == 128, "ratio = " + ratio + " must be 4 or 128 (ratio-0 layers have no compressor)");
        Require.that(headDim >= 2 && headDim % 2 == 0, "headDim = " + headDim + " must be even and >= 2");
    }

    private static void check(double[][] kv, double[][] score, double[][] ape, double[] gamma, int ratio, int headDim) {
        checkGeometry(ratio, headDim);
        Require.that(kv != null && score != null && ape != null && gamma != null,
                "kv, score, ape, gamma must all be non-null");
        Require.that(kv.length == score.length, "score.length = " + score.length + " must equal kv.length = " + kv.length);
        int width = width(ratio, headDim);
        for (int t = 0; t < kv.length; t++) {
            finiteRow("kv[" + t + "]", kv[t], width);
            finiteRow("score[" + t + "]", score[t], width);
        }
        Require.that(ape.length == apeRows(ratio), "ape.length = " + ape.length + " must be " + apeRows(ratio)
                + " for ratio " + ratio);
        for (int i = 0; i < ape.length; i++) {
            finiteRow("ape[" + i + "]", ape[i], headDim);
        }
        finiteRow("gamma", gamma, headDim);
    }

    private static void finiteRow(String name, double[] row, int width) {
        Require.that(row != null && row.length == width, name + ".length = " + (row == null ? "null" : row.length)
                + " must be " + width);
        for (int i = 0; i < row.length; i++) {
            Require.that(Double.isFinite(row[i]), name + "[" + i + "] = " + row[i] + " must be finite");
        }
    }
}
