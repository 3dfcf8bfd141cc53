package io.attnproof.conformance.cases;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.backend.LaneUnavailableException;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.evidence.Worst;
import io.attnproof.oracles.Precision;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checker judges an output by docs/claims.md's rule at its boundary (an error equal to the limit passes, for both
 * tiers), compares NaN/inf positions exactly, and its verdict lines say what was compared; the references are the
 * oracle's, row by row, and refuse an attended non-finite input by position.
 */
class CaseCheckerRulesTest {
    @TempDir
    Path dir;

    private static double[][][][] one(double... row) {
        return new double[][][][] {{{row}}};
    }

    private static String num(double x) {
        return String.format(Locale.ROOT, "%.3e", x);
    }

    // ---- the tolerance rule at its boundary -----------------------------------------------------------------

    @Test
    void anErrorEqualToTheLimitPassesAndTheNextDoubleFails() {
        double naiveErr = 0.25;
        CaseChecker.Reference ref = new CaseChecker.Reference(one(0, 0), one(naiveErr, 0), null, Precision.F32);
        double limit = 2 * naiveErr; // the noise floor of an all-zero oracle is 0
        assertEquals(limit, ref.limit());
        CaseChecker.Verdict at = CaseChecker.judge(ref, new double[] {limit, 0});
        assertTrue(at.passed(), at.line());
        assertTrue(at.line().startsWith("PASS  max_abs_err " + num(limit) + " <= limit " + num(limit) + " (margin 1.00x)"),
                at.line());
        assertTrue(at.line().endsWith("at " + new Worst(0, 0, 0, 0) + ": actual " + String.format(Locale.ROOT, "%.9g",
                limit) + ", oracle " + String.format(Locale.ROOT, "%.9g", 0.0)), at.line());
        assertTrue(at.ruleLine().startsWith("limit = 2 x naive F32 error " + num(naiveErr) + " + 2 x noise floor "
                + num(0)), at.ruleLine());
        assertTrue(at.detailLine().startsWith("NaN/inf positions match the oracle's"), "no contract tier for F32: "
                + at.detailLine());
        CaseChecker.Verdict over = CaseChecker.judge(ref, new double[] {Math.nextUp(limit), 0});
        assertFalse(over.passed(), over.line());
        assertTrue(over.line().contains(" > limit "), over.line());
    }

    @Test
    void theContractTierOfASixteenBitCaseHoldsAtItsOwnLimit() {
        double contractErr = 0.125;
        CaseChecker.Reference ref = new CaseChecker.Reference(one(0, 0), one(0.5, 0), one(contractErr, 0), Precision.F16);
        assertEquals(contractErr, ref.contractErr());
        double contractLimit = 2 * contractErr;
        assertEquals(contractLimit, ref.contractLimit());
        CaseChecker.Verdict at = CaseChecker.judge(ref, new double[] {contractLimit, 0});
        assertTrue(at.passed(), at.line());
        assertTrue(at.detailLine().startsWith("contract tier: max_abs_err " + num(contractLimit) + " <= "
                + num(contractLimit) + " = 2 x f32-softmax F16 reference error " + num(contractErr)), at.detailLine());
        double over = 1.5 * contractLimit; // within the naive limit 1.0, past the contract tier's
        CaseChecker.Verdict past = CaseChecker.judge(ref, new double[] {over, 0});
        assertFalse(past.passed(), past.line());
        assertTrue(past.detailLine().startsWith("contract tier: max_abs_err " + num(over) + " > " + num(contractLimit)),
                past.detailLine());
    }

    @Test
    void theOraclesLargestMagnitudeSetsTheNoiseFloor() {
        CaseChecker.Reference ref = new CaseChecker.Reference(one(3, -4), one(3, -4), null, Precision.F32);
        assertEquals(4.0, ref.oracleMaxAbs());
        assertEquals(2 * Precision.F32.unitRoundoff() * 4.0, ref.limit());
    }

    @Test
    void verdictLinesSayExactNaNAndWhereNothingWasCompared() {
        CaseChecker.Reference ref = new CaseChecker.Reference(one(0.5, 0), one(0.5, 0), null, Precision.F32);
        assertTrue(CaseChecker.judge(ref, new double[] {0.5, 0}).line().contains("(margin exact (no error))"));
        CaseChecker.Verdict nan = new CaseChecker.Verdict(false, Double.NaN, 1, 0, 0, Precision.F32, null, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, 0, null, 0);
        assertTrue(Double.isNaN(nan.margin()));
        assertTrue(nan.line().contains("(margin NaN) at (empty output): actual NaN, oracle NaN"), nan.line());
        Worst first = new Worst(0, 1, 0, 0);
        CaseChecker.Verdict none = new CaseChecker.Verdict(false, 0, 1, 0, 0, Precision.F32, null, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, 2, first, 1);
        assertTrue(none.line().contains("at (no position where both are finite)"), none.line());
        assertTrue(none.line().endsWith("; 2 NaN/inf positions differ from the oracle's, first at " + first), none.line());
    }

