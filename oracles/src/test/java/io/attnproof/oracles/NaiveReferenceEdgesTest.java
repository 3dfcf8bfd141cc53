package io.attnproof.oracles;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Edges of the naive same-precision references and the softmaxes that the random-input tests never reach: logits
 * large enough that a softmax without max-subtraction overflows, a finite mask bias in the naive sinks form, the
 * final rounding of the naive output to its dtype, and which precision each tier keeps its intermediates in.
 * Degenerate if the inputs were so small that e^x never overflows, or the output happened to be representable
 * anyway; the controls (moderate logits, F64) show the same checks pass where the two forms agree by construction.
 */
class NaiveReferenceEdgesTest {

    @Test
    void largeLogitsStayFiniteInBothSinkSoftmaxForms() {
        // e^1000 overflows a double; after subtracting the max each of the three columns is e^0 = 1: 1/3 each.
        double[] third = {1.0 / 3, 1.0 / 3};
        assertArrayEquals(third, SinkSoftmax.extraColumn(new double[] {1000, 1000}, 1000), 1e-15);
        assertArrayEquals(third, SinkSoftmax.closedForm(new double[] {1000, 1000}, 1000), 1e-15);
        assertArrayEquals(third, SinkSoftmax.extraColumn(new double[] {0, 0}, 0), 1e-15);   // control
    }

    @Test
    void aNullLogitRowIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SinkSoftmax.extraColumn(null, 0));
        assertEquals("logits must not be null", e.getMessage());
    }

    /** R = 4, D = 2, one block of four tokens whose gate + ape logits are all 400 + 400 = 800 (uniform weights). */
    @Test
    void largeCompressorLogitsStayFiniteInBothForms() {
        double[][] kv = {{0, 0, 1, 2}, {0, 0, 3, 4}, {0, 0, 5, 6}, {0, 0, 7, 8}};
        double[][] score = new double[4][4];
        double[][] ape = new double[8][2];
        for (int t = 0; t < 4; t++) {
            score[t][2] = 400;
            score[t][3] = 400;
            ape[4 + t][0] = 400;
            ape[4 + t][1] = 400;
        }
        double[] gamma = {1, 1};
        double[] expected = CompressorOracleTest.rmsNorm(new double[] {4, 5}, gamma);   // means of (1,3,5,7), (2,4,6,8)
        assertArrayEquals(expected, CompressorOracle.compress(kv, score, ape, gamma, 4, 2)[0], 1e-12);
        assertArrayEquals(expected, CompressorOracle.compressNaive(kv, score, ape, gamma, 4, 2, Precision.F64)[0], 1e-12);
        double[][][] w = CompressorOracle.gateWeights(score, ape, 4, 2);
        assertArrayEquals(new double[] {0.25, 0.25, 0.25, 0.25}, w[0][1], 1e-15);
    }

    @Test
    void theNaiveSinksFormAddsAFiniteMaskBias() {
        SinksProblem p = SinksAttentionOracleTest.random(23, 1, 2, 1, 3, 4, 4, 0, true);
        double[][][][] bias = {{{{0, 1.5, -2, 0.25}}}};
        SinksProblem biased = p.withMask(bias);
        double diff = SinksAttentionOracleTest.maxAbsDiff(SinksAttentionOracle.attend(biased),
                SinksAttentionOracle.attendNaive(biased, Precision.F64));
        assertEquals(0, diff, 1e-12);
        assertTrue(SinksAttentionOracleTest.maxAbsDiff(SinksAttentionOracle.attend(biased),
                SinksAttentionOracle.attend(p)) > 1e-3, "the bias moves the output (control)");
    }

    @Test
    void everyNaiveOutputIsRoundedToItsDtype() {
        SinksProblem s = SinksAttentionOracleTest.random(29, 1, 2, 1, 3, 5, 8, 0, true);
        UnionProblem u = Problems.random(31L, 1, 2, 3, 6, 2, 8, 4, 4, 0, true);
        for (Precision p : new Precision[] {Precision.BF16, Precision.F16}) {
            assertRepresentable(p, SinksAttentionOracle.attendNaive(s, p, NaiveTier.CONTRACT));
            assertRepresentable(p, UnionAttentionOracle.attendNaive(u, p, NaiveTier.CONTRACT));
        }
    }

    private static void assertRepresentable(Precision p, double[][][][] out) {
        int nonzero = 0;
        for (double[][][] a : out) {
            for (double[][] b : a) {
                for (double[] row : b) {
                    for (double x : row) {
                        assertEquals(p.round(x), x, 0.0, p + " output " + x + " is not a " + p + " value");
                        nonzero += x != 0 ? 1 : 0;
                    }
                }
            }
        }
        assertTrue(nonzero > 0, "an all-zero output would be representable trivially");
    }

    @Test
    void theContractTierKeepsIntermediatesInTheAccumulatorTheCompatibilityTierInTheDtype() {
        assertEquals(Precision.F32, NaiveTier.CONTRACT.intermediates(Precision.BF16, Precision.F32));
        assertEquals(Precision.BF16, NaiveTier.COMPATIBILITY.intermediates(Precision.BF16, Precision.F32));
    }
}
