package io.attnproof.conformance.cases;

import io.attnproof.oracles.NaiveTier;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;

/**
 * The fp64 oracle ({@link SinksAttentionOracle#attend}), the naive same-precision output and the precision-contract
 * reference ({@code NaiveTier.CONTRACT}) of a sinks case: dense as one problem, varlen as one problem per packed sequence, zero-padded to max_q.
 */
final class SinksReference {
    private SinksReference() {
    }

    static CaseChecker.Reference of(SinksCase c) {
        Precision p = c.precision();
        boolean sixteen = p != Precision.F32;
        int[] s = c.outputShape();
        double[][][][] oracle = new double[s[0]][s[1]][s[2]][s[3]];
        double[][][][] naive = new double[s[0]][s[1]][s[2]][s[3]];
        double[][][][] contract = sixteen ? new double[s[0]][s[1]][s[2]][s[3]] : null;
        float[] q = c.q().toFloatArray();
        float[] k = c.k().toFloatArray();
        float[] v = c.v().toFloatArray();
        double[] sinks = doubles(c.sinks().toFloatArray());
        int hq = c.queryHeads();
        int hkv = c.kvHeads();
        int d = c.headDim();
        if (!c.varlen()) {
            int b = s[0];
            int tq = s[2];
            int tk = c.k().dim(2);
            double[][][][] mask = c.mask() == null ? null : mask4(c);
            SinksProblem problem = problem(c, dense(q, b, hq, tq, d), dense(k, b, hkv, tk, d), dense(v, b, hkv, tk, d),
                    sinks, mask);
            fill(c, problem, oracle, naive, contract, 0);
        } else {
            int[] cuQ = c.cuSeqlensQ();
            int[] cuK = c.cuSeqlensK();
            for (int i = 0; i + 1 < cuQ.length; i++) {
                int qLen = cuQ[i + 1] - cuQ[i];
                int kLen = cuK[i + 1] - cuK[i];
                if (qLen == 0) {
                    continue;
                }
                SinksProblem problem = problem(c, packed(q, cuQ[i], qLen, hq, d), packed(k, cuK[i], kLen, hkv, d),
                        packed(v, cuK[i], kLen, hkv, d), sinks, null);
                fill(c, problem, oracle, naive, contract, i);
            }
        }
        return new CaseChecker.Reference(oracle, naive, contract, p);
    }

    private static SinksProblem problem(SinksCase c, double[][][][] q, double[][][][] k, double[][][][] v,
            double[] sinks, double[][][][] mask) {
        try {
            return new SinksProblem(q, k, v, sinks, mask, c.window(), true);
        } catch (IllegalArgumentException e) {
            throw new CaseException(c.file(), "config", "the oracle refuses the case: " + e.getMessage());
        }
    }

    /** Runs the three references on {@code problem} and copies batch row 0.. into {@code [b0 + i]}. */
    private static void fill(SinksCase c, SinksProblem problem, double[][][][] oracle, double[][][][] naive,
            double[][][][] contract, int b0) {
        double[][][][] o;
        double[][][][] n;
        double[][][][] t;
        try {
            o = SinksAttentionOracle.attend(problem);
            n = SinksAttentionOracle.attendNaive(problem, c.precision());
            t = contract == null ? null : SinksAttentionOracle.attendNaive(problem, c.precision(), NaiveTier.CONTRACT);
        } catch (IllegalArgumentException e) {
            // a non-finite attended q (or k) makes a NaN logit, which the oracle refuses before any output
            throw new CaseException(c.file(), null, "the oracle refuses the case: " + e.getMessage()
                    + ": an attended input of q, k or v is NaN or infinite");
        }
        for (int b = 0; b < o.length; b++) {
            for (int h = 0; h < o[b].length; h++) {
                for (int r = 0; r < o[b][h].length; r++) {
                    for (int x = 0; x < o[b][h][r].length; x++) {
                        if (!Double.isFinite(o[b][h][r][x]) || !Double.isFinite(n[b][h][r][x])) {
                            throw new CaseException(c.file(), null, "the oracle's output is not finite at (b=" + (b0 + b)
                                    + ", h=" + h + ", r=" + r + ", c=" + x + "): an attended input of q, k or v is NaN"
                                    + " or infinite");
                        }
                    }
                    oracle[b0 + b][h][r] = o[b][h][r];
                    naive[b0 + b][h][r] = n[b][h][r];
                    if (t != null) {
                        contract[b0 + b][h][r] = t[b][h][r];
                    }
                }
            }
        }
    }

    /** The caller mask as [B|1][Hq|1][tq|1][tk]. */
    private static double[][][][] mask4(SinksCase c) {
        int[] ms = c.mask().shape();
        int[] m4 = ms.length == 2 ? new int[] {1, 1, ms[0], ms[1]} : ms;
        return dense(c.mask().toFloatArray(), m4[0], m4[1], m4[2], m4[3]);
    }

    private static double[][][][] dense(float[] x, int b, int h, int t, int d) {
        double[][][][] out = new double[b][h][t][d];
        int i = 0;
        for (int bi = 0; bi < b; bi++) {
            for (int hi = 0; hi < h; hi++) {
                for (int ti = 0; ti < t; ti++) {
                    for (int di = 0; di < d; di++) {
                        out[bi][hi][ti][di] = x[i++];
                    }
                }
            }
        }
        return out;
    }

    /** Packed rows [start, start+len) of [total, H, D] as [1][H][len][D]. */
    private static double[][][][] packed(float[] x, int start, int len, int h, int d) {
        double[][][][] out = new double[1][h][len][d];
        for (int t = 0; t < len; t++) {
            for (int hi = 0; hi < h; hi++) {
                for (int di = 0; di < d; di++) {
                    out[0][hi][t][di] = x[((start + t) * h + hi) * d + di];
                }
            }
        }
        return out;
    }

    private static double[] doubles(float[] x) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = x[i];
        }
        return out;
    }
}
