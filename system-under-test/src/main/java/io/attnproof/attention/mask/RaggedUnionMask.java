package io.attnproof.attention.mask;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * The ragged union mask of a left-aligned cohort ({@code ragged_union_mask}), {@code [B, 1, tq, keep + tc]}. Raw
 * half: the uniform window rule in cache-column space (differences survive left-alignment), plus the dead prefix
 * killed: cache index {@code base + c < lead_i = q0 - rowQ0[i]} is -inf for row i. Compressed half: block b is
 * absolute block b of every row, so its threshold uses the row's own position, {@code b < floor((rowQ0[i] + r + 1) / R)}.
 */
public record RaggedUnionMask(UnionMask uniform, long[] rowQ0) {
    private static final ThreadLocal<long[]> BUILDS = ThreadLocal.withInitial(() -> new long[1]);

    public RaggedUnionMask {
        Require.present("uniform", uniform);
        Require.present("rowQ0", rowQ0);
        for (int i = 0; i < rowQ0.length; i++) {
            Require.that(rowQ0[i] >= 0 && rowQ0[i] <= uniform.q0(), "rowQ0[" + i + "]", rowQ0[i],
                    "lie in [0, q0 = " + uniform.q0() + "]");
        }
        rowQ0 = rowQ0.clone();
    }

    @Override
    public long[] rowQ0() {
        return rowQ0.clone();
    }

    /** Row i's dead prefix: {@code q0 - rowQ0[i]} zero columns ahead of its live tokens. */
    public long lead(int i) {
        return uniform.q0() - rowQ0[i];
    }

    /** Whether query row {@code r} of batch row {@code b} may attend column {@code c}. */
    public boolean admits(int b, int r, int c) {
        if (c < uniform.keep()) {
            return uniform.admits(r, c) && uniform.base() + c >= lead(b);
        }
        return uniform.ratio() > 0 && c - uniform.keep() < (rowQ0[b] + r + 1) / uniform.ratio();
    }

    /** Dense additive form {@code [B, 1, tq, keep + tc]}, read-only; counted in {@link #builds()}. */
    public Tensor materialize(DType dtype, Device device) {
        BUILDS.get()[0]++;
        int n = uniform.nKeys();
        int tq = uniform.tq();
        int keep = uniform.keep();
        float[] m = new float[rowQ0.length * tq * n];
        Arrays.fill(m, Float.NEGATIVE_INFINITY);
        for (int b = 0; b < rowQ0.length; b++) {
            int dead = (int) Math.clamp(lead(b) - uniform.base(), 0, keep);
            for (int r = 0; r < tq; r++) {
                int row = (b * tq + r) * n;
                int lo = Math.max(uniform.rawLo(r), dead);
                Arrays.fill(m, row + lo, row + Math.max(lo, uniform.rawHi(r)), 0f);
                long blocks = uniform.ratio() == 0 ? 0 : Math.min(uniform.tc(), (rowQ0[b] + r + 1) / uniform.ratio());
                Arrays.fill(m, row + keep, row + keep + (int) blocks, 0f);
            }
        }
        return Tensor.readOnly(m, dtype, device, rowQ0.length, 1, tq, n);
    }

    /** Ragged masks this thread has materialised: pins that a uniform batch never reaches the ragged path. */
    public static long builds() {
        return BUILDS.get()[0];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RaggedUnionMask m && uniform.equals(m.uniform) && Arrays.equals(rowQ0, m.rowQ0);
    }

    @Override
    public int hashCode() {
        return 31 * uniform.hashCode() + Arrays.hashCode(rowQ0);
    }

    @Override
    public String toString() {
        return "RaggedUnionMask[" + uniform + ", rowQ0=" + Arrays.toString(rowQ0) + "]";
    }
}
