package io.attnproof.attention.mask;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * The uniform-batch union mask over {@code [raw narrowed ++ compressed]}: column {@code c < keep} is raw key
 * {@code base + c}, admitted to query {@code p = q0 + r} iff {@code p - window < base + c <= p}; column
 * {@code keep + b} is compressed block {@code b}, admitted iff {@code b < floor((p + 1) / ratio)} (never for
 * ratio 0). {@link #admits} is the rule; {@link #materialize} is its dense additive form.
 */
public record UnionMask(long q0, int tq, long base, int keep, int window, int tc, int ratio) {

    public UnionMask {
        Require.that(q0 >= 0, "q0", q0, "be >= 0");
        Require.nonNegative("tq", tq);
        Require.that(base >= 0, "base", base, "be >= 0");
        Require.nonNegative("keep", keep);
        Require.that(window >= 1, "window", window, "be >= 1");
        Require.nonNegative("tc", tc);
        Require.nonNegative("ratio", ratio);
        Require.that(ratio > 0 || tc == 0, "tc", tc, "be 0 on a ratio-0 layer");
    }

    /** Total key columns, raw then compressed. */
    public int nKeys() {
        return keep + tc;
    }

    /** Whether query row {@code r} may attend column {@code c}. */
    public boolean admits(int r, int c) {
        long p = q0 + r;
        if (c < keep) {
            long j = base + c;
            return p - window < j && j <= p;
        }
        return ratio > 0 && c - keep < (p + 1) / ratio;
    }

    /**
     * Raw columns admitted to row {@code r}: {@code [lo, hi)} in narrowed-column space (empty when {@code hi <= lo}).
     * With {@link #compressedCount} this is the rule the CPU kernel reads instead of the dense form.
     */
    public int rawLo(int r) {
        long p = q0 + r;
        return (int) Math.clamp(p - window + 1 - base, 0, keep);
    }

    public int rawHi(int r) {
        long p = q0 + r;
        return (int) Math.clamp(p + 1 - base, 0, keep);
    }

    /** Compressed blocks admitted to row {@code r}: {@code [0, n)}. */
    public int compressedCount(int r) {
        return ratio == 0 ? 0 : (int) Math.min(tc, (q0 + r + 1) / ratio);
    }

    /** Dense additive form {@code [1, 1, tq, nKeys]}: 0 where admitted, -inf elsewhere; read-only. */
    public Tensor materialize(DType dtype, Device device) {
        int n = nKeys();
        float[] m = new float[tq * n];
        Arrays.fill(m, Float.NEGATIVE_INFINITY);
        for (int r = 0; r < tq; r++) {
            int row = r * n;
            Arrays.fill(m, row + rawLo(r), row + Math.max(rawLo(r), rawHi(r)), 0f);
            Arrays.fill(m, row + keep, row + keep + compressedCount(r), 0f);
        }
        return Tensor.readOnly(m, dtype, device, 1, 1, tq, n);
    }
}
