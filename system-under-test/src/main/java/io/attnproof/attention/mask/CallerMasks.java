package io.attnproof.attention.mask;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * Composition of a caller's additive mask with the local union mask ({@code compose_caller_mask}): a
 * single-element placeholder is ignored; rank 2 {@code [tq, k]} reads as {@code [1, 1, tq, k]}; rank 4 as is.
 * The query axis is {@code tq} or 1; the key axis is {@code tkFull} (raw only: narrowed to the keep span, zero over
 * the compressed columns) or {@code tkFull + tc}. The result is a new tensor; the local mask is never written.
 */
public final class CallerMasks {
    private CallerMasks() {
    }

    /** Where the narrowed keys sit inside the caller's full key axis. */
    public record Span(int batch, int heads, int tq, long tkFull, long base, int keep, int tc) {
    }

    /**
     * {@code local + caller} broadcast to {@code [B or 1, H or 1, tq, keep + tc]}; {@code local} itself when the
     * caller mask is absent or a placeholder.
     */
    public static Tensor compose(Tensor local, Tensor caller, Span span) {
        if (caller == null || caller.numel() == 1) {
            return local;
        }
        Tensor c4 = switch (caller.rank()) {
            case 2 -> caller.reshape(1, 1, caller.dim(0), caller.dim(1));
            case 4 -> caller;
            default -> throw new IllegalArgumentException("mask.rank = " + caller.rank() + " (shape "
                    + Arrays.toString(caller.shape()) + "): must be 2 [t_q, k] or 4 [B, H, t_q, k]");
        };
        int cb = c4.dim(0);
        int ch = c4.dim(1);
        int cq = c4.dim(2);
        int ck = c4.dim(3);
        Require.that(cb == 1 || cb == span.batch(), "mask.shape[0]", cb, "be 1 or the batch " + span.batch());
        Require.that(ch == 1 || ch == span.heads(), "mask.shape[1]", ch, "be 1 or the head count " + span.heads());
        Require.that(cq == 1 || cq == span.tq(), "mask query axis", cq, "be t_q = " + span.tq() + " or 1");
        boolean rawOnly = ck == span.tkFull();
        Require.that(rawOnly || ck == span.tkFull() + span.tc(), "mask key axis", ck,
                "be t_k_full = " + span.tkFull() + " or t_k_full + t_c = " + (span.tkFull() + span.tc()));
        int keep = span.keep();
        int n = keep + span.tc();
        int lb = local.dim(0);
        int ob = Math.max(lb, cb);
        int oh = ch;
        int tq = span.tq();
        float[] out = new float[ob * oh * tq * n];
        for (int b = 0; b < ob; b++) {
            for (int h = 0; h < oh; h++) {
                for (int r = 0; r < tq; r++) {
                    int row = ((b * oh + h) * tq + r) * n;
                    int localRow = ((lb == 1 ? 0 : b) * tq + r) * n;
                    for (int c = 0; c < n; c++) {
                        float add = 0f;
                        if (c < keep || !rawOnly) {
                            int col = (int) (c < keep ? span.base() + c : span.tkFull() + (c - keep));
                            add = c4.get(cb == 1 ? 0 : b, h, cq == 1 ? 0 : r, col);
                            Require.that(!Float.isNaN(add) && add != Float.POSITIVE_INFINITY, "mask value", add,
                                    "be finite or -inf");
                        }
                        out[row + c] = local.flat(localRow + c) + add;
                    }
                }
            }
        }
        return Tensor.of(out, local.dtype(), local.device(), ob, oh, tq, n);
    }
}
