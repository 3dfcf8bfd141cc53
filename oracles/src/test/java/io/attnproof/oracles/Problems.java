package io.attnproof.oracles;

import java.util.SplittableRandom;

/** Seeded random UnionProblem builders for the self-tests. */
final class Problems {
    private Problems() {}

    /** A problem with N(0,1) q/k/v/compressed, sinks in [-2, 2] (or null), no caller mask. */
    static UnionProblem random(long seed, int b, int h, int tq, int tk, int tc, int d,
                               int window, int ratio, int rawPrefix, boolean sinks) {
        SplittableRandom rnd = new SplittableRandom(seed);
        double[][][][] q = new double[b][h][][];
        for (int i = 0; i < b; i++) {
            for (int j = 0; j < h; j++) {
                q[i][j] = matrix(rnd, tq, d);
            }
        }
        double[][][] k = new double[b][][], v = new double[b][][], c = new double[b][][];
        for (int i = 0; i < b; i++) {
            k[i] = matrix(rnd, tk, d);
            v[i] = matrix(rnd, tk, d);
            c[i] = matrix(rnd, tc, d);
        }
        double[] s = null;
        if (sinks) {
            s = new double[h];
            for (int j = 0; j < h; j++) {
                s[j] = rnd.nextDouble(-2, 2);
            }
        }
        return new UnionProblem(q, k, v, c, s, null, window, ratio, rawPrefix);
    }

    /** The same problem with a different caller mask. */
    static UnionProblem withMask(UnionProblem p, double[][][] mask) {
        return new UnionProblem(p.q(), p.k(), p.v(), p.compressed(), p.sinks(), mask, p.window(), p.ratio(), p.rawPrefix());
    }

    /** A deep copy of the key-side arrays (k, v, compressed) so that a test may overwrite them. */
    static UnionProblem copyKeys(UnionProblem p) {
        return new UnionProblem(p.q(), deep(p.k()), deep(p.v()), deep(p.compressed()), p.sinks(), p.callerMask(),
                p.window(), p.ratio(), p.rawPrefix());
    }

    /** The largest |a - b| over all elements. */
    static double maxAbsDiff(double[][][][] a, double[][][][] b) {
        double worst = 0;
        for (int i = 0; i < a.length; i++) {
            for (int j = 0; j < a[i].length; j++) {
                for (int r = 0; r < a[i][j].length; r++) {
                    for (int c = 0; c < a[i][j][r].length; c++) {
                        worst = Math.max(worst, Math.abs(a[i][j][r][c] - b[i][j][r][c]));
                    }
                }
            }
        }
        return worst;
    }

    private static double[][] matrix(SplittableRandom rnd, int rows, int cols) {
        double[][] m = new double[rows][cols];
        for (double[] row : m) {
            for (int c = 0; c < cols; c++) {
                row[c] = gaussian(rnd);
            }
        }
        return m;
    }

    private static double gaussian(SplittableRandom rnd) {
        return Math.sqrt(-2 * Math.log(1 - rnd.nextDouble())) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }

    private static double[][][] deep(double[][][] a) {
        double[][][] copy = new double[a.length][][];
        for (int i = 0; i < a.length; i++) {
            copy[i] = new double[a[i].length][];
            for (int j = 0; j < a[i].length; j++) {
                copy[i][j] = a[i][j].clone();
            }
        }
        return copy;
    }
}
