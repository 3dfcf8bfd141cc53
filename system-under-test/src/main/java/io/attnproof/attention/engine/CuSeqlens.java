package io.attnproof.attention.engine;

import io.attnproof.attention.Require;

/**
 * Validated packed-row boundaries of a varlen call: sequence i owns packed query rows {@code [q[i], q[i+1])} and
 * packed keys {@code [k[i], k[i+1])}; both vectors start at 0, never decrease, have equal lengths and stay within
 * the packed lengths.
 */
public record CuSeqlens(int[] q, int[] k) {

    public CuSeqlens {
        q = q.clone();
        k = k.clone();
    }

    /** Checks {@code cuSeqlensQ} against {@code totalQ} packed query rows and {@code cuSeqlensK} against {@code totalK}. */
    public static CuSeqlens of(int[] cuSeqlensQ, int[] cuSeqlensK, int totalQ, int totalK) {
        check("cu_seqlens_q", cuSeqlensQ, totalQ, "q");
        check("cu_seqlens_k", cuSeqlensK, totalK, "k");
        Require.that(cuSeqlensK.length == cuSeqlensQ.length, "cu_seqlens_k.length", cuSeqlensK.length,
                "equal cu_seqlens_q.length = " + cuSeqlensQ.length + " (one boundary per sequence, plus the start)");
        return new CuSeqlens(cuSeqlensQ, cuSeqlensK);
    }

    /** The number of packed sequences. */
    public int sequences() {
        return q.length - 1;
    }

    /** Query rows of sequence {@code i}. */
    public int qLen(int i) {
        return q[i + 1] - q[i];
    }

    /** Keys of sequence {@code i}. */
    public int kvLen(int i) {
        return k[i + 1] - k[i];
    }

    /** The longest sequence's query rows ({@code max_q}); 0 with no sequences. */
    public int maxQ() {
        int max = 0;
        for (int i = 0; i < sequences(); i++) {
            max = Math.max(max, qLen(i));
        }
        return max;
    }

    private static void check(String name, int[] cu, int packed, String tensor) {
        Require.present(name, cu);
        Require.that(cu.length >= 1 && cu[0] == 0, name, cu, "start at 0");
        for (int i = 1; i < cu.length; i++) {
            Require.that(cu[i] >= cu[i - 1], name, cu,
                    "be non-decreasing (entry " + i + " = " + cu[i] + " < entry " + (i - 1) + " = " + cu[i - 1] + ")");
        }
        Require.that(cu[cu.length - 1] <= packed, name, cu,
                "end within the packed length " + packed + " of " + tensor);
    }
}
