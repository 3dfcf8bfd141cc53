package io.attnproof.conformance.cases;

import io.attnproof.fixtures.evidence.Worst;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.NaiveTier;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;
import java.util.Locale;

/**
 * Judges any implementation's output of a case against the fp64 oracle ({@link UnionAttentionOracle#attend}) with
 * docs/claims.md's tolerance rule: {@code max_abs_err <= 2 x (error of the naive same-precision implementation,
 * attendNaive at the case's dtype) + 2 x noise floor}. Each batch row is its own oracle problem; with
 * {@code rowQ0}, row i is run alone with its dead prefix absent (its keys from cache index
 * {@code lead_i = q0 - rowQ0[i]} on, at positions {@code rowQ0[i] + r}), as the R1 claim does. A caller mask with a
 * head axis is split per head.
 */
public final class CaseChecker {
    private CaseChecker() {
    }

    /**
     * The oracle's output, the naive same-precision output (the FlashAttention-style tier) and, for F16/BF16, the
     * precision-contract reference (inputs and output in the dtype, logits and probabilities in f32), all
     * {@code [B][H][tq][D]}; {@code contract} is null for F32.
     */
    public record Reference(double[][][][] oracle, double[][][][] naive, double[][][][] contract, Precision precision) {

        /** The largest magnitude of the oracle's output. */
        public double oracleMaxAbs() {
            return Compare.of(oracle, flat(oracle)).expectedMaxAbs();
        }

        /** The naive same-precision implementation's max-abs error against the oracle. */
        public double naiveErr() {
            return Compare.of(oracle, flat(naive)).maxAbs();
        }

        /** The tolerance rule's limit: 2 x naive error + 2 x noise floor. */
        public double limit() {
            return Tolerance.limit(precision, naiveErr(), oracleMaxAbs());
        }

        /** The contract reference's max-abs error against the oracle; NaN without a contract tier. */
        public double contractErr() {
            return contract == null ? Double.NaN : Compare.of(oracle, flat(contract)).maxAbs();
        }

        /** The precision-contract tier's limit: 2 x contract error + 2 x noise floor; NaN for F32. */
        public double contractLimit() {
            return contract == null ? Double.NaN : Tolerance.limit(precision, contractErr(), oracleMaxAbs());
        }
    }

    /** The verdict of one check. */
    public record Verdict(boolean passed, double maxAbsErr, double limit, double naiveErr, double oracleMaxAbs,
            Precision precision, Worst worst, double actualAtWorst, double oracleAtWorst, double contractLimit,
            double contractErr, long nonFiniteMismatches, Worst firstNonFinite, double cosineDiff) {

        /** {@code limit / max_abs_err}: above 1 passes; infinite for an exact output, NaN for a NaN output. */
        public double margin() {
            if (Double.isNaN(maxAbsErr)) {
                return Double.NaN;
            }
            return maxAbsErr == 0 ? Double.POSITIVE_INFINITY : limit / maxAbsErr;
        }

        /** Whether the 16-bit precision-contract tier applies. */
        public boolean hasContractTier() {
            return !Double.isNaN(contractLimit);
        }

        /**
         * The verdict line: {@code PASS max_abs_err ... <= limit ... (margin ...x) at (b=.., h=.., r=.., c=..) ...},
         * then the NaN/inf positions that differ from the oracle's when there are any (the error is taken over the
         * positions where both are finite, so an output NaN everywhere would otherwise read as exact).
         */
        public String line() {
            String m = marginText(margin());
            String at = worst != null ? worst.toString()
                    : nonFiniteMismatches > 0 ? "(no position where both are finite)" : "(empty output)";
            String line = String.format(Locale.ROOT, "%s  max_abs_err %s %s limit %s (margin %s) at %s: actual %s,"
                    + " oracle %s", passed ? "PASS" : "FAIL", num(maxAbsErr), maxAbsErr <= limit ? "<=" : ">",
                    num(limit), m, at, full(actualAtWorst), full(oracleAtWorst));
            return nonFiniteMismatches == 0 ? line : line + "; " + nonFiniteMismatches
                    + " NaN/inf positions differ from the oracle's, first at " + firstNonFinite;
        }

        /** How the limit was formed. */
        public String ruleLine() {
            return String.format(Locale.ROOT, "limit = 2 x naive %s error %s + 2 x noise floor %s (u %s x max|oracle| %s)",
                    precision, num(naiveErr), num(Tolerance.noiseFloor(precision, oracleMaxAbs)),
                    num(precision.unitRoundoff()), num(oracleMaxAbs));
        }

        /** The precision-contract tier, the non-finite positions and the cosine difference. */
        public String detailLine() {
            String tier = hasContractTier()
                    ? String.format(Locale.ROOT, "contract tier: max_abs_err %s %s %s = 2 x f32-softmax %s reference error"
                            + " %s + 2 x noise floor; ", num(maxAbsErr), maxAbsErr <= contractLimit ? "<=" : ">",
                            num(contractLimit), precision, num(contractErr))
                    : "";
            String nonFinite = nonFiniteMismatches == 0 ? "NaN/inf positions match the oracle's"
                    : nonFiniteMismatches + " NaN/inf positions differ from the oracle's, first at " + firstNonFinite;
            return tier + nonFinite + String.format(Locale.ROOT, "; cosine difference %s", num(cosineDiff));
        }

        private static String full(double x) {
            return Double.isFinite(x) ? String.format(Locale.ROOT, "%.9g", x) : Double.toString(x);
        }

        private static String num(double x) {
            return Double.isFinite(x) ? String.format(Locale.ROOT, "%.3e", x) : Double.toString(x);
        }
    }

