package io.attnproof.oracles;

import org.apache.commons.math3.util.MathArrays;

/** GPT-OSS-style sinks attention (docs/system.md §8) as naive loops: GQA head mapping, bottom-right-aligned causality
    and window, optional additive mask, the sink in the denominator only. The fp64 ground truth. */
public final class SinksAttentionOracle {
    private SinksAttentionOracle() {}

    /** The causal rule, written from the formula: with kvOffset = tk - tq, row r admits key j iff
        j <= r + kvOffset and, when window > 0, j >= r + kvOffset - window + 1. window 0 means no window. */
    public static boolean causalAdmits(int r, int j, int tq, int tk, int window) {
        Require.atLeast("window", window, 0);
        long diagonal = (long) r + tk - tq;
        return j <= diagonal && (window == 0 || j > diagonal - window);
    }

    /** The KV head query head h reads: h / (Hq / Hkv). */
    public static int kvHead(int h, int queryHeads, int kvHeads) {
        Require.atLeast("kvHeads", kvHeads, 1);
        Require.that(queryHeads % kvHeads == 0, "queryHeads = " + queryHeads + " must be a multiple of kvHeads = "
                + kvHeads);
        return h / (queryHeads / kvHeads);
    }

    /** fp64 sinks attention: logits (q . k) * D^-0.5 + mask over the keys the causal rule admits (all keys when
        the problem is not causal), one softmax with the sink in the denominator only (SinkSoftmax.closedForm),
        output sum_j y_j v_j; keys not attended are never read. Returns [B][Hq][tq][D]. */
    public static double[][][][] attend(SinksProblem problem) {
        int d = problem.headDim();
        double[][][][] out = new double[problem.batch()][problem.queryHeads()][problem.tq()][d];
        for (int b = 0; b < problem.batch(); b++) {
            for (int h = 0; h < problem.queryHeads(); h++) {
                int kvh = kvHead(h, problem.queryHeads(), problem.kvHeads());
                for (int r = 0; r < problem.tq(); r++) {
                    double[] s = logits(problem, b, h, r);
                    double[] y = SinkSoftmax.closedForm(s, sink(problem, h));
                    for (int j = 0; j < s.length; j++) {
                        if (s[j] == Double.NEGATIVE_INFINITY) {
                            continue;
                        }
                        double[] value = problem.v()[b][kvh][j];
                        for (int i = 0; i < d; i++) {
                            out[b][h][r][i] += y[j] * value[i];
                        }
                    }
                }
            }
        }
        return out;
    }

    /** Logits row of query (b, h, r) over all tk keys, -inf where the rule or the mask excludes the key. */
    public static double[] logits(SinksProblem problem, int b, int h, int r) {
        Require.that(b >= 0 && b < problem.batch(), "b = " + b + " must be in [0, " + problem.batch() + ")");
        Require.that(h >= 0 && h < problem.queryHeads(), "h = " + h + " must be in [0, " + problem.queryHeads() + ")");
        Require.that(r >= 0 && r < problem.tq(), "r = " + r + " must be in [0, " + problem.tq() + ")");
        int kvh = kvHead(h, problem.queryHeads(), problem.kvHeads());
        double scale = 1.0 / Math.sqrt(problem.headDim());
        double[] s = new double[problem.tk()];
        for (int j = 0; j < s.length; j++) {
            double mask = maskAt(problem, b, h, r, j);
            s[j] = mask == Double.NEGATIVE_INFINITY ? mask
                    : MathArrays.linearCombination(problem.q()[b][h][r], problem.k()[b][kvh][j]) * scale + mask;
        }
        return s;
    }

    /** The same math done naively at {@code precision} (see UnionAttentionOracle.attendNaive): inputs rounded to
        the precision, matmuls accumulated in the accumulator precision (F32 for 16-bit formats) and rounded,
        softmax in the accumulator precision with probabilities rounded to the precision. */
    public static double[][][][] attendNaive(SinksProblem problem, Precision precision) {
        return attendNaive(problem, precision, NaiveTier.COMPATIBILITY);
    }

    /** {@link #attendNaive(SinksProblem, Precision)} at {@code tier}: CONTRACT keeps logits and probabilities in f32. */
    public static double[][][][] attendNaive(SinksProblem problem, Precision precision, NaiveTier tier) {
        Require.that(precision != null, "precision must not be null");
        Require.that(tier != null, "tier must not be null");
        Precision acc = precision == Precision.F16 || precision == Precision.BF16 ? Precision.F32 : precision;
        Precision inter = tier.intermediates(precision, acc);
        int d = problem.headDim();
        int n = problem.tk();
        double scale = acc.round(1.0 / Math.sqrt(d));
        double[][][][] out = new double[problem.batch()][problem.queryHeads()][problem.tq()][d];
        for (int b = 0; b < problem.batch(); b++) {
            for (int h = 0; h < problem.queryHeads(); h++) {
                int kvh = kvHead(h, problem.queryHeads(), problem.kvHeads());
                double sink = acc.round(sink(problem, h));
                for (int r = 0; r < problem.tq(); r++) {
                    double[] qv = problem.q()[b][h][r];
                    double[] s = new double[n];
                    double m = sink;
                    for (int j = 0; j < n; j++) {
                        double mask = maskAt(problem, b, h, r, j);
                        if (mask == Double.NEGATIVE_INFINITY) {
                            s[j] = mask;
                            continue;
                        }
                        double[] key = problem.k()[b][kvh][j];
                        double dot = 0;
                        for (int i = 0; i < d; i++) {
                            dot = acc.round(dot + acc.round(precision.round(qv[i]) * precision.round(key[i])));
                        }
                        s[j] = inter.round(acc.round(dot * scale) + precision.round(mask));
                        m = Math.max(m, s[j]);
                    }
                    if (m == Double.NEGATIVE_INFINITY) {
                        continue;
                    }
                    double[] e = new double[n];
                    double denominator = acc.round(Math.exp(acc.round(sink - m)));
                    for (int j = 0; j < n; j++) {
                        e[j] = acc.round(Math.exp(acc.round(s[j] - m)));
                        denominator = acc.round(denominator + e[j]);
                    }
                    double[] o = out[b][h][r];
                    for (int j = 0; j < n; j++) {
                        if (s[j] == Double.NEGATIVE_INFINITY) {
                            continue;
                        }
                        double y = inter.round(acc.round(e[j] / denominator));
                        double[] value = problem.v()[b][kvh][j];
                        for (int i = 0; i < d; i++) {
                            o[i] = acc.round(o[i] + acc.round(y * precision.round(value[i])));
                        }
                    }
                    for (int i = 0; i < d; i++) {
                        o[i] = precision.round(o[i]);
                    }
                }
            }
        }
        return out;
    }

    /** Key j's additive mask for query (b, h, r): -inf if the causal rule excludes it, else the mask's value. */
    private static double maskAt(SinksProblem problem, int b, int h, int r, int j) {
        if (problem.causal() && !causalAdmits(r, j, problem.tq(), problem.tk(), problem.window())) {
            return Double.NEGATIVE_INFINITY;
        }
        double[][][][] m = problem.mask();
        if (m == null) {
            return 0.0;
        }
        double[][][] mb = m[m.length == 1 ? 0 : b];
        double[][] mh = mb[mb.length == 1 ? 0 : h];
        return mh[mh.length == 1 ? 0 : r][j];
    }

    private static double sink(SinksProblem problem, int h) {
        return problem.sinks() == null ? Double.NEGATIVE_INFINITY : problem.sinks()[h];
    }
}
