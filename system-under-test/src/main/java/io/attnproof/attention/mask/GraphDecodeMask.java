package io.attnproof.attention.mask;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * The graph-decode mask: the raw half is the uniform rule, the compressed half is built from each row's own device
 * position, {@code 0 if b < floor((positions[i] + r + 1) / ratio) else -inf}. Never memoised: it must be built
 * inside the captured region.
 */
public record GraphDecodeMask(UnionMask raw, long[] positions) {

    public GraphDecodeMask {
        Require.present("raw", raw);
        Require.present("positions", positions);
        Require.that(raw.ratio() > 0, "compressRatio", raw.ratio(),
                "be CSA(4) or HCA(128) for graph decode: a ratio-0 layer has no compressed half");
        for (long p : positions) {
            Require.that(p >= 0, "graphPositions", positions, "hold positions >= 0");
        }
        positions = positions.clone();
    }

    @Override
    public long[] positions() {
        return positions.clone();
    }

    /** Whether row {@code r} of batch row {@code b} may attend column {@code c}. */
    public boolean admits(int b, int r, int c) {
        if (c < raw.keep()) {
            return raw.admits(r, c);
        }
        return c - raw.keep() < (positions[b] + r + 1) / raw.ratio();
    }

    /** Dense additive form {@code [B, 1, tq, keep + tc]}; with {@code tc == 0} the compressed half is empty. */
    public Tensor materialize(DType dtype, Device device) {
        int n = raw.nKeys();
        int tq = raw.tq();
        Tensor rawDense = raw.materialize(dtype, device);
        float[] m = new float[positions.length * tq * n];
        for (int b = 0; b < positions.length; b++) {
            for (int r = 0; r < tq; r++) {
                int row = (b * tq + r) * n;
                for (int c = 0; c < raw.keep(); c++) {
                    m[row + c] = rawDense.flat(r * n + c);
                }
                long blocks = Math.min(raw.tc(), (positions[b] + r + 1) / raw.ratio());
                Arrays.fill(m, row + raw.keep(), row + n, Float.NEGATIVE_INFINITY);
                Arrays.fill(m, row + raw.keep(), row + raw.keep() + (int) blocks, 0f);
            }
        }
        return Tensor.readOnly(m, dtype, device, positions.length, 1, tq, n);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GraphDecodeMask g && raw.equals(g.raw) && Arrays.equals(positions, g.positions);
    }

    @Override
    public int hashCode() {
        return 31 * raw.hashCode() + Arrays.hashCode(positions);
    }

    @Override
    public String toString() {
        return "GraphDecodeMask[" + raw + ", positions=" + Arrays.toString(positions) + "]";
    }
}
