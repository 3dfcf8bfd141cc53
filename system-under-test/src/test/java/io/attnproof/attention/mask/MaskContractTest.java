package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Hand-worked cells of the union mask rule (docs/system.md: raw column c is key {@code base + c}, admitted iff
 * {@code p - W < base + c <= p}; compressed column {@code keep + b} admitted iff {@code b < floor((p + 1) / R)}) at the
 * column where the raw span ends and the compressed one begins, where a keep span that does not end at the last raw
 * key tells the two rules apart; plus the masks' refusals by their exact messages and their value accessors.
 */
class MaskContractTest {
    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    @Test
    void theFirstCompressedColumnFollowsTheCompressedRuleNotTheRawOne() {
        // p = q0 = 4, base = 2, keep = 3 (raw keys 2..4), W = 8, R = 4, t_c = 2.
        UnionMask u = new UnionMask(4, 1, 2, 3, 8, 2, 4);
        assertTrue(u.admits(0, 2)); // raw key 4 <= p
        assertTrue(u.admits(0, 3)); // block 0 < floor(5 / 4) = 1 (the raw rule would read key 5 > p: refused)
        assertFalse(u.admits(0, 4)); // block 1 is not < 1
    }

    @Test
    void raggedRowsUseTheirOwnPositionForTheCompressedColumns() {
        // Batch q0 = 20, this row's q0 = 4 (lead 16 dead columns), base = 2, keep = 3, W = 8, R = 4, t_c = 2.
        RaggedUnionMask m = new RaggedUnionMask(new UnionMask(20, 1, 2, 3, 8, 2, 4), new long[] {4});
        assertEquals(16, m.lead(0));
        assertFalse(m.admits(0, 0, 2)); // raw key 4 lies in the dead prefix (< lead 16)
        assertTrue(m.admits(0, 0, 3)); // block 0 < floor((4 + 0 + 1) / 4) = 1
        assertFalse(m.admits(0, 0, 4)); // block 1 is not < 1
    }

    @Test
    void aRatioZeroLayerNeverAdmitsAColumnPastItsRawSpan() {
        // docs/system.md / UnionMask: compressed block b is admitted iff b < floor((p + 1) / R), never for R = 0 (no
        // division by R there): column keep is past every raw key of a ratio-0 layer and answers false.
        UnionMask u = new UnionMask(4, 1, 2, 3, 8, 0, 0);
        assertTrue(u.admits(0, 2));
        assertFalse(u.admits(0, 3));
        RaggedUnionMask m = new RaggedUnionMask(u, new long[] {4});
        assertTrue(m.admits(0, 0, 2));
        assertFalse(m.admits(0, 0, 3));
    }

    @Test
    void aCallerMaskColumnPastTheKeepSpanIsReadFromTheCompressedPart() {
        // t_k_full = 6 raw keys, keep span = keys 1..3 (base 1, keep 3), t_c = 2: caller columns 0..7 hold 10..17.
        CallerMasks.Span span = new CallerMasks.Span(1, 1, 1, 6, 1, 3, 2);
        Tensor local = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 1, 5);
        Tensor caller = Tensor.of(new float[] {10, 11, 12, 13, 14, 15, 16, 17}, DType.F32, Device.CPU, 1, 1, 1, 8);
        Tensor out = CallerMasks.compose(local, caller, span);
        assertArrayEquals(new float[] {11, 12, 13, 16, 17}, out.toFloatArray());
    }

    @Test
    void uniformMaskRefusesNegativeStartsAndAnEmptyWindowAndAcceptsTheEdges() {
        refused("q0 = -1: must be >= 0", () -> new UnionMask(-1, 1, 0, 1, 1, 0, 0));
        refused("base = -1: must be >= 0", () -> new UnionMask(0, 1, -1, 1, 1, 0, 0));
        refused("window = 0: must be >= 1", () -> new UnionMask(0, 1, 0, 1, 0, 0, 0));
        UnionMask edge = new UnionMask(0, 1, 0, 1, 1, 0, 0);
        assertTrue(edge.admits(0, 0)); // p = 0, W = 1: key 0 only
    }

    @Test
    void raggedRowPositionsMustLieInsideTheBatchPosition() {
        UnionMask u = new UnionMask(4, 1, 0, 5, 8, 0, 0);
        refused("rowQ0[0] = -1: must lie in [0, q0 = 4]", () -> new RaggedUnionMask(u, new long[] {-1}));
        refused("rowQ0[1] = 5: must lie in [0, q0 = 4]", () -> new RaggedUnionMask(u, new long[] {4, 5}));
        RaggedUnionMask edges = new RaggedUnionMask(u, new long[] {0, 4});
        assertArrayEquals(new long[] {0, 4}, edges.rowQ0());
        refused("rowQ0[0] = -1: must be >= 0", () -> RaggedRows.resolve(new long[] {-1}, 4, 1));
    }

    @Test
    void graphDecodeMaskHandsOutACopyOfItsPositionsAndNamesThem() {
        UnionMask raw = new UnionMask(4, 1, 0, 5, 8, 1, 4);
        GraphDecodeMask g = new GraphDecodeMask(raw, new long[] {3, 5});
        long[] p = g.positions();
        assertArrayEquals(new long[] {3, 5}, p);
        p[0] = 9;
        assertArrayEquals(new long[] {3, 5}, g.positions());
        assertNotSame(g.positions(), g.positions());
        assertEquals("GraphDecodeMask[" + raw + ", positions=[3, 5]]", g.toString());
    }
}
