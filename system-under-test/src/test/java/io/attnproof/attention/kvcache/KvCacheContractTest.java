package io.attnproof.attention.kvcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Contract of the cache classes on small hand-worked cases (milliseconds): every refusal's exact text (parameter,
 * value, rule) with the boundary value just inside accepted, the storage layout of batched rows read back element by
 * element, the getters, equality and the texts. Values encode their own coordinates ({@link #val}), so a wrong
 * offset reads back a different number.
 */
class KvCacheContractTest {

    /** The value of batch row b, stream position p, channel c (V adds 0.5): exact in F32, never zero. */
    static float val(int b, int p, int c) {
        return 1000f * b + 10f * p + c + 1f;
    }

    /** [B,1,t,D] holding {@link #val} for positions {@code [p0, p0 + t)}, plus {@code dv}. */
    static Tensor positions(int batch, int p0, int t, int d, float dv) {
        float[] x = new float[batch * t * d];
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < t; i++) {
                for (int c = 0; c < d; c++) {
                    x[(b * t + i) * d + c] = val(b, p0 + i, c) + dv;
                }
            }
        }
        return Tensor.of(x, DType.F32, Device.CPU, batch, 1, t, d);
    }

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    static void refusedLike(String prefix, String suffix, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(prefix) && e.getMessage().endsWith(suffix), e.getMessage());
    }

    /** Row b of a [B,1,n,D] tensor holds positions {@code [p0, p0 + n)} (plus dv). */
    static void holdsPositions(Tensor x, int b, int p0, float dv) {
        int n = x.dim(2);
        int d = x.dim(3);
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < d; c++) {
                assertEquals(val(b, p0 + i, c) + dv, x.get(b, 0, i, c), "row " + b + " position " + (p0 + i));
            }
        }
    }

    // ---- XsRolling ----

    @Test
    void xsRollingCreateRefusesEachBoundAndAcceptsTheSmallest() {
        XsRolling one = XsRolling.create(1, 1, 1, DType.F32, Device.CPU);
        assertEquals(1, one.window());
        refused("batch = 0: must be >= 1", () -> XsRolling.create(0, 1, 1, DType.F32, Device.CPU));
        refused("window = 0: must be >= 1", () -> XsRolling.create(1, 0, 1, DType.F32, Device.CPU));
        refused("headDim = 0: must be >= 1", () -> XsRolling.create(1, 1, 0, DType.F32, Device.CPU));
        // 2^15 * 2^15 * 4 = 2^32 elements; each factor alone, and 2^15 * 2^15 / 4, would fit.
        refused("batch * window * headDim = 4294967296: must be <= 2^31-9",
                () -> XsRolling.create(1 << 15, 1 << 15, 4, DType.F32, Device.CPU));
    }

    @Test
    void xsRollingKeepsTheLastWindowPositionsOfEveryRowInStreamOrder() {
        // B = 2, W = 3, D = 2; positions 0..1, then 2..3: retained 1, 2, 3 (position 3 overwrote slot 0).
        XsRolling x = XsRolling.create(2, 3, 2, DType.F32, Device.CPU);
        Tensor k0 = positions(2, 0, 2, 2, 0f);
        x.append(k0, k0);
        Tensor k1 = positions(2, 2, 2, 2, 0f);
        x.append(k1, k1);
        assertEquals(4, x.currentSeqLen());
        assertEquals(3, x.live());
        assertTrue(x.vAliasesK());
        assertArrayEquals(new int[] {2, 1, 3, 2}, x.k().shape());
        holdsPositions(x.k(), 0, 1, 0f);
        holdsPositions(x.k(), 1, 1, 0f);
        assertSame(x.k(), x.v());
        assertEquals(2, x.batch());
        assertEquals(3, x.window());
        assertEquals(2, x.headDim());
        assertEquals(DType.F32, x.dtype());
        assertEquals(Device.CPU, x.device());
        assertEquals("XsRolling(window 3, batch 2, D 2, F32)", x.describe());
        assertEquals("XsRolling(window 3, batch 2, D 2, F32)[seen 4, V=K]", x.toString());
    }

    @Test
    void xsRollingWithADistinctVWritesBothRingsAndVReadsFirst() {
        XsRolling x = XsRolling.create(2, 3, 2, DType.F32, Device.CPU);
        x.append(positions(2, 0, 2, 2, 0f), positions(2, 0, 2, 2, 0.5f));
        x.append(positions(2, 2, 2, 2, 0f), positions(2, 2, 2, 2, 0.5f));
        assertFalse(x.vAliasesK());
        Tensor v = x.v(); // read V before K: its view must be fresh on its own
        holdsPositions(v, 0, 1, 0.5f);
        holdsPositions(v, 1, 1, 0.5f);
        holdsPositions(x.k(), 1, 1, 0f);
        assertEquals("XsRolling(window 3, batch 2, D 2, F32)[seen 4]", x.toString());
    }

    @Test
    void xsRollingAppendRefusesRankShapeAndDtypeNamingKOrV() {
        XsRolling x = XsRolling.create(1, 4, 2, DType.F32, Device.CPU);
        Tensor rank3 = Tensor.zeros(DType.F32, Device.CPU, 1, 2, 2);
        refused("k.rank = 3: must be 4 [B, 1, t, D]", () -> x.append(rank3, rank3));
        Tensor k = positions(1, 0, 2, 2, 0f);
        refused("v.shape = [1, 1, 3, 2]: must equal k.shape [1, 1, 2, 2]", () -> x.append(k, positions(1, 0, 3, 2, 0f)));
        Tensor bf = Tensor.zeros(DType.BF16, Device.CPU, 1, 1, 2, 2);
        refusedLike("k = Tensor#", ": must have the cache's dtype F32 and device cpu", () -> x.append(bf, k));
        refusedLike("v = Tensor#", ": must have the cache's dtype F32 and device cpu", () -> x.append(k, bf));
        assertEquals(0, x.currentSeqLen());
    }

    // ---- SingleCache ----

    @Test
    void singleCacheCreateAndOfRefuseEachBound() {
        refused("batch * capacity * headDim = 4294967296: must be <= 2^31-9",
                () -> SingleCache.create(1 << 15, 1 << 15, 4, DType.F32, Device.CPU));
        Tensor rank3 = Tensor.zeros(DType.F32, Device.CPU, 1, 2, 2);
        refused("k.rank = 3: must be 4 [B, 1, t, D]", () -> SingleCache.of(rank3, rank3, 4));
        Tensor noBatch = Tensor.zeros(DType.F32, Device.CPU, 0, 1, 2, 2);
        refused("k.shape = [0, 1, 2, 2]: must have B >= 1 and D >= 1", () -> SingleCache.of(noBatch, noBatch, 4));
        Tensor noDim = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 2, 0);
        refused("k.shape = [1, 1, 2, 0]: must have B >= 1 and D >= 1", () -> SingleCache.of(noDim, noDim, 4));
        Tensor one = positions(1, 0, 1, 1, 0f);
        assertEquals(1, SingleCache.of(one, one, 1).currentSeqLen());
    }

    @Test
    void singleCacheAppendsEachRowAtItsOwnEndColumn() {
        // B = 2, capacity 4, D = 2: one token, then two; row b holds positions 0..2 of its own stream.
        SingleCache c = SingleCache.create(2, 4, 2, DType.F32, Device.CPU);
        c.append(positions(2, 0, 1, 2, 0f), positions(2, 0, 1, 2, 0.5f));
        c.append(positions(2, 1, 2, 2, 0f), positions(2, 1, 2, 2, 0.5f));
        for (int b = 0; b < 2; b++) {
            holdsPositions(c.k(), b, 0, 0f);
            holdsPositions(c.v(), b, 0, 0.5f);
        }
        SingleCache r1 = c.row(1);
        assertEquals(1, r1.batch());
        assertEquals(3, r1.currentSeqLen());
        assertEquals(3, r1.written());
        for (int i = 0; i < 3; i++) {
            for (int ch = 0; ch < 2; ch++) {
                assertEquals(val(1, i, ch), r1.k().get(0, 0, i, ch));
                assertEquals(val(1, i, ch) + 0.5f, r1.v().get(0, 0, i, ch));
            }
        }
        refused("row = 2: must lie in [0, 2)", () -> c.row(2));
        refused("row = -1: must lie in [0, 2)", () -> c.row(-1));
        assertEquals("SingleCache(batch 2, capacity 4, D 2, F32)", c.describe());
        assertEquals("SingleCache(batch 2, capacity 4, D 2, F32)[current_seq_len 3, written 3]", c.toString());
        SingleCache aliased = SingleCache.create(1, 2, 1, DType.F32);
        assertEquals("SingleCache(batch 1, capacity 2, D 1, F32)[current_seq_len 0, written 0, V=K]",
                aliased.toString());
    }

    @Test
    void singleCacheSetLenAcceptsTheFullCapacityAndKeepsItsViewsFresh() {
        SingleCache c = SingleCache.create(1, 3, 1, DType.F32, Device.CPU);
        Tensor t3 = positions(1, 0, 3, 1, 0f);
        c.append(t3, t3);
        c.setLen(1);
        c.setLen(3); // n == capacity == written: inside both bounds
        assertEquals(3, c.currentSeqLen());
        // views: read, change the length, append, read again: the second read must see the append
        SingleCache d = SingleCache.create(1, 4, 1, DType.F32, Device.CPU);
        Tensor t2 = positions(1, 0, 2, 1, 0f);
        d.append(t2, t2);
        assertEquals(2, d.k().dim(2));
        d.setLen(1);
        Tensor p1 = positions(1, 1, 1, 1, 0.25f);
        d.append(p1, p1);
        assertEquals(2, d.k().dim(2));
        assertEquals(val(0, 1, 0) + 0.25f, d.k().get(0, 0, 1, 0));
    }

    @Test
    void sameContentsComparesEveryStoredBit() {
        SingleCache a = SingleCache.create(1, 2, 2, DType.F32, Device.CPU);
        Tensor t = positions(1, 0, 2, 2, 0f);
        a.append(t, t);
        SingleCache b = a.copy();
        assertTrue(a.sameContents(b));
        assertTrue(a.identicalTo(b));
        SingleCache c = SingleCache.create(1, 2, 2, DType.F32, Device.CPU);
        Tensor u = positions(1, 0, 2, 2, 0f);
        u.set(99f, 0, 0, 1, 1);
        c.append(u, u);
        assertFalse(a.sameContents(c));
        assertFalse(c.sameContents(a));
    }

    // ---- NormalCache ----

    @Test
    void normalCacheRefusalsGettersAndTexts() {
        refused("numLayers = 0: must be >= 1", () -> NormalCache.create(0, 1, 2, 1, DType.F32, Device.CPU));
        NormalCache n = NormalCache.create(1, 1, 2, 3, DType.BF16, Device.CPU);
        assertEquals(2, n.capacity());
        assertEquals(3, n.headDim());
        assertEquals(DType.BF16, n.dtype());
        refused("layers = []: must hold at least one layer", () -> NormalCache.of(List.of()));
        assertEquals("NormalCache(1 layers of SingleCache(batch 1, capacity 2, D 3, BF16))[current_seq_len 0]",
                n.toString());
    }

    @Test
    void normalCacheSetLenAcceptsTheFullCapacity() {
        NormalCache n = NormalCache.create(2, 1, 2, 1, DType.F32, Device.CPU);
        Tensor t = positions(1, 0, 2, 1, 0f);
        n.layer(0).append(t, t);
        n.layer(1).append(t, t);
        n.setLen(1);
        n.setLen(2); // n == capacity == written of every layer
        assertEquals(2, n.currentSeqLen());
        assertEquals(2, n.layer(1).currentSeqLen());
    }

    @Test
    void normalCacheSameContentsIsFalseForAnyDifference() {
        NormalCache a = NormalCache.create(2, 1, 2, 1, DType.F32, Device.CPU);
        Tensor t = positions(1, 0, 1, 1, 0f);
        a.layer(1).append(t, t);
        assertTrue(a.sameContents(a.copy()));
        assertTrue(a.identicalTo(a.copy()));
        NormalCache b = NormalCache.create(2, 1, 2, 1, DType.F32, Device.CPU);
        assertFalse(a.sameContents(b));
        assertFalse(a.identicalTo(b));
        assertFalse(a.sameContents(null));
        assertFalse(a.sameContents(NormalCache.create(1, 1, 2, 1, DType.F32, Device.CPU)));
        assertFalse(a.identicalTo(NormalCache.create(3, 1, 2, 1, DType.F32, Device.CPU)));
    }

    // ---- PagedCache and BlockTable ----

    @Test
    void pagedCacheConstructorRefusesEachBoundAndAcceptsTheSmallest() {
        PagedCache one = new PagedCache(1, 1, 1, DType.F32);
        assertEquals(1, one.blockSize());
        assertEquals(1, one.numBlocks());
        assertEquals(1, one.headDim());
        assertEquals(DType.F32, one.dtype());
        refused("blockSize = 0: must be >= 1", () -> new PagedCache(0, 1, 1, DType.F32));
        refused("numBlocks = 0: must be >= 1", () -> new PagedCache(1, 0, 1, DType.F32));
        refused("headDim = 0: must be >= 1", () -> new PagedCache(1, 1, 0, DType.F32));
        refused("blockSize * numBlocks * headDim = 4294967296: must be <= 2^31-9",
                () -> new PagedCache(1 << 15, 1 << 15, 4, DType.F32));
        PagedCache p = new PagedCache(2, 3, 4, DType.BF16);
        assertEquals(3, p.numBlocks());
        assertEquals(4, p.headDim());
        assertEquals(DType.BF16, p.dtype());
        assertEquals("PagedCache(3 blocks of 2, D 4, BF16)", p.describe());
        assertEquals("PagedCache(3 blocks of 2, D 4, BF16)[3 free]", p.toString());
    }

    @Test
    void blockTableSlotsRefuseFreedTablesAndPositionsOutsideTheLength() {
        PagedCache p = new PagedCache(2, 3, 1, DType.F32);
        BlockTable t = p.newTable();
        int[] slots = p.appendSlots(t, 3);
        assertArrayEquals(new int[] {0, 1, 2}, slots);
        assertEquals(0, t.slot(0));
        assertEquals(2, t.slot(2));
        refused("pos = 3: must lie in [0, length = 3)", () -> t.slot(3));
        refused("pos = -1: must lie in [0, length = 3)", () -> t.slot(-1));
        assertEquals("BlockTable[0, 1][length 3]", t.toString());
        assertEquals("PagedCache(3 blocks of 2, D 1, F32)[1 free]", p.toString());
        p.free(t);
        assertEquals("BlockTable[][length 0, freed]", t.toString());
        refused("table = BlockTable[][length 0, freed]: must not be freed", () -> t.slot(0));
        refused("table = BlockTable[][length 0, freed]: must not be freed", () -> p.appendSlots(t, 1));
        BlockTable foreign = new PagedCache(2, 3, 1, DType.F32).newTable();
        refused("table = BlockTable[][length 0]: must belong to this PagedCache(3 blocks of 2, D 1, F32)",
                () -> p.appendSlots(foreign, 1));
    }

    @Test
    void pagedGatherAcceptsTheWholeLengthAndReshapeRefusesShapeAndDtype() {
        PagedCache p = new PagedCache(2, 2, 2, DType.F32);
        BlockTable t = p.newTable();
        Tensor k = positions(1, 0, 3, 2, 0f);
        Tensor v = positions(1, 0, 3, 2, 0.5f);
        p.reshapeAndCache(k, v, p.appendSlots(t, 3));
        PagedCache.Gathered g = p.gather(t, 3); // len == table.length()
        holdsPositions(g.k(), 0, 0, 0f);
        holdsPositions(g.v(), 0, 0, 0.5f);
        assertEquals(0, p.gather(t, 0).k().dim(2));
        refused("len = 4: must lie in [0, table.length() = 3]", () -> p.gather(t, 4));
        int[] slots = {0, 1, 2};
        refused("v.shape = [1, 1, 2, 2]: must equal k.shape [1, 1, 3, 2]",
                () -> p.reshapeAndCache(k, positions(1, 0, 2, 2, 0f), slots));
        Tensor bf = Tensor.zeros(DType.BF16, Device.CPU, 1, 1, 3, 2);
        refusedLike("k = Tensor#", ": must have the pool dtype F32 and device cpu", () -> p.reshapeAndCache(bf, v, slots));
        refusedLike("v = Tensor#", ": must have the pool dtype F32 and device cpu", () -> p.reshapeAndCache(k, bf, slots));
    }

    // ---- Aligned ----

    @Test
    void alignedEqualityNeedsTheSameCacheAndTheSameLeads() {
        SingleCache c = SingleCache.create(1, 2, 1, DType.F32);
        SingleCache other = SingleCache.create(1, 2, 1, DType.F32);
        Aligned<SingleCache> a = new Aligned<>(c, new int[] {0, 2});
        Aligned<SingleCache> same = new Aligned<>(c, new int[] {0, 2});
        assertEquals(a, same);
        assertEquals(same, a);
        assertEquals(a.hashCode(), same.hashCode());
        assertNotEquals(a, new Aligned<>(c, new int[] {0, 1}));
        assertNotEquals(new Aligned<>(c, new int[] {0, 1}), a);
        assertNotEquals(a, new Aligned<>(other, new int[] {0, 2}));
        assertNotEquals(a, (Object) "Aligned");
        assertEquals("Aligned[" + c + ", leads [0, 2]]", a.toString());
    }

    // ---- CacheOps ----

    @Test
    void frontAlignLayersRefusesEmptyBatchedAndMismatchedRowsWithItsOwnTexts() {
        refused("rows = []: must hold at least one row", () -> CacheOps.frontAlignLayers(List.of()));
        NormalCache batched = NormalCache.create(2, 2, 4, 1, DType.F32, Device.CPU);
        refused("rows[0].batch = 2: must be 1 (one row per cache)", () -> CacheOps.frontAlignLayers(List.of(batched)));
        NormalCache two = NormalCache.create(2, 1, 4, 1, DType.F32, Device.CPU);
        NormalCache three = NormalCache.create(3, 1, 4, 1, DType.F32, Device.CPU);
        refused("rows[1].numLayers = 3: must equal rows[0].numLayers = 2",
                () -> CacheOps.frontAlignLayers(List.of(two, three)));
        // Row 1 differs in capacity AND its layers differ in length: the geometry is named first.
        SingleCache l0 = SingleCache.create(1, 8, 1, DType.F32);
        Tensor t = positions(1, 0, 1, 1, 0f);
        l0.append(t, t);
        NormalCache wide = NormalCache.of(List.of(l0, SingleCache.create(1, 8, 1, DType.F32)));
        refused("rows[1].capacity = 8: must equal rows[0].capacity = 4",
                () -> CacheOps.frontAlignLayers(List.of(two, wide)));
    }

    @Test
    void cloneOutCacheChecksTheDeadPrefixOfTheRowItNames() {
        // B = 2, capacity 4, D = 2, width 3. Row 0 (live 3) holds zeros at columns 0 and 1 (live zeros are allowed);
        // row 1 (live 2) has a nonzero column 0, inside its dead prefix of 1 column.
        float[] x = new float[2 * 3 * 2];
        for (int p = 0; p < 3; p++) {
            for (int c = 0; c < 2; c++) {
                x[(0 * 3 + p) * 2 + c] = p < 2 ? 0f : val(0, p, c);
                x[(1 * 3 + p) * 2 + c] = val(1, p, c);
            }
        }
        Tensor k = Tensor.of(x, DType.F32, Device.CPU, 2, 1, 3, 2);
        SingleCache c = SingleCache.create(2, 4, 2, DType.F32);
        c.append(k, k);
        refused("liveLengths[1] = 2: must leave a zero-filled dead prefix of 1 column(s) in row 1, but K at column 0 is"
                + " nonzero (a live token would be dropped)", () -> CacheOps.cloneOutCache(c, new int[] {3, 2}));
        assertEquals(2, CacheOps.cloneOutCache(c, new int[] {3, 3}).size());
    }

    @Test
    void dropDeadPrefixNamesAVElementLeftInTheDeadPrefix() {
        // Split V, D = 2: K is zero at columns 0 and 1, V is zero at column 0 and nonzero at column 1.
        float[] k = new float[3 * 2];
        float[] v = new float[3 * 2];
        k[4] = 1f;
        v[2] = 2f;
        v[4] = 3f;
        SingleCache c = SingleCache.create(1, 4, 2, DType.F32);
        c.append(Tensor.of(k, DType.F32, Device.CPU, 1, 1, 3, 2), Tensor.of(v, DType.F32, Device.CPU, 1, 1, 3, 2));
        refused("lead = 2: must leave a zero-filled dead prefix of 2 column(s) in row 0, but V at column 1 is nonzero"
                + " (a live token would be dropped)", () -> CacheOps.dropDeadPrefix(c, 2));
        CacheOps.dropDeadPrefix(c, 1);
        assertEquals(2, c.currentSeqLen());
    }
}
