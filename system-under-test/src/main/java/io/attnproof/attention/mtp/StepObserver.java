package io.attnproof.attention.mtp;

/**
 * What one speculative step used for each of the four uses of a row's length, reported where the decoder computes
 * it (before it is used, so a value that then fails still reaches the observer). A no-op unless a test listens.
 */
public interface StepObserver {
    /** Observes nothing. */
    StepObserver NONE = new StepObserver() { };

    /** Use (1): each row's token count and cached length before step {@code step}, and the uncached counts computed. */
    default void uncached(int step, int[] tokens, int[] cached, int[] uncached) {
    }

    /** Use (2): row {@code row}'s uncached tokens are sliced from index {@code from} of its {@code tokens} tokens. */
    default void slice(int step, int row, int from, int tokens) {
    }

    /** Use (3): the per-row offsets handed to attention for rows of {@code cached} lengths (null: the scalar path). */
    default void offsets(int step, int[] cached, long[] rowQ0) {
    }

    /** Use (4): the lengths the step asks each row's cache to record after committing {@code committed} tokens. */
    default void recorded(int step, int[] cached, int[] committed, int[] lengths) {
    }
}
