package io.attnproof.conformance.cases;

import io.attnproof.fixtures.evidence.Worst;

/**
 * An output compared with an expected {@code [B][H][T][D]} array: NaN and infinite positions must match exactly
 * (FlashMLA's rule: a NaN where the expected value is NaN, +inf where it is +inf ...), counted as
 * {@code nonFiniteMismatches} with the first one; {@code maxAbs} and its {@code worst} element over the positions
 * where both are finite; the expected output's largest finite magnitude; and the cosine difference
 * {@code 1 - <a, e> / (|a| |e|)} over those positions (0 when both are zero, 1 when exactly one is).
 */
public record Compare(double maxAbs, Worst worst, double expectedMaxAbs, long nonFiniteMismatches,
        Worst firstNonFinite, double cosineDiff) {

    /** Compares {@code actual} (row-major, the same number of elements) with {@code expected}. */
    public static Compare of(double[][][][] expected, double[] actual) {
        int i = 0;
        double maxAbs = 0;
        double expectedMax = 0;
        Worst worst = null;
        long mismatches = 0;
        Worst firstBad = null;
        double dot = 0;
        double na = 0;
        double ne = 0;
        for (int b = 0; b < expected.length; b++) {
            for (int h = 0; h < expected[b].length; h++) {
                for (int r = 0; r < expected[b][h].length; r++) {
                    double[] e = expected[b][h][r];
                    for (int c = 0; c < e.length; c++) {
                        if (i >= actual.length) {
                            throw new IllegalArgumentException("actual.length = " + actual.length
                                    + " is shorter than the expected output");
                        }
                        double x = actual[i++];
                        double y = e[c];
                        boolean fx = Double.isFinite(x);
                        boolean fy = Double.isFinite(y);
                        if (!fx || !fy) {
                            boolean same = (Double.isNaN(x) && Double.isNaN(y)) || (!fx && !fy && x == y);
                            if (!same) {
                                mismatches++;
                                if (firstBad == null) {
                                    firstBad = new Worst(b, h, r, c);
                                }
                            }
                            continue;
                        }
                        expectedMax = Math.max(expectedMax, Math.abs(y));
                        double d = Math.abs(x - y);
                        if (worst == null || d > maxAbs) {
                            maxAbs = d;
                            worst = new Worst(b, h, r, c);
                        }
                        dot += x * y;
                        na += x * x;
                        ne += y * y;
                    }
                }
            }
        }
        if (i != actual.length) {
            throw new IllegalArgumentException("actual.length = " + actual.length + " must equal the expected output's "
                    + i + " elements");
        }
        double cosine;
        if (na == 0 && ne == 0) {
            cosine = 0;
        } else if (na == 0 || ne == 0) {
            cosine = 1;
        } else {
            cosine = Math.max(0, 1 - dot / (Math.sqrt(na) * Math.sqrt(ne)));
        }
        return new Compare(maxAbs, worst, expectedMax, mismatches, firstBad, cosine);
    }

    /** The row-major index of element {@code w} of {@code x}. */
    public static int flatIndex(double[][][][] x, Worst w) {
        int h = x[0].length;
        int t = x[0][0].length;
        int d = x[0][0][0].length;
        return ((w.b() * h + w.h()) * t + w.r()) * d + w.c();
    }
}
