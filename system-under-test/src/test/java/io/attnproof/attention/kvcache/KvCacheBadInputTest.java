package io.attnproof.attention.kvcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.gen.Streams;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Every cache operation refuses bad input with the parameter, the value and the rule, and a refused call leaves
 * nothing partially written: state is snapshotted before each refused call and compared bit for bit after.
 */
class KvCacheBadInputTest {
    static final long SEED = 0x4B31_0401L;

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    /** Refused with {@code message}, and {@code cache} is bit for bit as it was before the call. */
    static void refusedUnchanged(SingleCache cache, String message, Executable call) {
        SingleCache before = cache.copy();
        refused(message, call);
        assertTrue(cache.identicalTo(before), "a refused call changed " + cache);
    }

    static SingleCache row(int live, boolean aliased) {
        return KvRows.row(Streams.row(SEED, live), live, 8, 2, DType.F32, aliased);
    }

    @Test
    void frontPadSingleRefusesTargetBelowLiveBeyondCapacityAndBatches() {
        for (boolean aliased : new boolean[] {true, false}) {
            SingleCache c = row(5, aliased);
            refusedUnchanged(c, "target = 3: must be >= live = 5 (lead = target - live = -2; front_pad_single pads,"
                    + " never truncates)", () -> CacheOps.frontPadSingle(c, 3));
            refusedUnchanged(c, "target = 9: must be <= capacity = 8", () -> CacheOps.frontPadSingle(c, 9));
        }
        SingleCache batched = KvRows.batch(Streams.row(SEED, 9), 2, 3, 8, 2, DType.F32, true);
        refusedUnchanged(batched, "oneRow.batch = 2: must be 1 (one row per cache; row(i) takes one out of a batch)",
                () -> CacheOps.frontPadSingle(batched, 5));
        refused("oneRow = null: must be present", () -> CacheOps.frontPadSingle(null, 5));
    }

    @Test
    void dropDeadPrefixRefusesLeadsBeyondTheLengthAndLiveTokens() {
        for (boolean aliased : new boolean[] {true, false}) {
            SingleCache c = row(3, aliased);
            CacheOps.frontPadSingle(c, 6);
            refusedUnchanged(c, "lead = 7: must be <= current_seq_len = 6", () -> CacheOps.dropDeadPrefix(c, 7));
            refusedUnchanged(c, "lead = -1: must be >= 0", () -> CacheOps.dropDeadPrefix(c, -1));
            refusedUnchanged(c, "lead = 4: must leave a zero-filled dead prefix of 4 column(s) in row 0, but K at column 3"
                    + " is nonzero (a live token would be dropped)", () -> CacheOps.dropDeadPrefix(c, 4));
        }
        // A V-only token in the prefix (K zero there) is live too.
        SingleCache c = SingleCache.create(1, 4, 1, DType.F32);
        c.append(Tensor.of(new float[] {0, 1}, DType.F32, Device.CPU, 1, 1, 2, 1),
                Tensor.of(new float[] {2, 3}, DType.F32, Device.CPU, 1, 1, 2, 1));
        refusedUnchanged(c, "lead = 1: must leave a zero-filled dead prefix of 1 column(s) in row 0, but V at column 0"
                + " is nonzero (a live token would be dropped)", () -> CacheOps.dropDeadPrefix(c, 1));
    }

