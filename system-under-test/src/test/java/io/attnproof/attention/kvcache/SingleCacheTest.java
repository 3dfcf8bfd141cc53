package io.attnproof.attention.kvcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** SingleCache and NormalCache semantics: append, the live span, set_len, rows, V ≡ K handle sharing. */
class SingleCacheTest {
    static Tensor kv(float... values) {
        return Tensor.of(values, DType.F32, Device.CPU, 1, 1, values.length, 1);
    }

    @Test
    void appendGrowsEveryRowAtTheEndColumn() {
        SingleCache c = SingleCache.create(2, 5, 2, DType.F32);
        Tensor k = Tensor.of(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, DType.F32, Device.CPU, 2, 1, 2, 2);
        c.append(k, k);
        Tensor more = Tensor.of(new float[] {9, 10, 11, 12}, DType.F32, Device.CPU, 2, 1, 1, 2);
        c.append(more, more);
        assertEquals(3, c.currentSeqLen());
        assertArrayEquals(new int[] {2, 1, 3, 2}, c.k().shape());
        assertArrayEquals(new float[] {1, 2, 3, 4, 9, 10, 5, 6, 7, 8, 11, 12}, c.k().toFloatArray());
        assertArrayEquals(new float[] {5, 6, 7, 8, 11, 12}, c.row(1).k().toFloatArray());
        assertEquals(1, c.row(1).batch());
        assertTrue(c.k().isReadOnly(), "the live span is a read-only snapshot");
    }

    @Test
    void vPassedAsKsHandleIsReturnedAsKsHandleUntilADistinctVSplitsTheStorage() {
        SingleCache c = SingleCache.create(1, 8, 1, DType.F32);
        Tensor k = kv(1, 2);
        c.append(k, k);
        assertTrue(c.vAliasesK());
        assertSame(c.k(), c.v(), "V4's K = V: one cached span, one handle");
        assertSame(c.k(), c.k(), "the same handle until the cache changes");
        Tensor k2 = kv(3);
        c.append(k2, k2.copy());
        assertFalse(c.vAliasesK(), "a copy is a distinct handle: the storage splits");
        assertNotSame(c.k(), c.v());
        assertArrayEquals(c.k().toFloatArray(), c.v().toFloatArray());
        Tensor k3 = kv(4);
        c.append(k3, k3);
        assertFalse(c.vAliasesK(), "a split stays split");
        assertArrayEquals(new float[] {1, 2, 3, 4}, c.v().toFloatArray(), "an aliased append writes both buffers");
        Tensor other = kv(7);
        c.append(kv(5), other);
        assertArrayEquals(new float[] {1, 2, 3, 4, 5}, c.k().toFloatArray());
        assertArrayEquals(new float[] {1, 2, 3, 4, 7}, c.v().toFloatArray());
    }

    @Test
    void setLenTruncatesAndReExtendsOnlyOverWrittenPositions() {
        SingleCache c = SingleCache.of(kv(1, 2, 3, 4), kv(5, 6, 7, 8), 6);
        Tensor before = c.k();
        c.setLen(2);
        assertNotSame(before, c.k(), "a new span after a change");
        assertArrayEquals(new float[] {1, 2}, c.k().toFloatArray());
        c.setLen(4);
        assertArrayEquals(new float[] {1, 2, 3, 4}, c.k().toFloatArray(), "re-extension over written positions");
        c.setLen(1);
        c.append(kv(9), kv(10));
        assertEquals(4, c.written(), "the high-water mark stays");
        c.setLen(3);
        assertArrayEquals(new float[] {1, 9, 3}, c.k().toFloatArray());
        assertArrayEquals(new float[] {5, 10, 7}, c.v().toFloatArray());
    }

    @Test
    void sixteenBitStorageKeepsTheRoundedValues() {
        Tensor k = Tensor.of(new float[] {1.0f + 0x1p-12f, 3.0f}, DType.F16, Device.CPU, 1, 1, 2, 1);
        SingleCache c = SingleCache.of(k, k, 4);
        assertEquals(DType.F16, c.k().dtype());
        assertArrayEquals(new float[] {1.0f, 3.0f}, c.k().toFloatArray());
    }

    @Test
    void normalCacheSetsEveryLayerAndHandsOutRows() {
        NormalCache n = NormalCache.create(NormalCache.V4_LAYERS, 2, 6, 1, DType.F32, Device.CPU);
        assertEquals(44, n.numLayers());
        for (SingleCache layer : n.layers()) {
            Tensor k = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, DType.F32, Device.CPU, 2, 1, 3, 1);
            layer.append(k, k);
        }
        n.setLen(2);
        for (SingleCache layer : n.layers()) {
            assertEquals(2, layer.currentSeqLen());
        }
        NormalCache row = n.row(1);
        assertEquals(1, row.batch());
        assertArrayEquals(new float[] {4, 5}, row.layer(43).k().toFloatArray());
        assertTrue(n.copy().identicalTo(n));
        assertTrue(n.supportsPerSequenceAdvance());
        assertTrue(n.describe().startsWith("NormalCache(44 layers"));
        assertThrows(UnsupportedOperationException.class, () -> n.layers().clear());
    }

    @Test
    void pagedTablesAllocateOnDemandAndFree() {
        PagedCache p = new PagedCache(4, 3, 2, DType.F32);
        BlockTable t = p.newTable();
        assertArrayEquals(new int[] {0, 1, 2}, p.appendSlots(t, 3));
        assertEquals(2, p.freeBlocks());
        assertArrayEquals(new int[] {3, 4}, p.appendSlots(t, 2));
        assertEquals(1, p.freeBlocks());
        assertArrayEquals(new int[] {0, 1}, t.blocks());
        p.free(t);
        assertEquals(3, p.freeBlocks());
        assertTrue(t.isFreed());
    }
}
