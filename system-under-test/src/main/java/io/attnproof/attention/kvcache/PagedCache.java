package io.attnproof.attention.kvcache;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * A paged KV cache (engine: the paged-attention arm): separate K and V pools of {@code numBlocks} blocks ×
 * {@code blockSize} slots × {@code headDim}, handed to requests through {@link BlockTable}s on demand.
 * {@link #reshapeAndCache} writes K and V into their pools and refuses V passed as K's own handle (upstream that
 * reads and writes one storage under one lock and deadlocks; the engine passes {@code v = k.copy()}), and
 * {@link #gather} reads a request's span back from each pool, so K and V come back byte-identical when V was
 * written from a copy of K. A refused call writes and allocates nothing. CPU only; not thread-safe.
 */
public final class PagedCache implements KvCache {
    /** K and V gathered for one request: [1,1,len,D] each, never the same handle (two pools). */
    public record Gathered(Tensor k, Tensor v) {
    }

    private final int blockSize;
    private final int numBlocks;
    private final int headDim;
    private final DType dtype;
    private final float[] kPool;
    private final float[] vPool;
    private final BlockTable[] ownerOf;          // the table holding each block, null when free
    private final ArrayDeque<Integer> freeList = new ArrayDeque<>();

    /** Pools of {@code numBlocks} blocks of {@code blockSize} slots × {@code headDim} at {@code dtype}, all free. */
    public PagedCache(int blockSize, int numBlocks, int headDim, DType dtype) {
        Require.that(blockSize >= 1, "blockSize", blockSize, "be >= 1");
        Require.that(numBlocks >= 1, "numBlocks", numBlocks, "be >= 1");
        Require.that(headDim >= 1, "headDim", headDim, "be >= 1");
        Require.present("dtype", dtype);
        Require.arrayLength("blockSize * numBlocks * headDim", (long) blockSize * numBlocks * headDim, "be <= 2^31-9");
        this.blockSize = blockSize;
        this.numBlocks = numBlocks;
        this.headDim = headDim;
        this.dtype = dtype;
        this.kPool = new float[numBlocks * blockSize * headDim];
        this.vPool = new float[numBlocks * blockSize * headDim];
        this.ownerOf = new BlockTable[numBlocks];
        for (int b = 0; b < numBlocks; b++) {
            freeList.addLast(b);
        }
    }

    /** A new, empty block table for one request. */
    public BlockTable newTable() {
        return new BlockTable(this);
    }

    /**
     * Reserves {@code count} more positions for {@code table}, allocating the blocks they need, and returns their
     * slot mapping (positions {@code [length, length + count)}). All or nothing: too few free blocks allocates none.
     *
     * @throws IllegalArgumentException naming the parameter, value and rule
     */
    public int[] appendSlots(BlockTable table, int count) {
        requireLiveTable(table);
        Require.nonNegative("count", count);
        long newLength = (long) table.length() + count;
        long needed = (newLength + blockSize - 1) / blockSize - table.blocks().length;
        Require.that(needed <= freeList.size(), "count", count, "fit the free blocks: it needs " + needed
                + " more block(s) of " + blockSize + " slots, " + freeList.size() + " are free");
        int[] fresh = new int[(int) needed];
        for (int i = 0; i < fresh.length; i++) {
            fresh[i] = freeList.removeFirst();
            ownerOf[fresh[i]] = table;
        }
        int start = table.length();
        table.grow(fresh, (int) newLength);
        int[] slots = new int[count];
        for (int i = 0; i < count; i++) {
            slots[i] = table.slot(start + i);
        }
        return slots;
    }

    /**
     * Returns {@code table}'s blocks to the free list (their contents stay until overwritten); the table is dead after.
     *
     * @throws IllegalArgumentException for a table of another cache or one already freed
     */
    public void free(BlockTable table) {
        requireLiveTable(table);
        for (int b : table.release()) {
            ownerOf[b] = null;
            freeList.addLast(b);
        }
    }

    /** Blocks not held by any table. */
    public int freeBlocks() {
        return freeList.size();
    }

    /**
     * {@code reshape_and_cache}: writes token {@code i} of {@code k} and {@code v} ([1,1,t,D] at the pool dtype)
     * into slot {@code slotMapping[i]} of the K and V pools. Every slot must lie in a block some live table holds,
     * and no slot may repeat. Refuses {@code v} that is {@code k}'s own handle: the upstream kernel writes both pools
     * under one lock while reading k and v, and reading and writing the same storage under that lock self-deadlocks;
     * the engine passes {@code v = k.copy()}.
     *
     * @throws IllegalArgumentException naming the parameter, value and rule; nothing is written then
     */
    public void reshapeAndCache(Tensor k, Tensor v, int[] slotMapping) {
        Require.present("k", k);
        Require.present("v", v);
        Require.present("slotMapping", slotMapping);
        Require.that(!k.id().equals(v.id()), "v", v, "not be k's own handle: reshape_and_cache writes the K and V"
                + " pools under one lock while reading k and v, and writing and reading the same storage under that"
                + " lock self-deadlocks upstream; pass v = k.copy()");
        Require.that(k.rank() == 4 && k.dim(0) == 1 && k.dim(1) == 1 && k.dim(3) == headDim, "k.shape", k.shape(),
                "be [1, 1, t, " + headDim + "] (tokens packed along t, one shared KV head, the pool head dim)");
        Require.that(Arrays.equals(v.shape(), k.shape()), "v.shape", v.shape(),
                "equal k.shape " + Arrays.toString(k.shape()));
        for (Tensor x : new Tensor[] {k, v}) {
            Require.that(x.dtype() == dtype && x.device().equals(Device.CPU), x == k ? "k" : "v", x,
                    "have the pool dtype " + dtype + " and device cpu");
        }
        int t = k.dim(2);
        Require.that(slotMapping.length == t, "slotMapping.length", slotMapping.length, "equal t = " + t);
        int slots = numBlocks * blockSize;
        boolean[] seen = new boolean[slots];
        for (int i = 0; i < t; i++) {
            int s = slotMapping[i];
            Require.that(s >= 0 && s < slots, "slotMapping[" + i + "]", s, "lie in [0, " + slots + ")");
            Require.that(ownerOf[s / blockSize] != null, "slotMapping[" + i + "]", s,
                    "lie in an allocated block (block " + s / blockSize + " is free)");
            Require.that(!seen[s], "slotMapping[" + i + "]", s, "not repeat an earlier slot of the same call");
            seen[s] = true;
        }
        float[] kIn = k.toFloatArray();
        float[] vIn = v.toFloatArray();
        for (int i = 0; i < t; i++) {
            System.arraycopy(kIn, i * headDim, kPool, slotMapping[i] * headDim, headDim);
            System.arraycopy(vIn, i * headDim, vPool, slotMapping[i] * headDim, headDim);
        }
    }

    /**
     * Positions {@code [0, len)} of {@code table}, read from the K pool and from the V pool: two [1,1,len,D] tensors.
     *
     * @throws IllegalArgumentException for a foreign or freed table, or {@code len} outside {@code [0, table.length()]}
     */
    public Gathered gather(BlockTable table, int len) {
        requireLiveTable(table);
        Require.that(len >= 0 && len <= table.length(), "len", len, "lie in [0, table.length() = " + table.length() + "]");
        float[] k = new float[len * headDim];
        float[] v = new float[len * headDim];
        for (int p = 0; p < len; p++) {
            int s = table.slot(p);
            System.arraycopy(kPool, s * headDim, k, p * headDim, headDim);
            System.arraycopy(vPool, s * headDim, v, p * headDim, headDim);
        }
        return new Gathered(Tensor.of(k, dtype, Device.CPU, 1, 1, len, headDim),
                Tensor.of(v, dtype, Device.CPU, 1, 1, len, headDim));
    }

    public int blockSize() {
        return blockSize;
    }

    public int numBlocks() {
        return numBlocks;
    }

    public int headDim() {
        return headDim;
    }

    public DType dtype() {
        return dtype;
    }

    @Override
    public boolean supportsPerSequenceAdvance() {
        return true;
    }

    @Override
    public String describe() {
        return "PagedCache(" + numBlocks + " blocks of " + blockSize + ", D " + headDim + ", " + dtype + ")";
    }

    @Override
    public String toString() {
        return describe() + "[" + freeList.size() + " free]";
    }

    private void requireLiveTable(BlockTable table) {
        Require.present("table", table);
        Require.that(table.owner() == this, "table", table, "belong to this " + describe());
        Require.that(!table.isFreed(), "table", table, "not be freed");
    }
}
