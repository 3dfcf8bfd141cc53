package io.attnproof.oracles;

import static io.attnproof.oracles.AdmitRulesTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CompressorOracleTest {
    private static final double L = 1e-13;

    /**
     * R = 4, D = 2, eight tokens [a0, a1, b0, b1]; ape zero except ape[5][1] = ln 3 (current-block token 1, channel 1);
     * gamma = (1, 2). The a halves of tokens 4..7 (99) would only reach block 2, which a prefill of 8 lacks.
     */
    static double[][] tinyKv() {
        return new double[][] {
            {3, 1, 0, 0}, {3, 1, 1, 4}, {3, 1, 2, 0}, {3, 1, 3, 0},
            {99, 99, 4, 0}, {99, 99, 5, 1}, {99, 99, 6, 2}, {99, 99, 7, 3}};
    }

    static double[][] tinyScore() {
        double[][] s = new double[8][4];
        for (int t = 0; t < 8; t++) {
            s[t][2] = Math.log(t + 1);   // b half, channel 0: weights proportional to t + 1 inside a block
            if (t >= 4) {
                s[t][0] = 99;   // never read
            }
        }
        return s;
    }

    static double[][] tinyApe() {
        double[][] ape = new double[8][2];
        ape[5][1] = Math.log(3);
        return ape;
    }

    static final double[] TINY_GAMMA = {1, 2};

    static double[] rmsNorm(double[] pooled, double[] gamma) {
        double ms = 0;
        for (double p : pooled) {
            ms += p * p / pooled.length;
        }
        double[] out = new double[pooled.length];
        for (int d = 0; d < out.length; d++) {
            out[d] = pooled[d] / Math.sqrt(ms + 1e-6) * gamma[d];
        }
        return out;
    }

    @Test
    void handComputedRatio4HeadDim2() {
        double[][] out = CompressorOracle.compress(tinyKv(), tinyScore(), tinyApe(), TINY_GAMMA, 4, 2);
        assertEquals(2, out.length);
        // Block 0: current tokens 0..3 only (b half). Channel 0: weights (1,2,3,4)/10 over values (0,1,2,3) -> 2.
        // Channel 1: logits (0, ln 3, 0, 0) from ape[4 + i] -> weights (1,3,1,1)/6 over values (0,4,0,0) -> 2.
        assertArrayEquals(rmsNorm(new double[] {2, 2}, TINY_GAMMA), out[0], L);
        // Block 1, channel 0: earlier a terms e^0 = 1 (x4) with value 3, current b terms 5,6,7,8 with values 4..7:
        // (4*3 + 5*4 + 6*5 + 7*6 + 8*7) / 30 = 160/30. Channel 1: earlier a terms 1 (x4), value 1; current b terms
        // (1,3,1,1) from ape[5], values (0,1,2,3): (4 + 0 + 3 + 2 + 3) / 10 = 1.2.
        assertArrayEquals(rmsNorm(new double[] {160.0 / 30, 1.2}, TINY_GAMMA), out[1], L);

        double[][][] w = CompressorOracle.gateWeights(tinyScore(), tinyApe(), 4, 2);
        assertArrayEquals(new double[] {0.1, 0.2, 0.3, 0.4}, w[0][0], L);
        assertArrayEquals(new double[] {1.0 / 6, 0.5, 1.0 / 6, 1.0 / 6}, w[0][1], L);
        assertArrayEquals(new double[] {.1, .1, .1, .1, .1, .3, .1, .1}, w[1][1], L);
    }

    @Test
    void ratio4BlockZeroHasNoEarlierHalf() {
        double[][] kv = tinyKv();
        double[][] score = tinyScore();
        double[][] before = CompressorOracle.compress(kv, score, tinyApe(), TINY_GAMMA, 4, 2);
        for (int t = 0; t < 4; t++) {   // change the a halves of block 0's tokens: only block 1 reads them
            kv[t][0] += 5 * t - 7;
            kv[t][1] -= 2;
            score[t][0] += t;
            score[t][1] -= 3 * t;
        }
        double[][] after = CompressorOracle.compress(kv, score, tinyApe(), TINY_GAMMA, 4, 2);
        assertArrayEquals(before[0], after[0], 0.0);
        assertTrue(Math.abs(before[1][0] - after[1][0]) > 1e-3, "block 1 reads the earlier a half");
        double[][][] w = CompressorOracle.gateWeights(score, tinyApe(), 4, 2);
        assertEquals(4, w[0][0].length, "block 0 softmaxes over the R current terms only");
        assertEquals(8, w[1][0].length, "block 1 softmaxes over 2R terms");
    }

    @Test
    void ratio128UniformGatesGiveTheMean() {
        int d = 6;
        SplittableRandom rnd = new SplittableRandom(128L);
        double[][] kv = new double[300][d];
        double[][] score = new double[300][d];
        double[][] ape = new double[128][d];
        double[] gamma = new double[d];
        for (int c = 0; c < d; c++) {
            double gate = rnd.nextGaussian() * 3;   // constant across tokens: uniform weights 1/R
            double bias = rnd.nextGaussian();
            for (int t = 0; t < 300; t++) {
                kv[t][c] = rnd.nextGaussian();
                score[t][c] = gate;
            }
            for (int i = 0; i < 128; i++) {
                ape[i][c] = bias;
            }
            gamma[c] = 0.5 + rnd.nextDouble();
        }
        double[][] out = CompressorOracle.compress(kv, score, ape, gamma, 128, d);
        assertEquals(2, out.length, "floor(300 / 128) blocks; the remainder 44 waits");
        for (int b = 0; b < 2; b++) {
            double[] mean = new double[d];
            for (int t = b * 128; t < (b + 1) * 128; t++) {
                for (int c = 0; c < d; c++) {
                    mean[c] += kv[t][c] / 128;
                }
            }
            assertArrayEquals(rmsNorm(mean, gamma), out[b], 1e-12);
        }
    }

    @Test
    void blockCountIsFloorTOverR() {
        for (int ratio : new int[] {4, 128}) {
            int w = CompressorOracle.width(ratio, 2);
            for (int t : new int[] {0, ratio - 1, ratio, ratio + 1, 5 * ratio + 3}) {
                double[][] out = CompressorOracle.compress(new double[t][w], new double[t][w],
                        new double[CompressorOracle.apeRows(ratio)][2], new double[] {1, 1}, ratio, 2);
                assertEquals(t / ratio, out.length, "ratio " + ratio + ", T " + t);
            }
        }
    }

    @Test
    void naiveFormTracksTheOracle() {
        SplittableRandom rnd = new SplittableRandom(44L);
        for (int ratio : new int[] {4, 128}) {
            int d = 8;
            int t = 2 * ratio + 3;
            double[][] kv = gaussian(rnd, t, CompressorOracle.width(ratio, d), 1);
            double[][] score = gaussian(rnd, t, CompressorOracle.width(ratio, d), 2);
            double[][] ape = gaussian(rnd, CompressorOracle.apeRows(ratio), d, 1);
            double[] gamma = gaussian(rnd, 1, d, 1)[0];
            double[][] exact = CompressorOracle.compress(kv, score, ape, gamma, ratio, d);
            double[][] f64 = CompressorOracle.compressNaive(kv, score, ape, gamma, ratio, d, Precision.F64);
            double[][] f32 = CompressorOracle.compressNaive(kv, score, ape, gamma, ratio, d, Precision.F32);
            double worst = 0;
            for (int b = 0; b < exact.length; b++) {
                assertArrayEquals(exact[b], f64[b], 1e-12);
                for (int c = 0; c < d; c++) {
                    worst = Math.max(worst, Math.abs(exact[b][c] - f32[b][c]));
                }
            }
            assertTrue(worst > 0 && worst < 1e-5, "f32 naive error " + worst);
        }
    }

    @Test
    void badInputIsRefusedByName() {
        double[][] ape4 = new double[8][2];
        double[] g = {1, 1};
        double[][] tok = new double[4][4];
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.compress(tok, tok, ape4, g, 0, 2)), "ratio = 0 must be 4 or 128");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.compress(tok, tok, ape4, g, 4, 3)), "headDim = 3 must be even");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.compress(new double[4][2], tok, ape4, g, 4, 2)), "kv[0].length = 2 must be 4");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.compress(tok, tok, new double[4][2], g, 4, 2)), "ape.length = 4 must be 8");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.compress(tok, tok, ape4, new double[3], 4, 2)), "gamma.length = 3 must be 2");
        double[][] nan = new double[4][4];
        nan[2][3] = Double.NaN;
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.compress(tok, nan, ape4, g, 4, 2)), "score[2][3] = NaN must be finite");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.gateWeights(tok, ape4, 4, -2)), "headDim = -2");
    }

    static double[][] gaussian(SplittableRandom rnd, int rows, int cols, double sd) {
        double[][] x = new double[rows][cols];
        for (double[] row : x) {
            for (int c = 0; c < cols; c++) {
                row[c] = sd * rnd.nextGaussian();
            }
        }
        return x;
    }
}
