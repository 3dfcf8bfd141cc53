package io.attnproof.attention.dsv4;

import io.attnproof.attention.Require;

/**
 * Where the keys of one call sit: {@code tkFull = rawPrefix + tk}, queries at {@code q0 + r} with
 * {@code q0 = tkFull - tq}, the raw keep span {@code [base, base + keep)} with {@code keep = min(tq + W - 1, tkFull)},
 * and {@code tc} compressed columns. Keys before {@code base} are invisible to every row.
 */
public record UnionGeometry(long tkFull, long q0, long base, int keep, int tc) {

    /** The geometry of a call with {@code tq} queries over {@code tk} passed raw keys and {@code tc} blocks. */
    public static UnionGeometry of(int tq, int tk, int tc, int window, int rawPrefix) {
        Require.nonNegative("t_q", tq);
        Require.nonNegative("t_k", tk);
        Require.nonNegative("t_c", tc);
        Require.that(window >= 1, "slidingWindow", window, "be >= 1");
        Require.nonNegative("rawPrefix", rawPrefix);
        long tkFull = (long) rawPrefix + tk;
        Require.that(tq <= tkFull, "t_q", tq, "be <= t_k_full = rawPrefix + t_k = " + tkFull);
        int keep = (int) Math.min((long) tq + window - 1, tkFull);
        long base = tkFull - keep;
        Require.that(base >= rawPrefix, "base", base, "be >= rawPrefix = " + rawPrefix
                + " (the keep span [base, t_k_full) must lie inside the passed keys; t_q = " + tq + ", W = " + window
                + ", t_k_full = " + tkFull + ")");
        return new UnionGeometry(tkFull, tkFull - tq, base, keep, tc);
    }

    /** Key columns after narrowing: raw keep span then compressed blocks. */
    public int nKeys() {
        return keep + tc;
    }
}
