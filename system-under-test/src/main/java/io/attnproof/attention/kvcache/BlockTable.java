package io.attnproof.attention.kvcache;

import io.attnproof.attention.Require;
import java.util.Arrays;

/**
 * One request's block table in a {@link PagedCache}: the pool blocks holding its positions, in order, and how many
 * positions it has reserved. Position {@code p} lives in slot {@code blocks[p / blockSize] * blockSize + p % blockSize}.
 * Grown by {@link PagedCache#appendSlots}, released by {@link PagedCache#free}; a freed table refuses every use.
 */
public final class BlockTable {
    private final PagedCache owner;
    private int[] blocks = new int[0];
    private int length;
    private boolean freed;

    BlockTable(PagedCache owner) {
        this.owner = owner;
    }

    /** The pool blocks of this table, in position order (a copy). */
    public int[] blocks() {
        return blocks.clone();
    }

    /** Positions reserved so far. */
    public int length() {
        return length;
    }

    public boolean isFreed() {
        return freed;
    }

    /** The pool slot of position {@code pos}. */
    public int slot(int pos) {
        Require.that(!freed, "table", this, "not be freed");
        Require.that(pos >= 0 && pos < length, "pos", pos, "lie in [0, length = " + length + ")");
        int bs = owner.blockSize();
        return blocks[pos / bs] * bs + pos % bs;
    }

    PagedCache owner() {
        return owner;
    }

    void grow(int[] newBlocks, int newLength) {
        int old = blocks.length;
        blocks = Arrays.copyOf(blocks, old + newBlocks.length);
        System.arraycopy(newBlocks, 0, blocks, old, newBlocks.length);
        length = newLength;
    }

    int[] release() {
        int[] out = blocks;
        blocks = new int[0];
        length = 0;
        freed = true;
        return out;
    }

    @Override
    public String toString() {
        return "BlockTable" + Arrays.toString(blocks) + "[length " + length + (freed ? ", freed" : "") + "]";
    }
}
