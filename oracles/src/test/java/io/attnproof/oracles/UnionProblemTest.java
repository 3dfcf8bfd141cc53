package io.attnproof.oracles;

import static io.attnproof.oracles.AdmitRulesTest.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class UnionProblemTest {
    private static final double[][][][] Q = new double[2][3][4][8];   // B=2, H=3, tq=4, D=8
    private static final double[][][] K = new double[2][6][8];        // tk=6
    private static final double[][][] C = new double[2][2][8];        // tc=2

    private static UnionProblem make(double[][][] k, double[][][] c, double[] sinks, double[][][] mask,
                                     int window, int ratio, int rawPrefix) {
        return new UnionProblem(Q, k, k, c, sinks, mask, window, ratio, rawPrefix);
    }

    private static void refused(String fragment, Executable e) {
        assertMessage(assertThrows(IllegalArgumentException.class, e), fragment);
    }

    @Test
    void accessors() {
        UnionProblem p = make(K, C, null, new double[1][4][11], 2, 4, 3);
        assertEquals(2, p.batch());
        assertEquals(3, p.heads());
        assertEquals(4, p.tq());
        assertEquals(6, p.tk());
        assertEquals(2, p.tc());
        assertEquals(8, p.headDim());
        assertEquals(9, p.tkFull());
        assertEquals(5, p.q0());
        assertEquals(0, make(K, C, null, null, 2, 0, 3).tc(), "ratio 0 treats compressed as absent");
        assertEquals(0, make(K, null, null, null, 2, 4, 3).tc());
    }

    @Test
    void badConfigIsRefusedByName() {
        refused("window = 0", () -> make(K, C, null, null, 0, 4, 0));
        refused("ratio = -1", () -> make(K, C, null, null, 1, -1, 0));
        refused("rawPrefix = -3", () -> make(K, C, null, null, 1, 4, -3));
        refused("tq = 4 must be <= tkFull = rawPrefix + tk = 3", () -> make(new double[2][3][8], C, null, null, 1, 4, 0));
    }

    @Test
    void badShapesAreRefusedByName() {
        refused("k must be [B][tk][D] with B = 2", () -> make(new double[1][6][8], C, null, null, 1, 4, 0));
        refused("k[0][0] must have length 8, got 7", () -> make(new double[2][6][7], C, null, null, 1, 4, 0));
        refused("compressed[0][0] must have length 8", () -> make(K, new double[2][2][5], null, null, 1, 4, 0));
        refused("sinks.length = 2 must equal H = 3", () -> make(K, C, new double[2], null, 1, 4, 0));
        refused("sinks[0] = NaN", () -> make(K, C, new double[] {Double.NaN, 0, 0}, null, 1, 4, 0));
        refused("key axis must be tkFull + tc = 8", () -> make(K, C, null, new double[1][1][6], 1, 4, 0));
        refused("query axis must be tq = 4 or 1", () -> make(K, C, null, new double[2][3][8], 1, 4, 0));
        refused("callerMask batch axis = 3", () -> make(K, C, null, new double[3][1][8], 1, 4, 0));
        refused("D >= 1", () -> new UnionProblem(new double[1][1][1][0], K, K, null, null, null, 1, 0, 0));
    }
}
