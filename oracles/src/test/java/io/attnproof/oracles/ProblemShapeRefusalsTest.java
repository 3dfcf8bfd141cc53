package io.attnproof.oracles;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Every shape a problem or a dense mask refuses, each by its own rule's exact message, next to the nearest shape it
 * accepts. A check that silently lets a ragged problem through makes the oracle read a neighbour's row (or throw an
 * index error far from the cause), so the truth every claim is measured against would be wrong.
 * Degenerate if a refused input fails some other way (an index or null-pointer error, another rule's message):
 * hence exact messages, never fragments. Negative control: each accepted neighbour passes unchanged.
 */
class ProblemShapeRefusalsTest {
    private static final double NAN = Double.NaN;

    private static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    // Sinks: B = 2, Hq = 2, Hkv = 1, tq = 2, tk = 3, D = 2.
    private static SinksProblem sinks(double[][][][] q, double[][][][] k, double[][][][] v, double[] s,
            double[][][][] mask) {
        return new SinksProblem(q, k, v, s, mask, 0, true);
    }

    private static double[][][][] sq() { return new double[2][2][2][2]; }

    private static double[][][][] skv() { return new double[2][1][3][2]; }

    @Test
    void theSinksProblemRefusesEveryRaggedAxisByName() {
        assertDoesNotThrow(() -> sinks(sq(), skv(), skv(), new double[] {0, 0}, new double[2][2][2][3]));
        refused("q must be [B][Hq][tq][D] with B >= 1", () -> sinks(null, skv(), skv(), null, null));
        refused("q must be [B][Hq][tq][D] with Hq >= 1", () -> sinks(new double[1][0][][], skv(), skv(), null, null));
        refused("q must be [B][Hq][tq][D] with tq >= 1", () -> sinks(new double[1][1][0][], skv(), skv(), null, null));
        refused("q must be [B][Hq][tq][D] with D >= 1", () -> sinks(new double[1][1][1][0], skv(), skv(), null, null));
        refused("k must be [B][Hkv][tk][D] with B = 2 and Hkv >= 1", () -> sinks(sq(), null, skv(), null, null));
        refused("k[0][0] must not be null", () -> sinks(sq(), new double[2][1][][], skv(), null, null));
        refused("v must be [B][Hkv][tk][D] with B = 2", () -> sinks(sq(), skv(), null, null, null));
        double[][][][] q = sq();
        q[1] = new double[1][2][2];
        refused("q[1] must have 2 heads, got 1", () -> sinks(q, skv(), skv(), null, null));
        double[][][][] k = skv();
        k[1][0] = new double[2][2];
        refused("k[1][0] must have 3 rows, got 2", () -> sinks(sq(), k, skv(), null, null));
        double[][][][] v = skv();
        v[1][0][2] = new double[1];
        refused("v[1][0][2] must have length 2, got 1", () -> sinks(sq(), skv(), v, null, null));
        refused("sinks[1] = NaN must be finite or -inf", () -> sinks(sq(), skv(), skv(), new double[] {0, NAN}, null));
        refused("mask batch axis = 3 must be B = 2 or 1", () -> sinks(sq(), skv(), skv(), null, new double[3][1][1][3]));
        refused("mask[0] head axis must be Hq = 2 or 1", () -> sinks(sq(), skv(), skv(), null, new double[1][][][]));
        refused("mask[0][0] query axis must be tq = 2 or 1",
                () -> sinks(sq(), skv(), skv(), null, new double[1][1][3][3]));
    }

    @Test
    void theSinksProblemNamesItsShapeNeverItsValues() {
        assertEquals("SinksProblem[B=2, Hq=2, Hkv=1, tq=2, tk=3, D=2, window=0, causal=true, sinks=false, mask=false]",
                sinks(sq(), skv(), skv(), null, null).toString());
        assertEquals("SinksProblem[B=2, Hq=2, Hkv=1, tq=2, tk=3, D=2, window=0, causal=true, sinks=true, mask=true]",
                sinks(sq(), skv(), skv(), new double[2], new double[1][1][1][3]).toString());
    }

    // Union: B = 2, H = 2, tq = 2, tk = 3, tc = 2, D = 2, window 1, ratio 4.
    private static UnionProblem union(double[][][][] q, double[][][] k, double[][][] v, double[][][] c,
            double[][][] mask, int ratio, int rawPrefix) {
        return new UnionProblem(q, k, v, c, null, mask, 1, ratio, rawPrefix);
    }

    private static double[][][][] uq() { return new double[2][2][2][2]; }

    private static double[][][] ukv() { return new double[2][3][2]; }

    private static double[][][] uc() { return new double[2][2][2]; }

    @Test
    void theUnionProblemRefusesEveryRaggedAxisByName() {
        assertDoesNotThrow(() -> union(uq(), ukv(), ukv(), uc(), new double[2][2][5], 4, 0));
        refused("q must be [B][H][tq][D] with B >= 1", () -> union(null, ukv(), ukv(), uc(), null, 4, 0));
        refused("q must be [B][H][tq][D] with H >= 1", () -> union(new double[1][0][][], ukv(), ukv(), uc(), null, 4, 0));
        refused("q must be [B][H][tq][D] with tq >= 1",
                () -> union(new double[1][1][0][], ukv(), ukv(), uc(), null, 4, 0));
        double[][][][] heads = uq();
        heads[1] = new double[1][2][2];
        refused("q[1] must have H = 2 heads", () -> union(heads, ukv(), ukv(), uc(), null, 4, 0));
        double[][][][] row = uq();
        row[0][1][1] = new double[1];
        refused("q[0][1][1] must have length 2, got 1", () -> union(row, ukv(), ukv(), uc(), null, 4, 0));
        refused("k[0] must not be null", () -> union(uq(), new double[2][][], ukv(), uc(), null, 4, 0));
        refused("v must be [B][tk][D] with B = 2", () -> union(uq(), ukv(), null, uc(), null, 4, 0));
        double[][][] v = ukv();
        v[1][2] = new double[1];
        refused("v[1][2] must have length 2, got 1", () -> union(uq(), ukv(), v, uc(), null, 4, 0));
        double[][][] k = ukv();
        k[1] = new double[2][2];
        refused("k[1] must have 3 rows, got 2", () -> union(uq(), k, ukv(), uc(), null, 4, 0));
        refused("compressed must be [B][tc][D] with B = 2", () -> union(uq(), ukv(), ukv(), new double[1][2][2], null, 4, 0));
        refused("callerMask[0][0][4] = NaN must be finite or -inf", () -> {
            double[][][] mask = new double[1][1][5];
            mask[0][0][4] = NAN;
            union(uq(), ukv(), ukv(), uc(), mask, 4, 0);
        });
    }

    @Test
    void ratioZeroLeavesTheCompressedBlocksUnreadAndUnchecked() {
        // A ragged compressed tensor under ratio 0 is never read, so it is not refused, and tc() is 0 (mask width tk).
        UnionProblem p = union(uq(), ukv(), ukv(), new double[2][2][5], new double[1][1][3], 0, 0);
        assertEquals(0, p.tc());
    }

    @Test
    void theUnionProblemsAbsoluteWidthMustFitAnInt() {
        int max = Integer.MAX_VALUE;
        // tkFull + tc = (max - 5 + 3) + 2 = max: the widest accepted; one more is refused.
        assertEquals(max, union(uq(), ukv(), ukv(), uc(), null, 4, max - 5).tkFull() + 2);
        refused("tkFull + tc = 2147483648 must fit an int", () -> union(uq(), ukv(), ukv(), uc(), null, 4, max - 4));
    }

    @Test
    void theUnionProblemNamesItsShapeNeverItsValues() {
        assertEquals("UnionProblem[B=2, H=2, tq=2, tk=3, tc=2, D=2, window=1, ratio=4, rawPrefix=0, sinks=false,"
                + " callerMask=true]", union(uq(), ukv(), ukv(), uc(), new double[1][1][5], 4, 0).toString());
        assertEquals("UnionProblem[B=2, H=2, tq=2, tk=3, tc=2, D=2, window=1, ratio=4, rawPrefix=0, sinks=true,"
                + " callerMask=false]", new UnionProblem(uq(), ukv(), ukv(), uc(), new double[2], null, 1, 4, 0).toString());
    }

    @Test
    void theDenseMasksRefuseEveryNegativeOrInconsistentArgumentByName() {
        refused("q0 = -1 must be >= 0", () -> DenseMasks.union(-1, 1, 0, 1, 1, 0, 0));
        refused("base = -1 must be >= 0", () -> DenseMasks.union(0, 1, -1, 1, 1, 0, 0));
        refused("keep = -1 must be >= 0", () -> DenseMasks.union(0, 1, 0, -1, 1, 0, 0));
        refused("window = 0 must be >= 1", () -> DenseMasks.union(0, 1, 0, 1, 0, 0, 0));
        refused("tc = -1 must be >= 0", () -> DenseMasks.union(0, 1, 0, 1, 1, -1, 4));
        refused("ratio = -1 must be >= 0", () -> DenseMasks.union(0, 1, 0, 1, 1, 0, -1));
        refused("tq = -1 must be >= 0", () -> DenseMasks.unionFromPredicates(0, -1, 0, 1, 1, 0, 4));
        int max = Integer.MAX_VALUE;
        assertEquals(0, DenseMasks.union(0, 0, 0, max - 1, 1, 1, 1).length, "keep + tc = max fits");
        refused("keep + tc = 2147483648 must fit an int", () -> DenseMasks.union(0, 0, 0, max, 1, 1, 1));
        refused("positions must not be null", () -> DenseMasks.compressed(null, 0, 1));
        refused("tc = -1 must be >= 0", () -> DenseMasks.compressed(new long[] {1}, -1, 4));
        refused("ratio = 0 requires tc == 0, got tc = 1", () -> DenseMasks.compressed(new long[] {5}, 1, 0));
        refused("positions[1] = -1 must be >= 0", () -> DenseMasks.compressed(new long[] {3, -1}, 2, 4));
        assertEquals(2, DenseMasks.compressed(new long[] {3, 0}, 2, 4).length);
    }
}
