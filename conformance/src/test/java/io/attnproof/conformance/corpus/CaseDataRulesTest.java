package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The data of a union or sinks case obeys its shape rules: every element of every drawn tensor is filled (Gaussian,
 * never exactly 0), batch row 0 does not depend on how many rows follow (each row has its own stream), derived
 * variants (one row, first keys, dropped blocks) keep exactly the slices they name, NaN canaries cover exactly their
 * slot, sinks are live and finite or exactly -inf, and the shape text names exactly the parts the case has.
 */
class CaseDataRulesTest {
    private static final long SEED = 20_251_203L;

    private static void assertAllFilled(String what, float[] a) {
        for (int i = 0; i < a.length; i++) {
            assertTrue(Float.isFinite(a[i]) && a[i] != 0f, what + "[" + i + "] = " + a[i] + " is not a drawn value");
        }
    }

    private static float[] part(float[] a, int from, int n) {
        return Arrays.copyOfRange(a, from, from + n);
    }

    @Test
    void unionRowsAreFilledFromTheirOwnStreams() {
        int h = 2, tq = 3, tk = 5, tc = 2, d = 4;
        UnionData two = UnionData.random(SEED, 2, h, tq, tk, tc, d, 4, 8, true);
        UnionData one = UnionData.random(SEED, 1, h, tq, tk, tc, d, 4, 8, true);
        assertAllFilled("q", two.q);
        assertAllFilled("k", two.k);
        assertAllFilled("ckv", two.ckv);
        assertArrayEquals(one.q, part(two.q, 0, h * tq * d), "row 0 of q must not depend on B");
        assertArrayEquals(one.ckv, part(two.ckv, 0, tc * d), "row 0 of ckv must not depend on B");
        assertFalse(Arrays.equals(part(two.q, 0, h * tq * d), part(two.q, h * tq * d, h * tq * d)),
                "rows 0 and 1 come from different streams");
        assertNull(UnionData.random(SEED, 1, h, tq, tk, 0, d, 4, 8, true).ckv, "tc = 0: no compressed kv at all");
        for (float s : UnionData.random(SEED, 1, h, tq, tk, tc, d, 4, 8, false).sinks) {
            assertEquals(UnionData.NO_SINK, s, "a case not about sinks carries NO_SINK");
        }
    }

    @Test
    void aDistinctVIsDrawnAndIsNotK() {
        UnionData x = UnionData.random(SEED, 2, 2, 3, 5, 2, 4, 4, 8, true).withDistinctV(SEED);
        assertAllFilled("v", x.v);
        assertEquals(x.k.length, x.v.length, "V has K's shape");
        assertFalse(Arrays.equals(x.k, x.v), "a distinct V must differ from K");
        assertArrayEquals(x.v, UnionData.random(SEED, 2, 2, 3, 5, 2, 4, 4, 8, true).withDistinctV(SEED).v,
                "V is drawn from the seed's own stream: the same seed gives the same V");
    }

    @Test
    void unionRowKeepsOnlyThatBatchRow() {
        int b = 3, h = 2, tq = 2, tk = 3, tc = 2, d = 2;
        UnionData all = UnionData.random(SEED, b, h, tq, tk, tc, d, 4, 8, true).withDistinctV(SEED);
        UnionData r = all.copy().row(1);
        assertEquals(1, r.b);
        assertArrayEquals(part(all.q, h * tq * d, h * tq * d), r.q);
        assertArrayEquals(part(all.k, tk * d, tk * d), r.k);
        assertArrayEquals(part(all.v, tk * d, tk * d), r.v);
        assertArrayEquals(part(all.ckv, tc * d, tc * d), r.ckv);
    }

