package io.attnproof.oracles;

/**
 * The precision-contract reference of CLAIMS.md's second tier for F16/BF16 (a stand-in written for issue 13 until the
 * tier of issue 10 lands here): a same-dtype reference that takes its inputs rounded to the dtype and rounds its
 * output to the dtype, but keeps the logits, the softmax and the probabilities in f32 (every operation rounded to
 * f32, P.V accumulated in f32). A kernel that rounds its scores or probabilities to the dtype lands further from the
 * fp64 oracle than twice this reference's error plus twice the noise floor.
 */
public final class ContractReference {
    private ContractReference() {}

    /** Union attention (SYSTEM.md §4) under the precision contract of {@code precision}; [B][H][tq][D]. */
    public static double[][][][] union(UnionProblem problem, Precision precision) {
        Require.that(precision != null, "precision must not be null");
        int d = problem.headDim();
        long tkFull = problem.tkFull();
        double[][][][] out = new double[problem.batch()][problem.heads()][problem.tq()][d];
        UnionProblem rp = rounded(problem, precision);
        for (int b = 0; b < problem.batch(); b++) {
            for (int h = 0; h < problem.heads(); h++) {
                double sink = problem.sinks() == null ? Double.NEGATIVE_INFINITY : problem.sinks()[h];
                for (int r = 0; r < problem.tq(); r++) {
                    double[] s = UnionAttentionOracle.logits(rp, b, h, r);
                    double[][] values = new double[s.length][];
                    for (int c = 0; c < s.length; c++) {
                        if (s[c] != Double.NEGATIVE_INFINITY) {
                            values[c] = c < tkFull ? problem.v()[b][(int) (c - problem.rawPrefix())]
                                    : problem.compressed()[b][(int) (c - tkFull)];
                        }
                    }
                    out[b][h][r] = row(s, sink, values, d, precision);
                }
            }
        }
        return out;
    }

    /** GPT-OSS sinks attention (SYSTEM.md §8) under the precision contract of {@code precision}; [B][Hq][tq][D]. */
    public static double[][][][] sinks(SinksProblem problem, Precision precision) {
        Require.that(precision != null, "precision must not be null");
        int d = problem.headDim();
        double[][][][] out = new double[problem.batch()][problem.queryHeads()][problem.tq()][d];
        SinksProblem p = new SinksProblem(round(problem.q(), precision), round(problem.k(), precision), problem.v(),
                problem.sinks(), problem.mask(), problem.window(), problem.causal());
        for (int b = 0; b < problem.batch(); b++) {
            for (int h = 0; h < problem.queryHeads(); h++) {
                int kvh = SinksAttentionOracle.kvHead(h, problem.queryHeads(), problem.kvHeads());
                double sink = problem.sinks() == null ? Double.NEGATIVE_INFINITY : problem.sinks()[h];
                for (int r = 0; r < problem.tq(); r++) {
                    double[] s = SinksAttentionOracle.logits(p, b, h, r);
                    double[][] values = new double[s.length][];
                    for (int j = 0; j < s.length; j++) {
                        if (s[j] != Double.NEGATIVE_INFINITY) {
                            values[j] = problem.v()[b][kvh][j];
                        }
                    }
                    out[b][h][r] = row(s, sink, values, d, precision);
                }
            }
        }
        return out;
    }

    /** One output row: f32 logits, f32 softmax with the sink in the denominator, f32 P.V, output rounded. */
    private static double[] row(double[] logits, double sink, double[][] values, int d, Precision precision) {
        Precision f32 = Precision.F32;
        double m = f32.round(sink);
        double[] s = new double[logits.length];
        for (int c = 0; c < s.length; c++) {
            s[c] = f32.round(logits[c]);
            m = Math.max(m, s[c]);
        }
        double[] o = new double[d];
        if (m == Double.NEGATIVE_INFINITY) {
            return o;
        }
        double denominator = f32.round(Math.exp(f32.round(f32.round(sink) - m)));
        double[] e = new double[s.length];
        for (int c = 0; c < s.length; c++) {
            e[c] = f32.round(Math.exp(f32.round(s[c] - m)));
            denominator = f32.round(denominator + e[c]);
        }
        for (int c = 0; c < s.length; c++) {
            if (values[c] == null) {
                continue;
            }
            double y = f32.round(e[c] / denominator);
            for (int i = 0; i < d; i++) {
                o[i] = f32.round(o[i] + f32.round(y * precision.round(values[c][i])));
            }
        }
        for (int i = 0; i < d; i++) {
            o[i] = precision.round(o[i]);
        }
        return o;
    }

    private static UnionProblem rounded(UnionProblem p, Precision precision) {
        return new UnionProblem(round(p.q(), precision), round(p.k(), precision), p.v(),
                p.compressed() == null ? null : round(p.compressed(), precision), p.sinks(), p.callerMask(),
                p.window(), p.ratio(), p.rawPrefix());
    }

    private static double[][][][] round(double[][][][] x, Precision p) {
        double[][][][] out = new double[x.length][][][];
        for (int i = 0; i < x.length; i++) {
            out[i] = round(x[i], p);
        }
        return out;
    }

    private static double[][][] round(double[][][] x, Precision p) {
        double[][][] out = new double[x.length][][];
        for (int i = 0; i < x.length; i++) {
            out[i] = new double[x[i].length][];
            for (int j = 0; j < x[i].length; j++) {
                out[i][j] = new double[x[i][j].length];
                for (int k = 0; k < x[i][j].length; k++) {
                    out[i][j][k] = p.round(x[i][j][k]);
                }
            }
        }
        return out;
    }
}