    /** The margin as text: {@code 12.3x}, {@code exact}, or {@code NaN}. */
    private static String marginText(double m) {
        if (Double.isNaN(m)) {
            return "NaN";
        }
        if (Double.isInfinite(m)) {
            return "exact (no error)";
        }
        return String.format(Locale.ROOT, "%.3gx", m);
    }

    /**
     * Checks {@code actual} (row-major {@code [B, H, tq, D]}) against the oracle.
     *
     * @throws CaseException naming the case file when an attended input is NaN (the oracle itself is undefined)
     */
    public static Verdict check(AttnCase c, float[] actual) {
        double[] a = new double[actual.length];
        for (int i = 0; i < a.length; i++) {
            a[i] = actual[i];
        }
        return check(c, a);
    }

    /**
     * Checks {@code actual} (row-major, the case's output shape) of a case of either kind against its oracle: NaN and
     * infinite positions must match the oracle's exactly, the max-abs error (over the other positions) must hold the
     * tolerance rule and, for F16/BF16, the precision-contract tier.
     */
    public static Verdict check(AnyCase c, double[] actual) {
        int[] s = c.outputShape();
        if (actual.length != (long) s[0] * s[1] * s[2] * s[3]) {
            throw new IllegalArgumentException("actual.length = " + actual.length + " must hold the output shape "
                    + java.util.Arrays.toString(s));
        }
        return judge(reference(c), actual);
    }

    /** Judges {@code actual} against a reference already computed. */
    public static Verdict judge(Reference ref, double[] actual) {
        Compare diff = Compare.of(ref.oracle(), actual);
        double limit = ref.limit();
        double contractLimit = ref.contractLimit();
        Worst w = diff.worst();
        double actualAt = w == null ? Double.NaN : actual[Compare.flatIndex(ref.oracle(), w)];
        double oracleAt = w == null ? Double.NaN : ref.oracle()[w.b()][w.h()][w.r()][w.c()];
        boolean passed = diff.nonFiniteMismatches() == 0 && diff.maxAbs() <= limit
                && (Double.isNaN(contractLimit) || diff.maxAbs() <= contractLimit);
        return new Verdict(passed, diff.maxAbs(), limit, ref.naiveErr(), diff.expectedMaxAbs(), ref.precision(), w,
                actualAt, oracleAt, contractLimit, ref.contractErr(), diff.nonFiniteMismatches(), diff.firstNonFinite(),
                diff.cosineDiff());
    }

    /** Row-major copy of a [B][H][T][D] array. */
    public static double[] flat(double[][][][] x) {
        int n = 0;
        for (double[][][] b : x) {
            for (double[][] h : b) {
                for (double[] r : h) {
                    n += r.length;
                }
            }
        }
        double[] out = new double[n];
        int i = 0;
        for (double[][][] b : x) {
            for (double[][] h : b) {
                for (double[] r : h) {
                    System.arraycopy(r, 0, out, i, r.length);
                    i += r.length;
                }
            }
        }
        return out;
    }

    /** The reference of a case of either kind. */
    public static Reference reference(AnyCase any) {
        return switch (any) {
            case AttnCase c -> reference(c);
            case SinksCase c -> SinksReference.of(c);
        };
    }