    @Test
    void droppedBlocksKeepTheLeadingBlocksOfEveryRow() {
        int b = 2, tc = 3, d = 2;
        UnionData x = UnionData.random(SEED, b, 2, 2, 3, tc, d, 4, 8, true);
        UnionData cut = x.copy().dropBlocks(1);
        assertEquals(tc - 1, cut.tc);
        assertEquals(b * (tc - 1) * d, cut.ckv.length);
        for (int i = 0; i < b; i++) {
            assertArrayEquals(part(x.ckv, i * tc * d, (tc - 1) * d), part(cut.ckv, i * (tc - 1) * d, (tc - 1) * d),
                    "row " + i + " keeps its first tc - 1 blocks");
        }
        UnionData none = x.copy().dropBlocks(tc);
        assertEquals(0, none.tc);
        assertNull(none.ckv, "no blocks left: no compressed kv");
        assertFalse(none.toCase("c", "U1", DType.F32, SEED, "x").tensors().containsKey("compressed_kv"));
    }

    @Test
    void compressedKvIsWrittenOnlyWhenThereAreBlocks() {
        UnionData x = UnionData.random(SEED, 1, 1, 1, 2, 1, 2, 4, 8, true);
        assertTrue(x.toCase("c", "U1", DType.F32, SEED, "x").tensors().containsKey("compressed_kv"));
        x.tc = 0;
        x.ckv = new float[0];
        assertFalse(x.toCase("c", "U1", DType.F32, SEED, "x").tensors().containsKey("compressed_kv"),
                "tc = 0 must not write an empty compressed_kv");
    }

    @Test
    void nanCanaryCoversExactlyItsKeySlot() {
        int b = 2, tk = 3, d = 4, row = 1, t = 2;
        UnionData x = UnionData.random(SEED, b, 1, 1, tk, 0, d, 4, 8, true);
        float[] before = x.k.clone();
        UnionData y = x.nanKey(row, t);
        assertSame(x, y);
        int slot = (row * tk + t) * d;
        for (int i = 0; i < before.length; i++) {
            boolean inSlot = i >= slot && i < slot + d;
            assertEquals(inSlot, Float.isNaN(y.k[i]), "k[" + i + "]");
            if (!inSlot) {
                assertEquals(before[i], y.k[i]);
            }
        }
        assertEquals(1, y.kCanary.size());
        assertArrayEquals(new int[] {row, 0, t}, y.kCanary.get(0));
        assertTrue(y.toCase("c", "U1", DType.F32, SEED, "x").canary().containsKey("k"));
    }

    @Test
    void unionShapeTextNamesExactlyThePartsPresent() {
        UnionData x = UnionData.random(SEED, 2, 3, 4, 5, 6, 7, 4, 8, true);
        String plain = x.shapeText();
        assertTrue(plain.contains("B 2") && plain.contains("H 3") && plain.contains("tq 4") && plain.contains("tk 5")
                && plain.contains("tc 6") && plain.contains("D 7"), plain);
        assertTrue(plain.contains("V = K"), plain);
        assertFalse(plain.contains("rawPrefix") || plain.contains("rowQ0") || plain.contains("mask"), plain);
        UnionData y = x.copy().withDistinctV(SEED);
        y.rawPrefix = 9;
        y.rowQ0 = new long[] {11, 12};
        y.maskShape = new int[] {1, 1, 4, 5};
        y.mask = new float[20];
        String full = y.shapeText();
        assertFalse(full.contains("V = K"), full);
        assertTrue(full.contains("rawPrefix 9") && full.contains("rowQ0 [11, 12]") && full.contains("mask [1, 1, 4, 5]"),
                full);
    }

    @Test
    void sinksDenseRowsAreFilledFromTheirOwnStreams() {
        int hq = 2, hkv = 2, tq = 3, tk = 5, d = 4;
        SinksData two = SinksData.dense(SEED, 2, hq, hkv, tq, tk, d, 0, true);
        SinksData one = SinksData.dense(SEED, 1, hq, hkv, tq, tk, d, 0, true);
        assertAllFilled("q", two.q);
        assertAllFilled("k", two.k);
        assertAllFilled("v", two.v);
        assertArrayEquals(one.q, part(two.q, 0, hq * tq * d), "row 0 of q must not depend on B");
        assertArrayEquals(one.k, part(two.k, 0, hkv * tk * d), "row 0 of k must not depend on B");
        assertArrayEquals(one.v, part(two.v, 0, hkv * tk * d), "row 0 of v must not depend on B");
    }

