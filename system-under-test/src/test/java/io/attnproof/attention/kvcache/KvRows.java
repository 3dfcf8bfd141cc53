package io.attnproof.attention.kvcache;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.tolerance.Diff;
import java.util.SplittableRandom;

/** Seeded cache contents and bit-level comparisons for the K1 tests (test code only). */
final class KvRows {
    private KvRows() {
    }

    /** A [b,1,t,d] tensor of values with magnitude in [0.25, 1) and a random sign: never zero at any dtype. */
    static Tensor tokens(SplittableRandom rnd, int b, int t, int d, DType dtype) {
        float[] x = new float[b * t * d];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) ((rnd.nextBoolean() ? 1 : -1) * (0.25 + 0.75 * rnd.nextDouble()));
        }
        return Tensor.of(x, dtype, Device.CPU, b, 1, t, d);
    }

    /**
     * A one-row cache of {@code live} nonzero tokens appended in random chunks of 1..4; V is K's handle when
     * {@code aliased}, else an independent stream (so a K/V mix-up shows).
     */
    static SingleCache row(SplittableRandom rnd, int live, int capacity, int d, DType dtype, boolean aliased) {
        return batch(rnd, 1, live, capacity, d, dtype, aliased);
    }

    /** A batched cache of {@code len} tokens per row, appended in random chunks of 1..4. */
    static SingleCache batch(SplittableRandom rnd, int b, int len, int capacity, int d, DType dtype, boolean aliased) {
        SingleCache c = SingleCache.create(b, capacity, d, dtype);
        int done = 0;
        while (done < len) {
            int t = Math.min(len - done, 1 + rnd.nextInt(4));
            Tensor k = tokens(rnd, b, t, d, dtype);
            c.append(k, aliased ? k : tokens(rnd, b, t, d, dtype));
            done += t;
        }
        return c;
    }

    /**
     * Elements of the live K and V spans whose raw bits differ; when the spans differ in shape every element of the
     * larger pair counts (at least 1).
     */
    static long bitsDiffering(SingleCache a, SingleCache b) {
        if (a.batch() != b.batch() || a.headDim() != b.headDim() || a.currentSeqLen() != b.currentSeqLen()) {
            return Math.max(1, 2L * Math.max(a.k().numel(), b.k().numel()));
        }
        return Diff.bitsDiffering(a.k().toFloatArray(), b.k().toFloatArray())
                + Diff.bitsDiffering(a.v().toFloatArray(), b.v().toFloatArray());
    }

    /**
     * Cells of row {@code r} of {@code padded} that break front padding of {@code row} by {@code lead}: the prefix
     * {@code [0, lead)} must be zero (K and V), columns {@code [lead, lead + live)} must hold the row's live run bit
     * for bit, and the run must end at the end column. A wrong lead or width counts every cell of the row.
     */
    static long padCellsWrong(SingleCache row, SingleCache padded, int r, int lead) {
        int live = row.currentSeqLen();
        int d = row.headDim();
        int width = padded.currentSeqLen();
        if (lead < 0 || lead + live != width) {
            return Math.max(1, 2L * width * d);
        }
        long wrong = 0;
        Tensor[] got = {padded.k(), padded.v()};
        Tensor[] want = {row.k(), row.v()};
        for (int kv = 0; kv < 2; kv++) {
            for (int p = 0; p < width; p++) {
                for (int c = 0; c < d; c++) {
                    float g = got[kv].get(r, 0, p, c);
                    boolean ok = p < lead ? Float.floatToRawIntBits(g) == 0
                            : Float.floatToRawIntBits(g) == Float.floatToRawIntBits(want[kv].get(0, 0, p - lead, c));
                    wrong += ok ? 0 : 1;
                }
            }
        }
        return wrong;
    }
}
