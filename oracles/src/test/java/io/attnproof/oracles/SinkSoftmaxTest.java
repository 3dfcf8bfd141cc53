package io.attnproof.oracles;

import static io.attnproof.oracles.AdmitRulesTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SinkSoftmaxTest {
    private static final double NEG = Double.NEGATIVE_INFINITY;

    /** Random logits in [-8, 8], roughly a quarter masked. */
    private static double[] randomRow(SplittableRandom rnd) {
        double[] x = new double[1 + rnd.nextInt(40)];
        for (int k = 0; k < x.length; k++) {
            x[k] = rnd.nextInt(4) == 0 ? NEG : rnd.nextDouble(-8, 8);
        }
        return x;
    }

    @Test
    void handComputed() {
        // logits {0, ln 2}, sink 0: e^0 + e^{ln 2} + e^0 = 4, so y = {1/4, 2/4} and the sink keeps 1/4.
        double[] x = {0, Math.log(2)};
        assertArrayEquals(new double[] {0.25, 0.5}, SinkSoftmax.closedForm(x, 0), 1e-15);
        assertArrayEquals(new double[] {0.25, 0.5}, SinkSoftmax.extraColumn(x, 0), 1e-15);
        // logits {ln 3, -inf, 0}, sink ln 4: 3 + 0 + 1 + 4 = 8, so y = {3/8, 0, 1/8}.
        double[] z = {Math.log(3), NEG, 0};
        assertArrayEquals(new double[] {0.375, 0, 0.125}, SinkSoftmax.closedForm(z, Math.log(4)), 1e-15);
    }

    @Test
    void twoFormsAgreeOnRandomRows() {
        SplittableRandom rnd = new SplittableRandom(20240611L);
        for (int t = 0; t < 2000; t++) {
            double[] x = randomRow(rnd);
            double sink = rnd.nextInt(5) == 0 ? NEG : rnd.nextDouble(-8, 8);
            if (sink == NEG && x.length > 0) {
                x[0] = rnd.nextDouble(-8, 8);   // keep the extra-column form defined
            }
            assertArrayEquals(SinkSoftmax.extraColumn(x, sink), SinkSoftmax.closedForm(x, sink), 1e-15, "trial " + t);
        }
    }

    @Test
    void minusInfinitySinkEqualsPlainSoftmax() {
        SplittableRandom rnd = new SplittableRandom(7L);
        for (int t = 0; t < 200; t++) {
            double[] x = randomRow(rnd);
            x[0] = rnd.nextDouble(-8, 8);
            double m = NEG;
            for (double xi : x) {
                m = Math.max(m, xi);
            }
            double sum = 0;
            for (double xi : x) {
                sum += Math.exp(xi - m);
            }
            double[] plain = new double[x.length];
            for (int k = 0; k < x.length; k++) {
                plain[k] = Math.exp(x[k] - m) / sum;
            }
            assertArrayEquals(plain, SinkSoftmax.closedForm(x, NEG), 1e-15);
        }
    }

    @Test
    void fullyMaskedRowGivesExactZeros() {
        double[] masked = {NEG, NEG, NEG};
        for (double sink : new double[] {0.0, -50.0, 30.0, NEG}) {
            double[] y = SinkSoftmax.closedForm(masked, sink);
            assertArrayEquals(new double[3], y, 0.0);
            for (double yi : y) {
                assertFalse(Double.isNaN(yi));
            }
        }
        assertArrayEquals(new double[3], SinkSoftmax.extraColumn(masked, 1.5), 0.0);
        assertTrue(Double.isNaN(SinkSoftmax.extraColumn(masked, NEG)[0]), "textbook softmax of all -inf is undefined");
    }

    @Test
    void probabilitiesPlusSinkShareSumToOne() {
        SplittableRandom rnd = new SplittableRandom(99L);
        for (int t = 0; t < 500; t++) {
            double[] x = randomRow(rnd);
            double sink = rnd.nextDouble(-8, 8);
            double m = sink;
            for (double xi : x) {
                m = Math.max(m, xi);
            }
            double denominator = Math.exp(sink - m);
            for (double xi : x) {
                denominator += Math.exp(xi - m);
            }
            double total = Math.exp(sink - m) / denominator;
            for (double yi : SinkSoftmax.closedForm(x, sink)) {
                total += yi;
            }
            assertEquals(1.0, total, 1e-14);
        }
    }

    @Test
    void badInputIsRefusedByName() {
        assertMessage(assertThrows(IllegalArgumentException.class, () -> SinkSoftmax.closedForm(new double[] {0, Double.NaN}, 0)), "logits[1] = NaN");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> SinkSoftmax.extraColumn(new double[] {0}, Double.POSITIVE_INFINITY)), "sink = Infinity");
    }
}
