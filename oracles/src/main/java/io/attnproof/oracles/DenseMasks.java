package io.attnproof.oracles;

import java.util.Arrays;

/** Dense additive 0/-inf masks over [raw keep span ++ compressed blocks]; 0 marks an admitted key. */
public final class DenseMasks {
    private DenseMasks() {}

    /** Dense additive union mask [tq][keep + tc] (0 or -inf): columns 0..keep-1 are absolute raw keys base+c,
        columns keep..keep+tc-1 are compressed blocks 0..tc-1; query row r sits at absolute position q0 + r.
        Built by filling index RANGES computed from the formulas (not by calling AdmitRules) so that the
        self-tests can hold the two forms against each other. ratio 0 requires tc == 0. */
    public static double[][] union(long q0, int tq, long base, int keep, int window, int tc, int ratio) {
        check(q0, tq, base, keep, window, tc, ratio);
        double[][] mask = new double[tq][keep + tc];
        for (int r = 0; r < tq; r++) {
            long p = q0 + r;
            double[] row = mask[r];
            Arrays.fill(row, Double.NEGATIVE_INFINITY);
            long lo = Math.max(base, p - window + 1);   // oldest admitted absolute key
            long hi = Math.min(base + keep - 1, p);     // newest admitted absolute key (the diagonal)
            if (lo <= hi) {
                Arrays.fill(row, (int) (lo - base), (int) (hi - base + 1), 0.0);
            }
            long blocks = ratio == 0 ? 0 : Math.min(tc, (p + 1) / ratio);
            Arrays.fill(row, keep, keep + (int) blocks, 0.0);
        }
        return mask;
    }

    /** Same mask, built cell by cell from AdmitRules. */
    public static double[][] unionFromPredicates(long q0, int tq, long base, int keep, int window, int tc, int ratio) {
        check(q0, tq, base, keep, window, tc, ratio);
        double[][] mask = new double[tq][keep + tc];
        for (int r = 0; r < tq; r++) {
            long p = q0 + r;
            for (int c = 0; c < keep; c++) {
                mask[r][c] = AdmitRules.rawAdmits(p, base + c, window) ? 0.0 : Double.NEGATIVE_INFINITY;
            }
            for (int b = 0; b < tc; b++) {
                mask[r][keep + b] = AdmitRules.compressedAdmits(p, b, ratio) ? 0.0 : Double.NEGATIVE_INFINITY;
            }
        }
        return mask;
    }

    /** Compressed half only, per query row at absolute positions positions[r]: [positions.length][tc]. */
    public static double[][] compressed(long[] positions, int tc, int ratio) {
        Require.that(positions != null, "positions must not be null");
        Require.atLeast("tc", tc, 0);
        Require.atLeast("ratio", ratio, 0);
        Require.that(ratio > 0 || tc == 0, "ratio = 0 requires tc == 0, got tc = " + tc);
        double[][] mask = new double[positions.length][tc];
        for (int r = 0; r < positions.length; r++) {
            Require.atLeast("positions[" + r + "]", positions[r], 0);
            long blocks = Math.min(tc, AdmitRules.compressedThreshold(positions[r], ratio));
            Arrays.fill(mask[r], (int) blocks, tc, Double.NEGATIVE_INFINITY);
        }
        return mask;
    }

    private static void check(long q0, int tq, long base, int keep, int window, int tc, int ratio) {
        Require.atLeast("q0", q0, 0);
        Require.atLeast("tq", tq, 0);
        Require.atLeast("base", base, 0);
        Require.atLeast("keep", keep, 0);
        Require.atLeast("window", window, 1);
        Require.atLeast("tc", tc, 0);
        Require.atLeast("ratio", ratio, 0);
        Require.that(ratio > 0 || tc == 0, "ratio = 0 requires tc == 0, got tc = " + tc);
        Require.that((long) keep + tc <= Integer.MAX_VALUE, "keep + tc = " + ((long) keep + tc) + " must fit an int");
    }
}