    @Test
    void appendAndSetLenRefuseLengthsBeyondCapacityAndBadShapes() {
        SingleCache c = row(6, false);
        Tensor three = KvRows.tokens(new SplittableRandom(1), 1, 3, 2, DType.F32);
        refusedUnchanged(c, "current_seq_len + t = 9: must be <= capacity = 8 (current_seq_len 6, t 3)",
                () -> c.append(three, three.copy()));
        refusedUnchanged(c, "current_seq_len + t = 9: must be <= capacity = 8 (current_seq_len 6, t 3)",
                () -> c.append(three, three));
        Tensor wrongD = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 1, 3);
        refusedUnchanged(c, "k.shape = [1, 1, 1, 3]: must be [1, 1, t, 2] (the cache's batch, one shared KV head, its"
                + " head dim)", () -> c.append(wrongD, wrongD));
        Tensor one = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 1, 2);
        Tensor two = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 2, 2);
        refusedUnchanged(c, "v.shape = [1, 1, 2, 2]: must equal k.shape [1, 1, 1, 2]", () -> c.append(one, two));
        Tensor f16 = Tensor.zeros(DType.F16, Device.CPU, 1, 1, 1, 2);
        refusedUnchanged(c, "v = " + f16 + ": must have the cache's dtype F32 and device cpu", () -> c.append(one, f16));
        refusedUnchanged(c, "k.rank = 3: must be 4 [B, 1, t, D]",
                () -> c.append(Tensor.zeros(DType.F32, Device.CPU, 1, 1, 2), one));
        refusedUnchanged(c, "n = 9: must be <= capacity = 8", () -> c.setLen(9));
        refusedUnchanged(c, "n = 7: must be <= written = 6 (set_len truncates, or re-extends only over positions"
                + " already written)", () -> c.setLen(7));
        refusedUnchanged(c, "n = -1: must be >= 0", () -> c.setLen(-1));
        refused("row = 1: must lie in [0, 1)", () -> c.row(1));
        refused("row = -1: must lie in [0, 1)", () -> c.row(-1));
        refused("headDim = 0: must be >= 1", () -> SingleCache.create(1, 4, 0, DType.F32));
        refused("batch = 0: must be >= 1", () -> SingleCache.create(0, 4, 1, DType.F32));
    }

    @Test
    void frontAlignBatchRefusesMismatchedRowsAndChangesNone() {
        SingleCache a = row(3, true);
        List<Executable> calls = new ArrayList<>();
        List<String> messages = new ArrayList<>();
        SingleCache wideD = SingleCache.create(1, 8, 3, DType.F32);
        SingleCache f16 = SingleCache.create(1, 8, 2, DType.F16);
        SingleCache small = SingleCache.create(1, 4, 2, DType.F32);
        SingleCache cuda = SingleCache.create(1, 8, 2, DType.F32, Device.cuda(0));
        SingleCache batched = SingleCache.create(2, 8, 2, DType.F32);
        for (Object[] c : new Object[][] {
                {wideD, "rows[1].headDim = 3: must equal rows[0].headDim = 2"},
                {f16, "rows[1].dtype = F16: must equal rows[0].dtype = F32"},
                {small, "rows[1].capacity = 4: must equal rows[0].capacity = 8"},
                {cuda, "rows[1].device = cuda:0: must equal rows[0].device = cpu"},
                {batched, "rows[1].batch = 2: must be 1 (one row per cache; row(i) takes one out of a batch)"}}) {
            calls.add(() -> CacheOps.frontAlignBatch(List.of(a, (SingleCache) c[0])));
            messages.add((String) c[1]);
        }
        for (int i = 0; i < calls.size(); i++) {
            refusedUnchanged(a, messages.get(i), calls.get(i));
        }
        refused("rows = []: must hold at least one row", () -> CacheOps.frontAlignBatch(List.of()));
    }

    @Test
    void cloneOutCacheRefusesBadLengthsAndLiveTokensInTheDeadPrefix() {
        SingleCache r0 = row(2, false);
        SingleCache r1 = row(5, false);
        SingleCache batched = CacheOps.frontAlignBatch(List.of(r0, r1)).cache();
        refusedUnchanged(batched, "liveLengths.length = 1: must equal the batch 2",
                () -> CacheOps.cloneOutCache(batched, new int[] {2}));
        refusedUnchanged(batched, "liveLengths[1] = 6: must lie in [0, current_seq_len = 5]",
                () -> CacheOps.cloneOutCache(batched, new int[] {2, 6}));
        refusedUnchanged(batched, "liveLengths[0] = -1: must lie in [0, current_seq_len = 5]",
                () -> CacheOps.cloneOutCache(batched, new int[] {-1, 5}));
        refusedUnchanged(batched, "liveLengths[1] = 4: must leave a zero-filled dead prefix of 1 column(s) in row 1,"
                + " but K at column 0 is nonzero (a live token would be dropped)",
                () -> CacheOps.cloneOutCache(batched, new int[] {2, 4}));
        assertEquals(2, CacheOps.cloneOutCache(batched, new int[] {2, 5}).get(0).currentSeqLen());
    }

    @Test
    void normalCacheRefusalsChangeNoLayer() {
        List<SingleCache> layers = new ArrayList<>();
        for (int l = 0; l < 4; l++) {
            layers.add(KvRows.row(Streams.row(SEED + l, 0), 6, 8, 2, DType.F32, true));
        }
        layers.set(2, KvRows.row(Streams.row(SEED + 2, 0), 4, 8, 2, DType.F32, true)); // written only to 4
        NormalCache n = NormalCache.of(layers);
        NormalCache before = n.copy();
        refused("n = 5: must be <= written = 4 of layer 2 (set_len truncates, or re-extends only over positions already"
                + " written)", () -> n.setLen(5));
        assertTrue(n.identicalTo(before), "no layer may move when one refuses");
        refused("n = 9: must be <= capacity = 8 (layer 0)", () -> n.setLen(9));
        assertTrue(n.identicalTo(before));
        refused("layer = 4: must lie in [0, 4)", () -> n.layer(4));
        refused("layers[1] = " + layers.get(0).describe() + ": must be a distinct SingleCache (it is the same object as"
                + " layers[0])", () -> NormalCache.of(List.of(layers.get(0), layers.get(0))));
        refused("layers[1].batch = 2: must equal layers[0].batch = 1",
                () -> NormalCache.of(List.of(layers.get(0), SingleCache.create(2, 8, 2, DType.F32))));
        refused("rows[0].layer(2).currentSeqLen = 4: must equal rows[0].layer(0).currentSeqLen = 6 (a row's layers"
                + " share one length, hence one lead)", () -> CacheOps.frontAlignLayers(List.of(n)));
        assertTrue(n.identicalTo(before));
        NormalCache batched = NormalCache.create(3, 2, 8, 2, DType.F32, Device.CPU);
        refused("layer 0: liveLengths.length = 3: must equal the batch 2",
                () -> CacheOps.cloneOutCache(batched, new int[] {0, 0, 0}));
    }

    @Test
    void pagedRefusalsWriteAndAllocateNothing() {
        PagedCache p = new PagedCache(4, 3, 2, DType.F32);
        BlockTable t = p.newTable();
        int[] slots = p.appendSlots(t, 6);
        Tensor k = KvRows.tokens(new SplittableRandom(3), 1, 6, 2, DType.F32);
        p.reshapeAndCache(k, k.copy(), slots);
        float[] beforeK = p.gather(t, 6).k().toFloatArray();
        float[] beforeV = p.gather(t, 6).v().toFloatArray();
        Tensor fresh = KvRows.tokens(new SplittableRandom(4), 1, 3, 2, DType.F32);
        refused("slotMapping[2] = 12: must lie in [0, 12)",
                () -> p.reshapeAndCache(fresh, fresh.copy(), new int[] {0, 1, 12}));
        refused("slotMapping[2] = 9: must lie in an allocated block (block 2 is free)",
                () -> p.reshapeAndCache(fresh, fresh.copy(), new int[] {0, 1, 9}));
        refused("slotMapping[2] = 0: must not repeat an earlier slot of the same call",
                () -> p.reshapeAndCache(fresh, fresh.copy(), new int[] {0, 1, 0}));
        refused("slotMapping.length = 2: must equal t = 3", () -> p.reshapeAndCache(fresh, fresh.copy(), new int[] {0, 1}));
        refused("k.shape = [1, 1, 1, 3]: must be [1, 1, t, 2] (tokens packed along t, one shared KV head, the pool head"
                + " dim)", () -> p.reshapeAndCache(Tensor.zeros(DType.F32, Device.CPU, 1, 1, 1, 3),
                        Tensor.zeros(DType.F32, Device.CPU, 1, 1, 1, 3), new int[] {0}));
        assertArrayEquals(beforeK, p.gather(t, 6).k().toFloatArray(), "a refused write leaves the K pool");
        assertArrayEquals(beforeV, p.gather(t, 6).v().toFloatArray(), "a refused write leaves the V pool");

        refused("count = 7: must fit the free blocks: it needs 2 more block(s) of 4 slots, 1 are free",
                () -> p.appendSlots(t, 7));
        assertEquals(1, p.freeBlocks(), "a refused reservation allocates nothing");
        assertEquals(6, t.length());
        refused("len = 7: must lie in [0, table.length() = 6]", () -> p.gather(t, 7));
        BlockTable foreign = new PagedCache(4, 3, 2, DType.F32).newTable();
        refused("table = " + foreign + ": must belong to this " + p.describe(), () -> p.gather(foreign, 0));
        p.free(t);
        refused("table = " + t + ": must not be freed", () -> p.gather(t, 0));
        refused("table = " + t + ": must not be freed", () -> p.free(t));
        assertEquals(3, p.freeBlocks());
        refused("blockSize = 0: must be >= 1", () -> new PagedCache(0, 3, 2, DType.F32));
    }

    @Test
    void xsRollingRefusesBadAppendsAndChangesNothing() {
        XsRolling xs = XsRolling.create(1, 3, 2, DType.F32, Device.CPU);
        Tensor k = KvRows.tokens(new SplittableRandom(5), 1, 2, 2, DType.F32);
        xs.append(k, k);
        float[] before = xs.k().toFloatArray();
        Tensor wrong = Tensor.zeros(DType.F32, Device.CPU, 2, 1, 1, 2);
        refused("k.shape = [2, 1, 1, 2]: must be [1, 1, t, 2] (the cache's batch, one shared KV head, its head dim)",
                () -> xs.append(wrong, wrong));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> xs.setRowLens(new int[] {1}));
        assertTrue(e.getMessage().contains("cache_supports_per_sequence_advance") && e.getMessage().contains("XsRolling"));
        assertArrayEquals(before, xs.k().toFloatArray());
        assertEquals(2, xs.currentSeqLen());
        refused("window = 0: must be >= 1", () -> XsRolling.create(1, 0, 2, DType.F32, Device.CPU));
    }
}
