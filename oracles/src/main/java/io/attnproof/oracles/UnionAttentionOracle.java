package io.attnproof.oracles;

import java.util.Arrays;
import org.apache.commons.math3.util.MathArrays;

/** Union attention (docs/system.md §4) as naive loops over absolute positions: the fp64 ground truth. */
public final class UnionAttentionOracle {
    private UnionAttentionOracle() {}

    /** fp64 union attention: for query (b,h,r) at p = q0 + r, admitted raw keys j in [rawPrefix, tkFull) with
        AdmitRules.rawAdmits(p, j, window), admitted compressed blocks b' with compressedAdmits(p, b', ratio)
        (none when ratio == 0), logits = (q . key) * D^-0.5 + callerMask, one softmax with the sink in the
        denominator only (SinkSoftmax.closedForm), output sum_k y_k v_k where a compressed block's value is the
        compressed vector itself (K = V for compressed). Dot products through MathArrays.linearCombination.
        Returns [B][H][tq][D]. */
    public static double[][][][] attend(UnionProblem problem) {
        int d = problem.headDim();
        double[][][][] out = new double[problem.batch()][problem.heads()][problem.tq()][d];
        for (int b = 0; b < problem.batch(); b++) {
            for (int h = 0; h < problem.heads(); h++) {
                for (int r = 0; r < problem.tq(); r++) {
                    double[] s = logits(problem, b, h, r);
                    double[] y = SinkSoftmax.closedForm(s, sink(problem, h));
                    for (int c = 0; c < s.length; c++) {
                        if (s[c] == Double.NEGATIVE_INFINITY) {
                            continue;   // never read a key that is not attended (NaN canaries stay unread)
                        }
                        double[] value = value(problem, b, c);
                        for (int i = 0; i < d; i++) {
                            out[b][h][r][i] += y[c] * value[i];
                        }
                    }
                }
            }
        }
        return out;
    }

    /** The same math done naively at `precision`, the way a framework reference runs at that dtype
        (FlashAttention's attention_ref without upcast): inputs in the precision; each matmul (QK^T, PV)
        accumulates in the accumulator precision (F32 for the 16-bit formats, else the precision itself) and
        rounds its result to the precision; the softmax runs in the accumulator precision and its probabilities
        are rounded to the precision. Plain loops, no linearCombination; F64 equals attend() to ~1e-12.
        This is the "naive same-precision implementation" the tolerance rule compares against. */
    public static double[][][][] attendNaive(UnionProblem problem, Precision precision) {
        return attendNaive(problem, precision, NaiveTier.COMPATIBILITY);
    }