    @Test
    void sinksAreLiveAndFiniteOrExactlyMinusInfinity() {
        SinksData live = SinksData.dense(SEED, 1, 3, 1, 1, 1, 2, 0, true);
        SinksData dead = SinksData.dense(SEED, 1, 3, 1, 1, 1, 2, 0, false);
        assertEquals(3, live.sinks.length);
        for (int i = 0; i < 3; i++) {
            assertTrue(Float.isFinite(live.sinks[i]), "live sink " + i);
            assertEquals(Float.NEGATIVE_INFINITY, dead.sinks[i], "dead sink " + i);
        }
    }

    @Test
    void packedVarlenRowsAreAllFilled() {
        SinksData x = SinksData.varlen(SEED, new int[] {2, 3}, new int[] {4, 1}, 2, 1, 3, 0, true);
        assertArrayEquals(new int[] {0, 2, 5}, x.cuQ);
        assertArrayEquals(new int[] {0, 4, 5}, x.cuK);
        assertAllFilled("q", x.q);
        assertAllFilled("k", x.k);
        assertAllFilled("v", x.v);
    }

    @Test
    void firstKeysKeepTheLeadingKeysOfEveryHead() {
        int b = 2, hkv = 2, tk = 5, d = 3, n = 3;
        SinksData x = SinksData.dense(SEED, b, 2, hkv, 2, tk, d, 0, true);
        SinksData cut = x.firstKeys(n);
        assertEquals(n, cut.tk);
        for (int i = 0; i < b * hkv; i++) {
            assertArrayEquals(part(x.k, i * tk * d, n * d), part(cut.k, i * n * d, n * d), "k of row-head " + i);
            assertArrayEquals(part(x.v, i * tk * d, n * d), part(cut.v, i * n * d, n * d), "v of row-head " + i);
        }
    }

    @Test
    void sinksShapeTextNamesExactlyThePartsPresent() {
        SinksData dense = SinksData.dense(SEED, 2, 3, 1, 4, 5, 6, 7, true);
        String plain = dense.shapeText();
        assertTrue(plain.contains("B 2") && plain.contains("tq 4") && plain.contains("tk 5") && plain.contains("window 7"),
                plain);
        assertFalse(plain.contains("cu_seqlens") || plain.contains("mask") || plain.contains("no sinks"), plain);
        SinksData packed = SinksData.varlen(SEED, new int[] {1, 2}, new int[] {2, 2}, 2, 1, 2, 0, true);
        packed.noSinks = true;
        packed.maskShape = new int[] {1, 2};
        packed.mask = new float[2];
        String text = packed.shapeText();
        assertTrue(text.contains("cu_seqlens_q [0, 1, 3]") && text.contains("cu_seqlens_k [0, 2, 4]")
                && text.contains("mask [1, 2]") && text.contains("no sinks"), text);
        assertFalse(text.contains("tq "), text);
    }

    @Test
    void caseBytesGrowWithEveryTensor() {
        CaseSpec small = SinksData.dense(SEED, 1, 1, 1, 1, 1, 2, 0, true).toCase("a", "S1", DType.F32, SEED, "x");
        CaseSpec big = SinksData.dense(SEED, 2, 1, 1, 1, 1, 2, 0, true).toCase("a", "S1", DType.F32, SEED, "x");
        long elements = 0;
        for (CaseSpec.Arr a : small.tensors().values()) {
            elements += a.values().length;
        }
        assertTrue(small.bytes() >= elements * 4, small.bytes() + " bytes for " + elements + " f32 elements");
        assertTrue(big.bytes() > small.bytes(), "more elements take more bytes");
    }
}
