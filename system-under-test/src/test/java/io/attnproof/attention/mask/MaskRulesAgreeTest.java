package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * The three mask forms (uniform, ragged, graph decode) each state their rule twice: {@code admits(...)} and the
 * dense {@code materialize(...)}. Both must equal the rule written here from docs/system.md (raw key j admitted to
 * position p iff p - W < j <= p and, in a ragged row, j >= its dead prefix; compressed block k iff k < tc and
 * k < floor((p + 1) / R)) on every cell of a multi-row, multi-query case whose window edges and compressed
 * thresholds fall inside the tensor. Found by PIT (pit/triage.csv): the claim tests only ever materialise
 * B = 1 / t_q = 1 graph-decode masks and never call the ragged and graph {@code admits}.
 */
class MaskRulesAgreeTest {

    private static boolean raw(long p, long j, int window) {
        return p - window < j && j <= p;
    }

    private static boolean compressed(long p, int k, int tc, int ratio) {
        return ratio > 0 && k < tc && k < (p + 1) / ratio;
    }

    @Test
    void uniformAdmitsAndMaterializeEqualTheRuleOnEveryCell() {
        int cells = 0;
        int admittedRaw = 0;
        for (int window : new int[] {1, 3, 8}) {
            UnionMask m = new UnionMask(20, 4, 10, 12, window, 6, 4);
            Tensor dense = m.materialize(DType.F32, Device.CPU);
            int n = m.nKeys();
            for (int r = 0; r < m.tq(); r++) {
                long p = m.q0() + r;
                for (int c = 0; c < n; c++) {
                    boolean rule = c < m.keep() ? raw(p, m.base() + c, window)
                            : compressed(p, c - m.keep(), m.tc(), m.ratio());
                    assertEquals(rule, m.admits(r, c), "admits(" + r + ", " + c + ") of " + m);
                    assertEquals(rule, dense.flat(r * n + c) == 0f, "dense (" + r + ", " + c + ") of " + m);
                    admittedRaw += rule && c < m.keep() ? 1 : 0;
                    cells++;
                }
            }
        }
        assertTrue(admittedRaw > 3 && cells > 200, "degenerate case: " + admittedRaw + " raw cells admitted");
    }

    @Test
    void raggedAdmitsAndMaterializeEqualTheRuleOnEveryCell() {
        UnionMask uniform = new UnionMask(20, 3, 8, 15, 12, 5, 4);
        long[] rowQ0 = {20, 13, 9};
        RaggedUnionMask m = new RaggedUnionMask(uniform, rowQ0);
        Tensor dense = m.materialize(DType.F32, Device.CPU);
        int n = uniform.nKeys();
        int tq = uniform.tq();
        int deadCells = 0;
        for (int b = 0; b < rowQ0.length; b++) {
            long lead = uniform.q0() - rowQ0[b];
            for (int r = 0; r < tq; r++) {
                long p = uniform.q0() + r;
                for (int c = 0; c < n; c++) {
                    long j = uniform.base() + c;
                    boolean rule = c < uniform.keep() ? raw(p, j, uniform.window()) && j >= lead
                            : compressed(rowQ0[b] + r, c - uniform.keep(), uniform.tc(), uniform.ratio());
                    deadCells += c < uniform.keep() && raw(p, j, uniform.window()) && j < lead ? 1 : 0;
                    assertEquals(rule, m.admits(b, r, c), "admits(" + b + ", " + r + ", " + c + ") of " + m);
                    assertEquals(rule, dense.flat((b * tq + r) * n + c) == 0f, "dense (" + b + ", " + r + ", " + c
                            + ") of " + m);
                }
            }
        }
        assertTrue(deadCells > 0, "no window cell falls in a dead prefix: the case does not test the lead");
    }

    @Test
    void graphDecodeAdmitsAndMaterializeEqualTheRuleOnEveryCell() {
        UnionMask raw = new UnionMask(40, 3, 30, 13, 8, 11, 4);
        long[] positions = {40, 17, 0};
        GraphDecodeMask m = new GraphDecodeMask(raw, positions);
        Tensor dense = m.materialize(DType.F32, Device.CPU);
        int n = raw.nKeys();
        int tq = raw.tq();
        assertEquals(positions.length * tq * n, dense.numel(), "shape [B, 1, t_q, keep + t_c]");
        for (int b = 0; b < positions.length; b++) {
            for (int r = 0; r < tq; r++) {
                for (int c = 0; c < n; c++) {
                    boolean rule = c < raw.keep() ? raw(raw.q0() + r, raw.base() + c, raw.window())
                            : compressed(positions[b] + r, c - raw.keep(), raw.tc(), raw.ratio());
                    assertEquals(rule, m.admits(b, r, c), "admits(" + b + ", " + r + ", " + c + ") of " + m);
                    assertEquals(rule, dense.flat((b * tq + r) * n + c) == 0f, "dense (" + b + ", " + r + ", " + c
                            + ") of " + m);
                }
            }
        }
    }

    @Test
    void graphPositionZeroIsAcceptedAndANegativeOneIsRefusedByName() {
        UnionMask raw = new UnionMask(8, 1, 1, 8, 8, 2, 4);
        new GraphDecodeMask(raw, new long[] {0, 8});
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GraphDecodeMask(raw, new long[] {3, -1}));
        assertTrue(e.getMessage().startsWith("graphPositions = [3, -1]: must hold positions >= 0"), e.getMessage());
    }

    @Test
    void aRatioZeroLayerRefusesCompressedBlocksAndAcceptsNone() {
        new UnionMask(8, 1, 1, 8, 8, 0, 0);
        new UnionMask(8, 1, 1, 8, 8, 1, 4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new UnionMask(8, 1, 1, 8, 8, 1, 0));
        assertTrue(e.getMessage().startsWith("tc = 1: must be 0 on a ratio-0 layer"), e.getMessage());
    }

    @Test
    void raggedAndGraphMasksAreValuesOverTheirArrays() {
        UnionMask u = new UnionMask(20, 3, 8, 15, 6, 5, 4);
        RaggedUnionMask a = new RaggedUnionMask(u, new long[] {20, 13});
        RaggedUnionMask same = new RaggedUnionMask(u, new long[] {20, 13});
        assertEquals(a, same);
        assertEquals(a.hashCode(), same.hashCode());
        assertNotEquals(a, new RaggedUnionMask(u, new long[] {20, 12}));
        assertNotEquals(a, new RaggedUnionMask(new UnionMask(20, 3, 8, 15, 7, 5, 4), new long[] {20, 13}));
        assertEquals("RaggedUnionMask[" + u + ", rowQ0=[20, 13]]", a.toString());
        long[] q = a.rowQ0();
        q[0] = 0;
        assertEquals(20, a.rowQ0()[0], "rowQ0() hands out a copy");

        GraphDecodeMask g = new GraphDecodeMask(u, new long[] {3, 9});
        GraphDecodeMask gSame = new GraphDecodeMask(u, new long[] {3, 9});
        assertEquals(g, gSame);
        assertEquals(g.hashCode(), gSame.hashCode());
        assertNotEquals(g, new GraphDecodeMask(u, new long[] {3, 8}));
        assertNotEquals(g, new GraphDecodeMask(new UnionMask(20, 3, 8, 15, 7, 5, 4), new long[] {3, 9}));
    }
}
