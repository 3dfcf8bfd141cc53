package io.attnproof.attention.v4;

import io.attnproof.attention.compressor.CompressorState;
import io.attnproof.attention.kvcache.NormalCache;
import java.util.ArrayList;
import java.util.List;

/**
 * One sequence: its tokens, its own one-row KV cache (one layer per attention layer) holding the first
 * {@link #cached()} of them, and one compressor stream per CSA/HCA layer fed with exactly those cached tokens.
 */
public final class RowState {
    final List<Integer> tokens;
    NormalCache cache;
    final CompressorState[] compressors;

    RowState(List<Integer> tokens, NormalCache cache, CompressorState[] compressors) {
        this.tokens = new ArrayList<>(tokens);
        this.cache = cache;
        this.compressors = compressors;
    }

    /** Tokens whose K/V are in the cache: the row's own honest length {@code L_i}. */
    public int cached() {
        return cache.currentSeqLen();
    }

    /** A copy of every token of the row, prompt first. */
    public List<Integer> tokens() {
        return List.copyOf(tokens);
    }

    /** Adds an emitted token (not yet cached). */
    public void append(int token) {
        tokens.add(token);
    }

    public NormalCache cache() {
        return cache;
    }
}
