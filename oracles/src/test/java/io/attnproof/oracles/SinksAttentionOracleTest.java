package io.attnproof.oracles;

import static io.attnproof.oracles.AdmitRulesTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SinksAttentionOracleTest {
    private static final double NEG = Double.NEGATIVE_INFINITY;
    private static final double LN2 = Math.log(2), LN3 = Math.log(3);

    /** Random [B][Hq][tq][D] / [B][Hkv][tk][D] problem, values N(0, 1.5^2). */
    static SinksProblem random(long seed, int b, int hq, int hkv, int tq, int tk, int d, int window, boolean sinks) {
        SplittableRandom rnd = new SplittableRandom(seed);
        double[][][][] q = fill(rnd, b, hq, tq, d);
        double[][][][] k = fill(rnd, b, hkv, tk, d);
        double[][][][] v = fill(rnd, b, hkv, tk, d);
        double[] s = null;
        if (sinks) {
            s = new double[hq];
            for (int h = 0; h < hq; h++) {
                s[h] = rnd.nextGaussian();
            }
        }
        return new SinksProblem(q, k, v, s, null, window, true);
    }

    private static double[][][][] fill(SplittableRandom rnd, int a, int b, int c, int d) {
        double[][][][] x = new double[a][b][c][d];
        for (double[][][] xa : x) {
            for (double[][] xb : xa) {
                for (double[] xc : xb) {
                    for (int i = 0; i < d; i++) {
                        xc[i] = 1.5 * rnd.nextGaussian();
                    }
                }
            }
        }
        return x;
    }

    static double maxAbsDiff(double[][][][] a, double[][][][] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            for (int j = 0; j < a[i].length; j++) {
                for (int r = 0; r < a[i][j].length; r++) {
                    for (int c = 0; c < a[i][j][r].length; c++) {
                        m = Math.max(m, Math.abs(a[i][j][r][c] - b[i][j][r][c]));
                    }
                }
            }
        }
        return m;
    }

    /** B=Hq=Hkv=1, D=1 (scale 1), tq=1, keys {0, ln 2} with values {3, 6}: the last row sees both. */
    private static SinksProblem tiny(int window, double sink) {
        return new SinksProblem(new double[][][][] {{{{1}}}}, new double[][][][] {{{{0}, {LN2}}}},
                new double[][][][] {{{{3}, {6}}}}, new double[] {sink}, null, window, true);
    }

    @Test
    void tinyHandCases() {
        // Weights {1, 2}/3: (3 + 12)/3 = 5.
        assertEquals(5, SinksAttentionOracle.attend(tiny(0, NEG))[0][0][0][0], 1e-15);
        // Sink ln 3 adds 3 to the denominator only: 15/6.
        assertEquals(2.5, SinksAttentionOracle.attend(tiny(0, LN3))[0][0][0][0], 1e-15);
        // Window 1 keeps only the diagonal key 1: 2*6/(2 + 3) with the sink ln 3.
        assertEquals(12.0 / 5, SinksAttentionOracle.attend(tiny(1, LN3))[0][0][0][0], 1e-15);
        // Window 2 keeps both.
        assertEquals(2.5, SinksAttentionOracle.attend(tiny(2, LN3))[0][0][0][0], 1e-15);
    }

    @Test
    void causalRuleIsBottomRightAligned() {
        // tq 2, tk 5: kv_offset 3, row 0 sees 0..3, row 1 sees 0..4; window 2: row 0 sees 2..3, row 1 sees 3..4.
        boolean[][] full = {{true, true, true, true, false}, {true, true, true, true, true}};
        boolean[][] windowed = {{false, false, true, true, false}, {false, false, false, true, true}};
        for (int r = 0; r < 2; r++) {
            for (int j = 0; j < 5; j++) {
                assertEquals(full[r][j], SinksAttentionOracle.causalAdmits(r, j, 2, 5, 0), "r " + r + " j " + j);
                assertEquals(windowed[r][j], SinksAttentionOracle.causalAdmits(r, j, 2, 5, 2), "r " + r + " j " + j);
            }
        }
        // tq == tk is the square causal mask; tq > tk leaves the first rows with nothing.
        assertTrue(SinksAttentionOracle.causalAdmits(3, 3, 4, 4, 0));
        assertFalse(SinksAttentionOracle.causalAdmits(2, 3, 4, 4, 0));
        assertFalse(SinksAttentionOracle.causalAdmits(0, 0, 3, 2, 0));
        SinksProblem more = random(3, 1, 2, 1, 4, 2, 3, 0, true);
        assertArrayEquals(new double[3], SinksAttentionOracle.attend(more)[0][1][1], 0.0, "a row with no key is zeros");
        assertArrayEquals(new double[] {NEG, NEG}, SinksAttentionOracle.logits(more, 0, 1, 0), 0.0);
    }

    @Test
    void keysTheRuleExcludesNeverMatter() {
        SinksProblem p = random(5, 2, 4, 2, 3, 9, 4, 3, true);
        double[][][][] before = SinksAttentionOracle.attend(p);
        // Row 0 sees 4..6, row 2 sees 6..8: keys 0..3 are seen by nobody; NaN there must not leak.
        for (double[][][] kb : p.k()) {
            for (double[][] kh : kb) {
                for (int j = 0; j < 4; j++) {
                    java.util.Arrays.fill(kh[j], Double.NaN);
                }
            }
        }
        for (double[][][] vb : p.v()) {
            for (double[][] vh : vb) {
                java.util.Arrays.fill(vh[0], Double.NaN);
            }
        }
        assertEquals(0, maxAbsDiff(before, SinksAttentionOracle.attend(p)), 0.0);
    }

    @Test
    void gqaEqualsMultiHeadWithRepeatedKvHeads() {
        SinksProblem gqa = random(7, 2, 6, 2, 4, 7, 3, 0, true);
        double[][][][] k = new double[2][6][][];
        double[][][][] v = new double[2][6][][];
        for (int b = 0; b < 2; b++) {
            for (int h = 0; h < 6; h++) {
                k[b][h] = gqa.k()[b][h / 3];
                v[b][h] = gqa.v()[b][h / 3];
            }
        }
        SinksProblem mha = new SinksProblem(gqa.q(), k, v, gqa.sinks(), null, 0, true);
        assertEquals(0, maxAbsDiff(SinksAttentionOracle.attend(gqa), SinksAttentionOracle.attend(mha)), 1e-15);
        assertEquals(1, SinksAttentionOracle.kvHead(5, 6, 2));
        assertEquals(0, SinksAttentionOracle.kvHead(2, 6, 2));
        // A per-KV-head mapping (h % Hkv) is a different answer.
        double[][][][] wrong = new double[2][6][][];
        for (int b = 0; b < 2; b++) {
            for (int h = 0; h < 6; h++) {
                wrong[b][h] = gqa.k()[b][h % 2];
            }
        }
        SinksProblem interleaved = new SinksProblem(gqa.q(), wrong, v, gqa.sinks(), null, 0, true);
        assertTrue(maxAbsDiff(SinksAttentionOracle.attend(gqa), SinksAttentionOracle.attend(interleaved)) > 1e-3);
    }

    @Test
    void windowEqualsCausalPlusAnExplicitMask() {
        SinksProblem p = random(9, 1, 2, 1, 5, 8, 3, 3, true);
        double[][][][] mask = new double[1][1][5][8];
        for (int r = 0; r < 5; r++) {
            for (int j = 0; j < 8; j++) {
                // kv_offset 3: row r keeps j in [r + 1, r + 3]; the causal side stays with the rule.
                mask[0][0][r][j] = j < r + 1 ? NEG : 0;
            }
        }
        double[][][][] windowed = SinksAttentionOracle.attend(p);
        double[][][][] masked = SinksAttentionOracle.attend(p.withRule(0, true).withMask(mask));
        assertEquals(0, maxAbsDiff(windowed, masked), 1e-15);
        assertTrue(maxAbsDiff(windowed, SinksAttentionOracle.attend(p.withRule(0, true))) > 1e-3);
    }

    @Test
    void nonCausalSeesEveryKeyTheMaskAdmits() {
        SinksProblem p = random(11, 1, 1, 1, 2, 4, 2, 0, false);
        SinksProblem open = p.withRule(0, false);
        for (int r = 0; r < 2; r++) {
            for (double s : SinksAttentionOracle.logits(open, 0, 0, r)) {
                assertTrue(s > NEG);
            }
        }
        assertEquals(NEG, SinksAttentionOracle.logits(p, 0, 0, 0)[3]);
        assertTrue(maxAbsDiff(SinksAttentionOracle.attend(p), SinksAttentionOracle.attend(open)) > 1e-3);
    }

    @Test
    void maskBroadcastsAndAddsBiases() {
        SinksProblem p = random(13, 2, 2, 1, 3, 3, 2, 0, true);
        double[][][][] bias = {{{{0, LN2, 0}}}};
        double[] s = SinksAttentionOracle.logits(p.withMask(bias), 1, 1, 2);
        double[] plain = SinksAttentionOracle.logits(p, 1, 1, 2);
        assertArrayEquals(new double[] {plain[0], plain[1] + LN2, plain[2]}, s, 1e-15);
    }

    @Test
    void minusInfinitySinkEqualsNoSinkAndASinkTakesMass() {
        SinksProblem p = random(15, 1, 3, 1, 4, 6, 4, 0, true);
        double[] minusInf = {NEG, NEG, NEG};
        assertEquals(0, maxAbsDiff(SinksAttentionOracle.attend(p.withSinks(null)),
                SinksAttentionOracle.attend(p.withSinks(minusInf))), 0.0);
        assertTrue(maxAbsDiff(SinksAttentionOracle.attend(p), SinksAttentionOracle.attend(p.withSinks(null))) > 1e-3);
    }

    @Test
    void naiveFormTracksTheOracle() {
        SinksProblem p = random(17, 2, 4, 2, 6, 10, 16, 4, true);
        double[][][][] exact = SinksAttentionOracle.attend(p);
        assertEquals(0, maxAbsDiff(exact, SinksAttentionOracle.attendNaive(p, Precision.F64)), 1e-12);
        double f32 = maxAbsDiff(exact, SinksAttentionOracle.attendNaive(p, Precision.F32));
        double bf16 = maxAbsDiff(exact, SinksAttentionOracle.attendNaive(p, Precision.BF16));
        assertTrue(f32 > 0 && f32 < 1e-5, "f32 " + f32);
        assertTrue(bf16 > f32 && bf16 < 0.1, "bf16 " + bf16);
    }

    @Test
    void badInputIsRefusedWithTheRule() {
        SinksProblem p = random(19, 1, 4, 2, 2, 3, 2, 0, true);
        assertMessage(assertThrows(IllegalArgumentException.class, () -> new SinksProblem(p.q(),
                new double[][][][] {{p.k()[0][0], p.k()[0][0], p.k()[0][0]}}, p.v(), null, null, 0, true)),
                "Hq = 4 must be a multiple of Hkv = 3");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> p.withSinks(new double[3])),
                "sinks.length = 3 must equal Hq = 4");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> p.withMask(new double[1][1][1][2])),
                "key axis must be tk = 3");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> p.withRule(2, false)),
                "window = 2 needs causal = true");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> p.withRule(-1, true)), "window = -1");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> p.withMask(new double[][][][] {{{{0, Double.NaN, 0}}}})), "must be finite or -inf");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> SinksAttentionOracle.kvHead(0, 5, 2)),
                "queryHeads = 5 must be a multiple of kvHeads = 2");
    }
}