    /**
     * The fp64 oracle's output of the case and the naive same-precision output.
     *
     * @throws CaseException naming the case file when an attended input is NaN or infinite
     */
    public static Reference reference(AttnCase c) {
        int batch = c.batch();
        int heads = c.heads();
        int tq = c.tq();
        int d = c.headDim();
        int tk = c.tk();
        int tc = c.tc();
        long tkFull = c.tkFull();
        long q0 = c.q0();
        long[] rowQ0 = c.rowQ0();
        float[] q = c.q().toFloatArray();
        float[] k = c.k().toFloatArray();
        float[] v = c.v().toFloatArray();
        float[] sinks = c.sinks().toFloatArray();
        float[] ckv = c.compressedKv() == null ? null : c.compressedKv().toFloatArray();
        float[] mask = c.mask() == null || c.mask().numel() == 1 ? null : c.mask().toFloatArray();
        int[] m4 = mask == null ? null : mask4(c.mask().shape());
        boolean perHead = m4 != null && m4[1] > 1;

        double[][][][] oracle = new double[batch][heads][][];
        double[][][][] naive = new double[batch][heads][][];
        boolean sixteen = c.precision() != Precision.F32;
        double[][][][] contract = sixteen ? new double[batch][heads][][] : null;
        for (int b = 0; b < batch; b++) {
            long lead = rowQ0 == null ? 0 : q0 - rowQ0[b];
            long start = Math.max(c.rawPrefix(), lead);      // first present key of the row, in cache index
            int from = (int) (start - c.rawPrefix());
            int rawPrefixAlone = (int) (start - lead);
            long tkFullAlone = tkFull - lead;
            double[][] kb = rows(k, b, tk, d, from);
            double[][] vb = c.vIsK() ? kb : rows(v, b, tk, d, from);
            double[][] cb = ckv == null || tc == 0 ? null : rows(ckv, b, tc, d, 0);
            int groups = perHead ? heads : 1;
            int groupHeads = perHead ? 1 : heads;
            for (int g = 0; g < groups; g++) {
                int h0 = g * groupHeads;
                double[][][][] qg = new double[1][groupHeads][tq][d];
                double[] sg = new double[groupHeads];
                for (int h = 0; h < groupHeads; h++) {
                    sg[h] = sinks[h0 + h];
                    for (int r = 0; r < tq; r++) {
                        for (int x = 0; x < d; x++) {
                            qg[0][h][r][x] = q[((b * heads + h0 + h) * tq + r) * d + x];
                        }
                    }
                }
                double[][][] mg = mask == null ? null
                        : new double[][][] {maskRows(mask, m4, b, h0, tq, lead, tkFull, tkFullAlone, tc, cb != null)};
                UnionProblem problem;
                try {
                    problem = new UnionProblem(qg, new double[][][] {kb}, new double[][][] {vb},
                            cb == null ? null : new double[][][] {cb}, sg, mg, c.window(), c.ratio().value(),
                            rawPrefixAlone);
                } catch (IllegalArgumentException e) {
                    throw new CaseException(c.file(), "config", "the oracle refuses row " + b + ": " + e.getMessage());
                }
                double[][][][] o;
                double[][][][] n;
                double[][][][] t;
                try {
                    o = UnionAttentionOracle.attend(problem);
                    n = UnionAttentionOracle.attendNaive(problem, c.precision());
                    t = sixteen ? UnionAttentionOracle.attendNaive(problem, c.precision(), NaiveTier.CONTRACT) : null;
                } catch (IllegalArgumentException e) {
                    // a non-finite attended q (or k) makes a NaN logit, which the oracle refuses before any output
                    throw new CaseException(c.file(), null, "the oracle refuses row " + b + ": " + e.getMessage()
                            + ": an attended input of q, k, v or compressed_kv is NaN or infinite");
                }
                for (int h = 0; h < groupHeads; h++) {
                    oracle[b][h0 + h] = o[0][h];
                    naive[b][h0 + h] = n[0][h];
                    if (sixteen) {
                        contract[b][h0 + h] = t[0][h];
                    }
                    for (int r = 0; r < tq; r++) {
                        for (int x = 0; x < d; x++) {
                            if (!Double.isFinite(o[0][h][r][x]) || !Double.isFinite(n[0][h][r][x])) {
                                throw new CaseException(c.file(), null, "the oracle's output is not finite at (b=" + b
                                        + ", h=" + (h0 + h) + ", r=" + r + ", c=" + x + "): an attended input of q, k, v"
                                        + " or compressed_kv is NaN or infinite");
                            }
                        }
                    }
                }
            }
        }
        return new Reference(oracle, naive, contract, c.precision());
    }

    /** A caller mask's shape as [B|1, H|1, tq|1, n]. */
    private static int[] mask4(int[] shape) {
        return shape.length == 2 ? new int[] {1, 1, shape[0], shape[1]} : shape;
    }

    /**
     * The oracle's mask rows for batch row b (head h0 if the mask has a head axis), in the row's own absolute columns:
     * raw column c' is cache column c' + lead; compressed columns follow (0 where the mask covers raw keys only).
     */
    private static double[][] maskRows(float[] mask, int[] m4, int b, int h0, int tq, long lead, long tkFull,
            long tkFullAlone, int tc, boolean hasCompressed) {
        int mb = m4[0] == 1 ? 0 : b;
        int mh = m4[1] == 1 ? 0 : h0;
        int mq = m4[2];
        int mn = m4[3];
        int tcAlone = hasCompressed ? tc : 0;
        double[][] out = new double[mq][(int) (tkFullAlone + tcAlone)];
        for (int r = 0; r < mq; r++) {
            int row = ((mb * m4[1] + mh) * mq + r) * mn;
            for (int col = 0; col < out[r].length; col++) {
                if (col < tkFullAlone) {
                    out[r][col] = mask[row + (int) (col + lead)];
                } else {
                    out[r][col] = mn == tkFull ? 0.0 : mask[row + (int) (tkFull + col - tkFullAlone)];
                }
            }
        }
        return out;
    }

    /** Rows {@code [from, n)} of batch row b of a {@code [B, 1, n, d]} array. */
    private static double[][] rows(float[] x, int b, int n, int d, int from) {
        double[][] out = new double[n - from][d];
        for (int j = from; j < n; j++) {
            for (int i = 0; i < d; i++) {
                out[j - from][i] = x[(b * n + j) * d + i];
            }
        }
        return out;
    }
}
