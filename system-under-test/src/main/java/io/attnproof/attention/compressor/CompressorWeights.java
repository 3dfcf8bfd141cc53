package io.attnproof.attention.compressor;

import io.attnproof.attention.Require;
import java.util.SplittableRandom;

/**
 * The learned parameters of one layer's key compressor: ratio R in {4, 128}, even head dim D, the gate position bias
 * {@code ape} ({@code [R][D]} for R = 128, {@code [2R][D]} for R = 4: rows 0..R-1 for the earlier block's "a" half,
 * R..2R-1 for the current block's "b" half) and the RMSNorm gain {@code gamma [D]}; all finite, deep-copied in and out.
 */
public record CompressorWeights(int ratio, int headDim, float[][] ape, float[] gamma) {

    public CompressorWeights {
        requireGeometry(ratio, headDim);
        Require.present("ape", ape);
        int rows = apeRows(ratio);
        Require.that(ape.length == rows, "ape.length", ape.length,
                "be " + rows + " for ratio " + ratio + " (R rows for R = 128, 2R for R = 4)");
        float[][] apeCopy = new float[rows][];
        for (int i = 0; i < rows; i++) {
            apeCopy[i] = finiteRow("ape[" + i + "]", ape[i], headDim);
        }
        ape = apeCopy;
        gamma = finiteRow("gamma", gamma, headDim);
    }

    /**
     * Seeded weights from {@code java.util.SplittableRandom(seed)}: ape ~ N(0, 1) row by row, then gamma uniform in
     * [0.5, 1.5), every value a float; the same (ratio, headDim, seed) always gives the same weights.
     */
    public static CompressorWeights seeded(int ratio, int headDim, long seed) {
        requireGeometry(ratio, headDim);
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] ape = new float[apeRows(ratio)][headDim];
        for (float[] row : ape) {
            for (int d = 0; d < headDim; d++) {
                row[d] = (float) rnd.nextGaussian();
            }
        }
        float[] gamma = new float[headDim];
        for (int d = 0; d < headDim; d++) {
            gamma[d] = (float) rnd.nextDouble(0.5, 1.5);
        }
        return new CompressorWeights(ratio, headDim, ape, gamma);
    }

    /** Width of each token's kv and score vectors: D for R = 128, 2D (the "a" and "b" halves) for R = 4. */
    public int width() {
        return width(ratio, headDim);
    }

    /** A copy of ape. */
    @Override
    public float[][] ape() {
        float[][] out = new float[ape.length][];
        for (int i = 0; i < ape.length; i++) {
            out[i] = ape[i].clone();
        }
        return out;
    }

    /** A copy of gamma. */
    @Override
    public float[] gamma() {
        return gamma.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CompressorWeights w && ratio == w.ratio && headDim == w.headDim
                && java.util.Arrays.deepEquals(ape, w.ape) && java.util.Arrays.equals(gamma, w.gamma);
    }

    @Override
    public int hashCode() {
        return ((ratio * 31 + headDim) * 31 + java.util.Arrays.deepHashCode(ape)) * 31 + java.util.Arrays.hashCode(gamma);
    }

    @Override
    public String toString() {
        return "CompressorWeights[ratio=" + ratio + ", headDim=" + headDim + "]";
    }

    /** Refuses a ratio outside {4, 128} (ratio-0 layers have no compressor) and an odd or non-positive head dim. */
    static void requireGeometry(int ratio, int headDim) {
        Require.that(ratio == 4 || ratio == 128, "ratio", ratio,
                "be 4 (CSA, overlapping) or 128 (HCA, disjoint); ratio-0 layers have no compressor");
        Require.that(headDim >= 2 && headDim % 2 == 0, "headDim", headDim, "be even and >= 2");
    }

    static int width(int ratio, int headDim) {
        return ratio == 4 ? 2 * headDim : headDim;
    }

    static int apeRows(int ratio) {
        return ratio == 4 ? 2 * ratio : ratio;
    }

    /** A copy of {@code row}, refused unless it holds exactly {@code length} finite values. */
    static float[] finiteRow(String param, float[] row, int length) {
        Require.present(param, row);
        Require.that(row.length == length, param + ".length", row.length, "be " + length);
        for (int i = 0; i < length; i++) {
            Require.that(Float.isFinite(row[i]), param + "[" + i + "]", row[i], "be finite");
        }
        return row.clone();
    }
}
