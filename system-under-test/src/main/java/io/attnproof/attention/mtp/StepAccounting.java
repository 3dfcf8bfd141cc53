package io.attnproof.attention.mtp;

import io.attnproof.attention.Require;

/**
 * The per-row length arithmetic of one fused speculative step. The only honest per-row length is the row's own
 * count of cached tokens {@code L_i}; the batched buffer's width {@code max_j L_j} is never a row's length.
 */
public final class StepAccounting {
    private StepAccounting() {
    }

    /** Use (1): row i's uncached tokens, {@code toks_i - L_i}; refuses a cache that is ahead of its tokens. */
    public static int uncached(int tokens, int cached) {
        Require.that(cached <= tokens, "cached", cached, "be <= the row's token count " + tokens);
        return tokens - cached;
    }

    /** Use (3): the per-row past lengths handed to attention ({@code seqlen_offsets[i] = L_i}). */
    public static long[] seqlenOffsets(int[] cached) {
        long[] out = new long[cached.length];
        for (int i = 0; i < cached.length; i++) {
            out[i] = cached[i];
        }
        return out;
    }

    /** Use (4): the recorded length after committing: {@code L_i + committed_i}, never the width plus it. */
    public static int[] nextLengths(int[] cached, int[] committed) {
        Require.that(cached.length == committed.length, "committed.length", committed.length,
                "equal the batch " + cached.length);
        int[] out = new int[cached.length];
        for (int i = 0; i < cached.length; i++) {
            Require.that(committed[i] >= 0, "committed[" + i + "]", committed[i], "be >= 0");
            out[i] = cached[i] + committed[i];
        }
        return out;
    }

    /** The dead prefix each row carries once the batch is front-aligned: {@code max_j L_j - L_i}. */
    public static int[] leads(int[] recorded) {
        int width = 0;
        for (int l : recorded) {
            width = Math.max(width, l);
        }
        int[] out = new int[recorded.length];
        for (int i = 0; i < recorded.length; i++) {
            out[i] = width - recorded[i];
        }
        return out;
    }
}