    // ---- Compare --------------------------------------------------------------------------------------------

    @Test
    void flatIndexIsTheRowMajorPosition() {
        double[][][][] x = new double[2][3][4][5];
        int i = 0;
        for (double[][][] b : x) {
            for (double[][] h : b) {
                for (double[] r : h) {
                    for (int c = 0; c < r.length; c++) {
                        r[c] = i++;
                    }
                }
            }
        }
        for (Worst w : new Worst[] {new Worst(0, 0, 0, 1), new Worst(0, 0, 1, 0), new Worst(0, 1, 0, 0),
                new Worst(1, 0, 0, 0), new Worst(1, 2, 3, 4), new Worst(1, 1, 2, 3)}) {
            assertEquals((int) x[w.b()][w.h()][w.r()][w.c()], Compare.flatIndex(x, w), w.toString());
        }
    }

    @Test
    void compareRefusesAShortOutputAndKeepsTheFirstOfEqualErrors() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Compare.of(one(1, 2), new double[] {1}));
        assertEquals("actual.length = 1 is shorter than the expected output", e.getMessage());
        Compare tie = Compare.of(one(0, 0, 0), new double[] {0, 1, -1});
        assertEquals(1.0, tie.maxAbs());
        assertEquals(new Worst(0, 0, 0, 1), tie.worst(), "the first of two equal errors");
    }

    @Test
    void nonFinitePositionsMustMatchExactly() {
        double nan = Double.NaN;
        double inf = Double.POSITIVE_INFINITY;
        double[][] same = {{nan, nan}, {inf, inf}, {-inf, -inf}};
        double[][] differ = {{inf, -inf}, {-inf, inf}, {nan, inf}, {inf, nan}, {1, nan}, {nan, 1}, {inf, 1}, {1, inf}};
        for (double[] p : same) {
            assertEquals(0, Compare.of(one(p[0]), new double[] {p[1]}).nonFiniteMismatches(), Arrays.toString(p));
        }
        for (double[] p : differ) {
            Compare c = Compare.of(one(0, p[0]), new double[] {0, p[1]});
            assertEquals(1, c.nonFiniteMismatches(), Arrays.toString(p));
            assertEquals(new Worst(0, 0, 0, 1), c.firstNonFinite(), Arrays.toString(p));
        }
    }

    @Test
    void theCosineDifferenceIsZeroForTwoZerosAndOneForOneZero() {
        assertEquals(0.0, Compare.of(one(0, 0), new double[] {0, 0}).cosineDiff());
        assertEquals(1.0, Compare.of(one(1, 2), new double[] {0, 0}).cosineDiff());
        assertEquals(1.0, Compare.of(one(0, 0), new double[] {1, 2}).cosineDiff());
        assertEquals(0.0, Compare.of(one(1, 2), new double[] {2, 4}).cosineDiff(), 1e-15);
    }

    // ---- references and the runner on case files ----------------------------------------------------------

    private CaseFiles union() {
        return new CaseFiles(dir).npy("q", 2, 2, 2, 2).npy("k", 2, 1, 4, 2).npy("sinks", 2);
    }

    private static final String UNION = "{'q': 'q.npy', 'k': 'k.npy', 'sinks': 'sinks.npy'%s, 'config': {'ratio': 0,"
            + " 'window': 4, 'rawPrefix': 0%s, 'dtype': 'F32'}}";

    @Test
    void theSystemsFloatOutputIsJudgedAsItsDoubles() {
        AttnCase c = assertInstanceOf(AttnCase.class, union().read(UNION.formatted("", "")));
        Tensor out = CaseRunner.run(c);
        assertArrayEquals(c.outputShape(), out.shape());
        float[] f = out.toFloatArray();
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i];
        }
        CaseChecker.Verdict v = CaseChecker.check(c, f);
        assertTrue(v.passed(), v.line());
        assertEquals(CaseChecker.check(c, d).maxAbsErr(), v.maxAbsErr());
    }

    @Test
    void anUnavailableLaneIsRefusedBeforeItRuns() {
        assumeTrue(Backend.metal().unavailable().isPresent(), "Metal runs here");
        AttnCase c = assertInstanceOf(AttnCase.class, union().read(UNION.formatted("", "")));
        assertThrows(LaneUnavailableException.class, () -> CaseRunner.run(c, Backend.metal()));
    }

    @Test
    void aZeroMaskChangesNoRowAlsoWithPerRowPositions() {
        CaseFiles files = union().npy("mask", new int[] {2, 4}, new float[8]);
        String rowQ0 = ", 'rowQ0': [0, 2]"; // q0 = 4 - 2: row 0 starts 2 keys late
        CaseChecker.Reference plain = CaseChecker.reference(files.read(UNION.formatted("", rowQ0)));
        CaseChecker.Reference masked = CaseChecker.reference(files.read(UNION.formatted(", 'mask': 'mask.npy'", rowQ0)));
        assertTrue(Arrays.deepEquals(plain.oracle(), masked.oracle()));
        assertTrue(Arrays.deepEquals(plain.naive(), masked.naive()));
    }

    @Test
    void anAttendedCanaryIsRefusedAtTheFirstNonFiniteOutput() {
        // an infinite value (finite logits, infinite output) in v (b=1, key 2, c=1), marked as a canary: row 0 (q0 = 2) sees it
        CaseFiles files = union().npy("v", new int[] {2, 1, 4, 2}, CaseFiles.withAt(16, ((1 * 4) + 2) * 2 + 1,
                Float.POSITIVE_INFINITY));
        AnyCase c = files.read(UNION.formatted(", 'v': 'v.npy', 'canary': {'v': [[1, 0, 2]]}", ""));
        CaseException e = assertThrows(CaseException.class, () -> CaseChecker.reference(c));
        assertNull(e.field());
        assertTrue(e.getMessage().contains("the oracle's output is not finite at (b=1, h=0, r=0, c=1)"), e.getMessage());

        CaseFiles sinks = new CaseFiles(dir).npy("q", 2, 2, 3, 2).npy("k", 2, 1, 4, 2)
                .npy("v", new int[] {2, 1, 4, 2}, CaseFiles.withAt(16, ((1 * 4) + 0) * 2 + 1, Float.POSITIVE_INFINITY));
        AnyCase s = sinks.read("{'kind': 'sinks', 'q': 'q.npy', 'k': 'k.npy', 'v': 'v.npy', 'canary': {'v': [[1]]},"
                + " 'config': {'window': 0, 'dtype': 'F32'}}");
        CaseException se = assertThrows(CaseException.class, () -> CaseChecker.reference(s));
        assertTrue(se.getMessage().contains("the oracle's output is not finite at (b=1, h=0, r=0, c=1)"), se.getMessage());
    }

    @Test
    void anAttendedNaNQueryIsRefusedAsTheCaseNotAsACrash() {
        // NaN at q[1][0][0][1], marked as a canary: row 0 of batch 1 attends, so its logits are NaN
        CaseFiles files = union().npy("q", new int[] {2, 2, 2, 2}, CaseFiles.withAt(16, ((1 * 2 + 0) * 2 + 0) * 2 + 1,
                Float.NaN));
        AnyCase c = files.read(UNION.formatted(", 'canary': {'q': [[1, 0, 0]]}", ""));
        CaseException e = assertThrows(CaseException.class, () -> CaseChecker.reference(c));
        assertNull(e.field());
        assertTrue(e.getMessage().startsWith(files.dir.resolve("case.json") + ": the oracle refuses row 1: "),
                e.getMessage());
        assertTrue(e.getMessage().endsWith("an attended input of q, k, v or compressed_kv is NaN or infinite"),
                e.getMessage());

        CaseFiles sinks = new CaseFiles(dir).npy("q", new int[] {2, 2, 3, 2}, CaseFiles.withAt(24, 13, Float.NaN))
                .npy("k", 2, 1, 4, 2);
        AnyCase s = sinks.read("{'kind': 'sinks', 'q': 'q.npy', 'k': 'k.npy', 'canary': {'q': [[1, 0, 0]]},"
                + " 'config': {'window': 0, 'dtype': 'F32'}}");
        CaseException se = assertThrows(CaseException.class, () -> CaseChecker.reference(s));
        assertNull(se.field());
        assertTrue(se.getMessage().startsWith(sinks.dir.resolve("case.json") + ": the oracle refuses the case: "),
                se.getMessage());
        assertTrue(se.getMessage().endsWith("an attended input of q, k or v is NaN or infinite"), se.getMessage());
    }

    @Test
    void onlyASixteenBitSinksCaseHasAContractReference() {
        CaseFiles files = new CaseFiles(dir).npy("q", 1, 2, 3, 2).npy("k", 1, 1, 4, 2);
        String json = "{'kind': 'sinks', 'q': 'q.npy', 'k': 'k.npy', 'config': {'window': 0, 'dtype': '%s'}}";
        CaseChecker.Reference f32 = CaseChecker.reference(files.read(json.formatted("F32")));
        assertNull(f32.contract());
        assertTrue(Double.isNaN(f32.contractErr()));
        CaseChecker.Reference f16 = CaseChecker.reference(files.read(json.formatted("F16")));
        assertEquals(Precision.F16, f16.precision());
        assertTrue(Double.isFinite(f16.contractErr()), "F16 contract error " + f16.contractErr());
    }
}
