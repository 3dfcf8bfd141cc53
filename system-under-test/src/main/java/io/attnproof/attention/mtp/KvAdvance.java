package io.attnproof.attention.mtp;

/**
 * How a speculative step commits KV: COHORT keeps {@code min_i(u_i + a_i)} tokens for every row; PER_SEQUENCE
 * commits {@code u_i + a_i} for row i ({@code u_i} uncached tokens, {@code a_i} accepted drafts).
 */
public enum KvAdvance {
    COHORT,
    PER_SEQUENCE;

    /** Tokens row i commits this step, given every row's {@code u + a}. */
    public int committed(int[] uncachedPlusAccepted, int row) {
        if (this == PER_SEQUENCE) {
            return uncachedPlusAccepted[row];
        }
        int min = Integer.MAX_VALUE;
        for (int c : uncachedPlusAccepted) {
            min = Math.min(min, c);
        }
        return min;
    }
}