    /** {@link #attendNaive(UnionProblem, Precision)} at {@code tier}: CONTRACT keeps logits and probabilities in f32. */
    public static double[][][][] attendNaive(UnionProblem problem, Precision precision, NaiveTier tier) {
        Require.that(precision != null, "precision must not be null");
        Require.that(tier != null, "tier must not be null");
        Precision acc = precision == Precision.F16 || precision == Precision.BF16 ? Precision.F32 : precision;
        Precision inter = tier.intermediates(precision, acc);
        int d = problem.headDim();
        int n = (int) problem.tkFull() + problem.tc();
        double scale = acc.round(1.0 / Math.sqrt(d));
        double[][][][] out = new double[problem.batch()][problem.heads()][problem.tq()][d];
        for (int b = 0; b < problem.batch(); b++) {
            for (int h = 0; h < problem.heads(); h++) {
                double sink = acc.round(sink(problem, h));
                for (int r = 0; r < problem.tq(); r++) {
                    double[] qv = problem.q()[b][h][r];
                    double[] s = new double[n];
                    double m = sink;
                    for (int c = 0; c < n; c++) {
                        double mask = admittedMask(problem, b, r, c);
                        if (mask == Double.NEGATIVE_INFINITY) {
                            s[c] = mask;
                            continue;
                        }
                        double[] key = key(problem, b, c);
                        double dot = 0;
                        for (int i = 0; i < d; i++) {
                            dot = acc.round(dot + acc.round(precision.round(qv[i]) * precision.round(key[i])));
                        }
                        s[c] = inter.round(acc.round(dot * scale) + precision.round(mask));
                        m = Math.max(m, s[c]);
                    }
                    if (m == Double.NEGATIVE_INFINITY) {
                        continue;   // nothing attended and no sink: zeros
                    }
                    double[] e = new double[n];
                    double denominator = acc.round(Math.exp(acc.round(sink - m)));
                    for (int c = 0; c < n; c++) {
                        e[c] = acc.round(Math.exp(acc.round(s[c] - m)));
                        denominator = acc.round(denominator + e[c]);
                    }
                    double[] o = out[b][h][r];
                    for (int c = 0; c < n; c++) {
                        if (s[c] == Double.NEGATIVE_INFINITY) {
                            continue;
                        }
                        double y = inter.round(acc.round(e[c] / denominator));
                        double[] value = value(problem, b, c);
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

    /** Logits row for one query, all keys (raw absolute 0..tkFull-1 then compressed), -inf where not admitted
        or not present (j < rawPrefix). Useful for tests. */
    public static double[] logits(UnionProblem problem, int b, int h, int r) {
        Require.that(b >= 0 && b < problem.batch(), "b = " + b + " must be in [0, " + problem.batch() + ")");
        Require.that(h >= 0 && h < problem.heads(), "h = " + h + " must be in [0, " + problem.heads() + ")");
        Require.that(r >= 0 && r < problem.tq(), "r = " + r + " must be in [0, " + problem.tq() + ")");
        double scale = 1.0 / Math.sqrt(problem.headDim());
        double[] s = new double[(int) problem.tkFull() + problem.tc()];
        Arrays.fill(s, Double.NEGATIVE_INFINITY);
        for (int c = 0; c < s.length; c++) {
            double mask = admittedMask(problem, b, r, c);
            if (mask != Double.NEGATIVE_INFINITY) {
                s[c] = MathArrays.linearCombination(problem.q()[b][h][r], key(problem, b, c)) * scale + mask;
            }
        }
        return s;
    }

    /** Column c's additive mask for row r: -inf unless the key is present and both rules admit it, else the caller's value. */
    private static double admittedMask(UnionProblem problem, int b, int r, int c) {
        long p = problem.q0() + r;
        long tkFull = problem.tkFull();
        boolean admitted = c < tkFull
                ? c >= problem.rawPrefix() && AdmitRules.rawAdmits(p, c, problem.window())
                : AdmitRules.compressedAdmits(p, c - tkFull, problem.ratio());
        if (!admitted) {
            return Double.NEGATIVE_INFINITY;
        }
        double[][][] cm = problem.callerMask();
        if (cm == null) {
            return 0.0;
        }
        double[][] rows = cm[cm.length == 1 ? 0 : b];
        return rows[rows.length == 1 ? 0 : r][c];
    }

    /** Head h's sink logit; -inf when the problem has no sinks. */
    private static double sink(UnionProblem problem, int h) {
        return problem.sinks() == null ? Double.NEGATIVE_INFINITY : problem.sinks()[h];
    }

    /** Key vector of column c: a raw key, or the compressed block itself. */
    private static double[] key(UnionProblem problem, int b, int c) {
        long tkFull = problem.tkFull();
        return c < tkFull ? problem.k()[b][c - problem.rawPrefix()] : problem.compressed()[b][(int) (c - tkFull)];
    }

    /** Value vector of column c: a raw value, or the compressed block itself (K = V). */
    private static double[] value(UnionProblem problem, int b, int c) {
        long tkFull = problem.tkFull();
        return c < tkFull ? problem.v()[b][c - problem.rawPrefix()] : problem.compressed()[b][(int) (c - tkFull)];
    }
}
