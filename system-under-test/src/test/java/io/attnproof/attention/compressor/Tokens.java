package io.attnproof.attention.compressor;

import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.tolerance.Diff;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One row's seeded compressor inputs: T tokens of value {@code kv ~ N(0, 1)} and gate {@code score ~ N(0, gateSd^2)},
 * drawn (kv then score, token by token) from {@link Streams#row}(seed, row), every value a float; the fp64 views hold
 * exactly the same values for the oracle.
 */
record Tokens(float[][] kv, float[][] score) {

    static Tokens generate(long seed, int row, int length, int width, double gateSd) {
        SplittableRandom rnd = Streams.row(seed, row);
        float[][] kv = new float[length][width];
        float[][] score = new float[length][width];
        for (int t = 0; t < length; t++) {
            for (int c = 0; c < width; c++) {
                kv[t][c] = (float) rnd.nextGaussian();
            }
            for (int c = 0; c < width; c++) {
                score[t][c] = (float) (gateSd * rnd.nextGaussian());
            }
        }
        return new Tokens(kv, score);
    }

    int length() {
        return kv.length;
    }

    /** Tokens {@code [from, to)}. */
    Tokens slice(int from, int to) {
        return new Tokens(Arrays.copyOfRange(kv, from, to), Arrays.copyOfRange(score, from, to));
    }

    /** These tokens followed by {@code next}'s (a stream that leaked into another row). */
    Tokens then(Tokens next) {
        float[][] k = Arrays.copyOf(kv, kv.length + next.kv.length);
        float[][] s = Arrays.copyOf(score, score.length + next.score.length);
        System.arraycopy(next.kv, 0, k, kv.length, next.kv.length);
        System.arraycopy(next.score, 0, s, score.length, next.score.length);
        return new Tokens(k, s);
    }

    double[][] kvF64() {
        return f64(kv);
    }

    double[][] scoreF64() {
        return f64(score);
    }

    static double[][] f64(float[][] x) {
        double[][] out = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            out[i] = new double[x[i].length];
            for (int j = 0; j < x[i].length; j++) {
                out[i][j] = x[i][j];
            }
        }
        return out;
    }

    static double[] f64(float[] x) {
        double[] out = new double[x.length];
        for (int j = 0; j < x.length; j++) {
            out[j] = x[j];
        }
        return out;
    }

    /** Blocks {@code [t_c][D]} as the {@code [1][1][t_c][D]} array {@code Diff} compares (worst r = block, c = channel). */
    static double[][][][] wrap(double[][] blocks) {
        return new double[][][][] {{blocks}};
    }

    static double[][][][] wrap(List<float[]> blocks) {
        return wrap(f64(blocks.toArray(new float[0][])));
    }

    /** The number of elements whose bits differ between two block lists, plus D for every missing or extra block. */
    static long bitsDiffering(List<float[]> a, List<float[]> b) {
        long differing = 0;
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
            if (i >= a.size() || i >= b.size()) {
                differing += (i < a.size() ? a : b).get(i).length;
                continue;
            }
            differing += Diff.bitsDiffering(a.get(i), b.get(i));
        }
        return differing;
    }
}
