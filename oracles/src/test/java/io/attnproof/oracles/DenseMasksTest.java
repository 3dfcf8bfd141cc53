package io.attnproof.oracles;

import static io.attnproof.oracles.AdmitRulesTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class DenseMasksTest {
    private static final double NEG = Double.NEGATIVE_INFINITY;

    @Test
    void rangesEqualPredicatesOnASweep() {
        int cases = 0;
        for (int w : new int[] {1, 2, 3, 8, 128}) {
            for (int ratio : new int[] {0, 4, 128}) {
                for (int tq : new int[] {1, 3, 17}) {
                    for (long q0 : new long[] {0, 1, 5, 127, 130, 511}) {
                        for (long base : new long[] {0, 2, 100}) {
                            for (int keep : new int[] {0, 1, 9, 140}) {
                                for (int tc : ratio == 0 ? new int[] {0} : new int[] {0, 1, 5}) {
                                    String where = "W=" + w + " R=" + ratio + " tq=" + tq + " q0=" + q0
                                            + " base=" + base + " keep=" + keep + " tc=" + tc;
                                    assertArrayEquals(DenseMasks.unionFromPredicates(q0, tq, base, keep, w, tc, ratio),
                                            DenseMasks.union(q0, tq, base, keep, w, tc, ratio), where);
                                    cases++;
                                }
                            }
                        }
                    }
                }
            }
        }
        assertEquals(5 * 7 * 3 * 6 * 3 * 4, cases);   // W x (R,tc) x tq x q0 x base x keep
    }

    @Test
    void handCase() {
        // q0=3, tq=2, base=1, keep=4 (keys 1..4), W=2, tc=2, R=2: p=3 sees keys 2,3 and blocks 0,1 (floor(4/2)=2);
        // p=4 sees keys 3,4 and blocks 0,1 (floor(5/2)=2).
        double[][] expected = {
            {NEG, 0, 0, NEG, 0, 0},
            {NEG, NEG, 0, 0, 0, 0},
        };
        assertArrayEquals(expected, DenseMasks.union(3, 2, 1, 4, 2, 2, 2));
    }

    @Test
    void compressedHalfFollowsEachRowsPosition() {
        long[] positions = {2, 3, 7, 126, 127};
        double[][] m = DenseMasks.compressed(positions, 3, 4);
        assertArrayEquals(new double[] {NEG, NEG, NEG}, m[0]);
        assertArrayEquals(new double[] {0, NEG, NEG}, m[1]);
        assertArrayEquals(new double[] {0, 0, NEG}, m[2]);
        assertArrayEquals(new double[] {0, 0, 0}, m[3]);
        double[][] r128 = DenseMasks.compressed(new long[] {126, 127}, 2, 128);
        assertArrayEquals(new double[][] {{NEG, NEG}, {0, NEG}}, r128);
        assertEquals(0, DenseMasks.compressed(positions, 0, 0)[0].length);
        for (int r = 0; r < positions.length; r++) {
            double[] row = DenseMasks.union(positions[r], 1, 0, 0, 1, 3, 4)[0];
            assertArrayEquals(row, m[r], Arrays.toString(row));
        }
    }

    @Test
    void badInputIsRefusedByName() {
        assertMessage(assertThrows(IllegalArgumentException.class, () -> DenseMasks.union(0, 2, 0, 2, 1, 3, 0)), "ratio = 0 requires tc == 0");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> DenseMasks.union(0, -1, 0, 2, 1, 0, 4)), "tq = -1");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> DenseMasks.unionFromPredicates(0, 1, 0, 2, 0, 0, 4)), "window = 0");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> DenseMasks.compressed(new long[] {1}, 2, -4)), "ratio = -4");
    }
}
