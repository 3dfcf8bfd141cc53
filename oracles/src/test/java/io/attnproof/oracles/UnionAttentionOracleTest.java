package io.attnproof.oracles;

import static io.attnproof.oracles.AdmitRulesTest.assertMessage;
import static io.attnproof.oracles.Problems.maxAbsDiff;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UnionAttentionOracleTest {
    private static final double NEG = Double.NEGATIVE_INFINITY;
    private static final double LN2 = Math.log(2), LN3 = Math.log(3);

    /** B=H=1, D=1 (scale 1), tq=1 at p=1, raw keys {0, ln 2} with values {3, 6}, R=2 so block 0 (= ln 3) is seen. */
    private static UnionProblem tiny(int window, double sink) {
        return new UnionProblem(new double[][][][] {{{{1}}}}, new double[][][] {{{0}, {LN2}}},
                new double[][][] {{{3}, {6}}}, new double[][][] {{{LN3}}}, new double[] {sink}, null, window, 2, 0);
    }

    @Test
    void tinyHandCases() {
        // logits {0, ln2, ln3} -> weights {1,2,3}/6; output (3*1 + 6*2 + ln3*3)/6 = 2.5 + ln3/2.
        assertEquals(2.5 + LN3 / 2, UnionAttentionOracle.attend(tiny(2, NEG))[0][0][0][0], 1e-15);
        // sink ln 6 adds 6 to the denominator only: (15 + 3 ln3)/12.
        assertEquals((15 + 3 * LN3) / 12, UnionAttentionOracle.attend(tiny(2, Math.log(6)))[0][0][0][0], 1e-15);
        // W=1 keeps only the diagonal key 1: weights {2,3}/5; output (12 + 3 ln3)/5.
        assertEquals((12 + 3 * LN3) / 5, UnionAttentionOracle.attend(tiny(1, NEG))[0][0][0][0], 1e-15);
        assertArrayEquals(new double[] {0, LN2, LN3}, UnionAttentionOracle.logits(tiny(2, NEG), 0, 0, 0), 1e-15);
    }

    @Test
    void scaleIsInverseSqrtHeadDim() {
        // D=4 so scale 1/2: q.k1 = 2 ln2 -> logit ln2; with sink 0 the weights are {1, 2}/4 over v0=e0, v1=e1.
        UnionProblem p = new UnionProblem(new double[][][][] {{{{2, 0, 0, 0}}}},
                new double[][][] {{{0, 0, 0, 0}, {LN2, 5, 5, 5}}}, new double[][][] {{{1, 0, 0, 0}, {0, 1, 0, 0}}},
                null, new double[] {0}, null, 8, 0, 0);
        assertArrayEquals(new double[] {0.25, 0.5, 0, 0}, UnionAttentionOracle.attend(p)[0][0][0], 1e-15);
    }

    @Test
    void keysBeforeRawPrefixAreAbsent() {
        // rawPrefix 1: k[0] sits at absolute position 1; p = 2 with W = 4 would admit 0..2 but 0 is absent.
        UnionProblem p = new UnionProblem(new double[][][][] {{{{1}}}}, new double[][][] {{{0}, {LN2}}},
                new double[][][] {{{3}, {6}}}, null, null, null, 4, 0, 1);
        assertEquals(2, p.q0());
        assertArrayEquals(new double[] {NEG, 0, LN2}, UnionAttentionOracle.logits(p, 0, 0, 0), 1e-15);
        assertEquals((3 + 12) / 3.0, UnionAttentionOracle.attend(p)[0][0][0][0], 1e-15);
    }

    @Test
    void keysNotAdmittedNeverMatter() {
        // tkFull 26, q0 21, W 4: row 0 sees 18..21, so absolute keys < 18 (k index < 12) are seen by no row;
        // R 4: the last row p = 25 sees floor(26/4) = 6 blocks, so blocks 6..9 are seen by no row.
        UnionProblem p = Problems.random(11L, 2, 3, 5, 20, 10, 8, 4, 4, 6, true);
        double[][][][] expected = UnionAttentionOracle.attend(p);
        UnionProblem poisoned = Problems.copyKeys(p);
        for (int b = 0; b < 2; b++) {
            for (int j = 0; j < 12; j++) {
                Arrays.fill(poisoned.k()[b][j], Double.NaN);
                Arrays.fill(poisoned.v()[b][j], 1e300);
            }
            for (int blk = 6; blk < 10; blk++) {
                Arrays.fill(poisoned.compressed()[b][blk], Double.NaN);
            }
        }
        assertArrayEquals(expected, UnionAttentionOracle.attend(poisoned));
        // Negative control: the oldest key row 0 does see (absolute 18 = index 12) matters.
        UnionProblem control = Problems.copyKeys(p);
        control.k()[0][12][0] += 1;
        assertTrue(maxAbsDiff(expected, UnionAttentionOracle.attend(control)) > 1e-6);
    }

    @Test
    void futureKeysDoNotReachEarlierRows() {
        UnionProblem p = Problems.random(12L, 1, 2, 6, 30, 8, 4, 8, 4, 0, true);
        double[][][][] expected = UnionAttentionOracle.attend(p);
        UnionProblem changed = Problems.copyKeys(p);
        changed.k()[0][29][1] = 50;   // only the last row (p = 29) sees key 29
        double[][][][] got = UnionAttentionOracle.attend(changed);
        for (int h = 0; h < 2; h++) {
            for (int r = 0; r < 5; r++) {
                assertArrayEquals(expected[0][h][r], got[0][h][r], 0.0);
            }
            assertTrue(Math.abs(expected[0][h][5][0] - got[0][h][5][0]) > 1e-9);
        }
    }

    @ParameterizedTest
    @CsvSource({"127,128,4", "128,128,128", "129,128,4", "256,128,128", "9,3,0", "1,1,4"})
    void naiveF64EqualsAttend(int tk, int window, int ratio) {
        int tc = ratio == 0 ? 0 : tk / ratio + 1;
        UnionProblem p = Problems.random(tk * 31L + ratio, 2, 2, Math.min(tk, 7), tk, tc, 16, window, ratio, 0, true);
        assertTrue(maxAbsDiff(UnionAttentionOracle.attend(p), UnionAttentionOracle.attendNaive(p, Precision.F64)) <= 1e-12);
    }

    @Test
    void naiveF32DiffersSlightly() {
        UnionProblem p = Problems.random(64L, 1, 4, 8, 96, 24, 64, 32, 4, 40, true);
        double[][][][] exact = UnionAttentionOracle.attend(p);
        double f32 = maxAbsDiff(exact, UnionAttentionOracle.attendNaive(p, Precision.F32));
        double bf16 = maxAbsDiff(exact, UnionAttentionOracle.attendNaive(p, Precision.BF16));
        assertTrue(f32 > 0 && f32 < 1e-4, "f32 error " + f32);
        assertTrue(bf16 > f32, "bf16 error " + bf16 + " should exceed f32 error " + f32);
    }

    @Test
    void callerMaskMinusInfinityRemovesThatKey() {
        UnionProblem p = Problems.random(21L, 2, 2, 3, 12, 3, 8, 8, 4, 0, true);
        int column = 9;   // absolute key 9: q0 = 9, so every row (p = 9..11) admits it under W = 8
        double[][][] mask = new double[1][1][(int) p.tkFull() + p.tc()];
        mask[0][0][column] = NEG;
        UnionProblem masked = Problems.withMask(p, mask);
        for (int r = 0; r < 3; r++) {
            assertTrue(UnionAttentionOracle.logits(p, 0, 0, r)[column] > NEG);
            assertEquals(NEG, UnionAttentionOracle.logits(masked, 0, 0, r)[column]);
        }
        double[][][][] out = UnionAttentionOracle.attend(masked);
        assertTrue(maxAbsDiff(out, UnionAttentionOracle.attend(p)) > 1e-6, "the masked key mattered");
        UnionProblem removed = Problems.copyKeys(masked);
        for (int b = 0; b < 2; b++) {
            Arrays.fill(removed.k()[b][column], Double.NaN);
            Arrays.fill(removed.v()[b][column], Double.NaN);
        }
        assertArrayEquals(out, UnionAttentionOracle.attend(removed));
        assertTrue(maxAbsDiff(out, UnionAttentionOracle.attendNaive(removed, Precision.F64)) <= 1e-12);
    }

    @Test
    void callerMaskBroadcastsAndAdds() {
        UnionProblem p = Problems.random(22L, 2, 1, 3, 10, 3, 4, 8, 4, 0, false);
        int width = (int) p.tkFull() + p.tc();
        double[][][] full = new double[2][3][width];
        double[][][] single = new double[1][1][width];
        for (int c = 0; c < width; c++) {
            single[0][0][c] = -0.25 * c;
            for (int b = 0; b < 2; b++) {
                for (int r = 0; r < 3; r++) {
                    full[b][r][c] = single[0][0][c];
                }
            }
        }
        assertArrayEquals(UnionAttentionOracle.attend(Problems.withMask(p, full)),
                UnionAttentionOracle.attend(Problems.withMask(p, single)));
        double[] plain = UnionAttentionOracle.logits(p, 1, 0, 2);
        double[] shifted = UnionAttentionOracle.logits(Problems.withMask(p, single), 1, 0, 2);
        for (int c = 0; c < width; c++) {
            assertEquals(plain[c] + single[0][0][c], shifted[c], 1e-15);
        }
    }

    @Test
    void fullyMaskedRowWithSinkGivesZeros() {
        UnionProblem p = Problems.random(23L, 1, 2, 2, 6, 0, 4, 3, 0, 0, true);
        double[][][] mask = new double[1][2][6];
        Arrays.fill(mask[0][0], NEG);
        double[][][][] out = UnionAttentionOracle.attend(Problems.withMask(p, mask));
        assertArrayEquals(new double[4], out[0][1][0], 0.0);
        assertArrayEquals(new double[4], UnionAttentionOracle.attendNaive(Problems.withMask(p, mask), Precision.F16)[0][0][0], 0.0);
        assertTrue(Arrays.stream(out[0][0][1]).allMatch(x -> x != 0 && !Double.isNaN(x)));
    }

    @Test
    void ratioZeroIgnoresCompressed() {
        UnionProblem p = Problems.random(24L, 1, 1, 2, 5, 4, 4, 3, 0, 0, false);
        assertEquals(0, p.tc());
        assertEquals(5, UnionAttentionOracle.logits(p, 0, 0, 1).length);
    }

    @Test
    void badIndicesAreRefused() {
        UnionProblem p = tiny(2, 0);
        assertMessage(assertThrows(IllegalArgumentException.class, () -> UnionAttentionOracle.logits(p, 0, 0, 1)), "r = 1");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> UnionAttentionOracle.attendNaive(p, null)), "precision");
    }
}
