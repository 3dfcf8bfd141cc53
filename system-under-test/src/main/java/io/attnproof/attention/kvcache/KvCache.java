package io.attnproof.attention.kvcache;

/**
 * A KV cache of the engine (docs/system.md §6): the dense {@link SingleCache} and {@link NormalCache}, the rolling
 * {@link XsRolling} and the block-table {@link PagedCache}. Exactly the caches that can carry a per-row length
 * report {@link #supportsPerSequenceAdvance}.
 */
public sealed interface KvCache permits SingleCache, NormalCache, XsRolling, PagedCache {

    /**
     * The capability {@code cache_supports_per_sequence_advance} (docs/system.md §7): whether each row can keep its own
     * length. True for the dense and paged caches, false for {@link XsRolling}.
     */
    boolean supportsPerSequenceAdvance();

    /** The kind and its geometry in a few words, e.g. {@code XsRolling(window 8, batch 2)}; used in refusal texts. */
    String describe();
}
