package io.attnproof.attention.mask;

import io.attnproof.attention.Require;
import java.util.Arrays;

/**
 * Per-row past lengths of a left-aligned ragged cohort: {@code rowQ0[i]} is row i's own past length (the engine's
 * {@code seqlen_offsets[i]}), {@code q0} the batch's (the widest row's).
 */
public final class RaggedRows {
    /** The per-sequence KV advance switch that lets per-row offsets reach attention. */
    public static final String PER_SEQ_FLAG = "ARC_MTP_PER_SEQ_KV";

    private RaggedRows() {
    }

    /**
     * {@code resolve_ragged_rows}: the per-row positions when some row differs from {@code q0}, else null (a uniform
     * batch keeps the scalar path). Refuses a vector of the wrong width, a row ahead of the batch, and a batch
     * with no row at the end column.
     */
    public static long[] resolve(long[] rowQ0, long q0, int batch) {
        if (rowQ0 == null) {
            return null;
        }
        Require.that(rowQ0.length == batch, "rowQ0.length", rowQ0.length,
                "equal the batch " + batch + " (rowQ0 = " + Arrays.toString(rowQ0) + ")");
        boolean ragged = false;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < rowQ0.length; i++) {
            Require.that(rowQ0[i] >= 0, "rowQ0[" + i + "]", rowQ0[i], "be >= 0");
            Require.that(rowQ0[i] <= q0, "rowQ0[" + i + "]", rowQ0[i],
                    "be <= the batch q0 = " + q0 + ": a row cannot be ahead of the batch (rowQ0 = "
                            + Arrays.toString(rowQ0) + ")");
            ragged |= rowQ0[i] != q0;
            max = Math.max(max, rowQ0[i]);
        }
        if (!ragged) {
            return null;
        }
        Require.that(max == q0, "max(rowQ0)", max, "equal the batch q0 = " + q0
                + ": some row must sit at the end column (rowQ0 = " + Arrays.toString(rowQ0) + ")");
        return rowQ0.clone();
    }

    /** {@code ragged_row_q0_from}: the per-row offsets when the per-sequence flag is on, else null. */
    public static long[] rowQ0From(long[] seqlenOffsets, boolean perSequenceFlag) {
        return perSequenceFlag && seqlenOffsets != null ? seqlenOffsets.clone() : null;
    }

    /** Whether {@code value} of {@link #PER_SEQ_FLAG} turns the flag on: 1, true, on or yes (any case). */
    public static boolean flagOn(String value) {
        if (value == null) {
            return false;
        }
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "1", "true", "on", "yes" -> true;
            default -> false;
        };
    }
}
