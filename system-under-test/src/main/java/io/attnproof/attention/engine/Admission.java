package io.attnproof.attention.engine;

import io.attnproof.attention.Require;
import io.attnproof.attention.mask.UnionMask;
import io.attnproof.attention.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Which union columns a query row admits, in column order, and the additive bias of each. Two sources:
 * <ul>
 *   <li>{@link Rule}: a uniform batch without a caller mask. The admitted columns come straight from the rule of the
 *       memoised mask's key ({@link UnionMask#rawLo}, {@link UnionMask#rawHi}, {@link UnionMask#compressedCount}):
 *       the raw window run, then the admitted compressed blocks; no bias. Nothing dense is scanned.</li>
 *   <li>{@link Dense}: an additive mask {@code [B|1, H|1, tq|1, n]} (a ragged cohort's or graph decode's mask, or the
 *       local mask with a caller's composed onto it): every column whose value is not -inf, with that value as its
 *       bias. A mask with an H axis gives each head its own row.</li>
 * </ul>
 * For 0/-inf masks both sources give the same admitted columns for the same rule, hence the same arithmetic. The
 * sinks-attention kernels add {@link Causal}: the fused kernels' bottom-right-aligned causal rule with an optional
 * window, one run of keys per row; their unfused path reads a caller mask through {@link Dense} restricted to that
 * rule (-inf wins).
 */
abstract sealed class Admission permits Admission.Rule, Admission.Dense, Admission.Causal {

    /** Whether heads of one query row may admit different columns (then each head is its own row group). */
    abstract boolean perHead();

    /** Fills {@code row} with the columns query row {@code r} of batch entry {@code b} (head {@code h}) admits. */
    abstract void fill(int b, int h, int r, Row row);

    /** The rule of a uniform union mask: the same admitted columns for every batch entry and head. */
    static Admission rule(UnionMask mask) {
        return new Rule(Require.present("mask", mask));
    }

    /** A dense additive mask {@code [B|1, H|1, tq|1, columns]}. */
    static Admission dense(Tensor mask, int batch, int heads, int tq, int columns) {
        Require.present("mask", mask);
        int[] s = mask.shape();
        Require.that(s.length == 4 && (s[0] == 1 || s[0] == batch) && (s[1] == 1 || s[1] == heads)
                && (s[2] == 1 || s[2] == tq) && s[3] == columns, "mask.shape", s,
                "be [B|1, H|1, t_q|1, n] = [" + batch + "|1, " + heads + "|1, " + tq + "|1, " + columns + "]");
        return new Dense(mask.view(), s[0], s[1], s[2], columns, 1, heads, null);
    }

    /**
     * The fused sinks kernels' rule over {@code tk} keys for {@code tq} query rows: {@code kv_offset = tk - tq}; row
     * r admits key j iff {@code j <= r + kv_offset} and, with {@code window > 0}, {@code j >= r + kv_offset - window
     * + 1}.
     */
    static Causal causal(int tq, int tk, int window) {
        return new Causal(tq, tk, window);
    }

    /**
     * A caller's additive mask {@code [mb, mh, mq, columns]} (each of mb, mh, mq 1 or full) over a GQA call whose batch
     * entries are the (batch, KV head) pairs {@code b' = b * kvHeads + kvh} and whose rows are the {@code group} query
     * heads of that KV head ({@code h = kvh * group + j}), restricted to the columns {@code within} admits.
     */
    static Admission gqaMask(MemorySegment mask, int mb, int mh, int mq, int columns, int kvHeads, int group,
            Causal within) {
        return new Dense(mask, mb, mh, mq, columns, kvHeads, group, within);
    }

    /** One query row's admitted columns in order, and their biases (when any is non-zero). Reused scratch. */
    static final class Row {
        int count;
        int[] cols = new int[0];
        /** {@code bias[i]} is added to the score of admitted column {@code cols[i]}; read only when {@link #biased}. */
        float[] bias = new float[0];
        boolean biased;

        void reset(int capacity) {
            count = 0;
            biased = false;
            // Room past the last column: vector loads of a partial chunk may read up to 64 slots beyond count.
            if (cols.length < capacity + 64) {
                cols = new int[capacity + 64];
                bias = new float[capacity + 64];
            }
        }

        void addRun(int from, int to) {
            for (int c = from; c < to; c++) {
                cols[count] = c;
                bias[count] = 0f;
                count++;
            }
        }
    }

    static final class Rule extends Admission {
        private final UnionMask mask;

        Rule(UnionMask mask) {
            this.mask = mask;
        }

        @Override
        boolean perHead() {
            return false;
        }

        @Override
        void fill(int b, int h, int r, Row row) {
            row.reset(mask.nKeys());
            int lo = mask.rawLo(r);
            row.addRun(lo, Math.max(lo, mask.rawHi(r)));
            row.addRun(mask.keep(), mask.keep() + mask.compressedCount(r));
        }
    }

    static final class Dense extends Admission {
        private final MemorySegment mask;
        private final int mb;
        private final int mh;
        private final int mq;
        private final int columns;
        private final int kvHeads;
        private final int group;
        private final Causal within;

        Dense(MemorySegment mask, int mb, int mh, int mq, int columns, int kvHeads, int group, Causal within) {
            this.mask = mask;
            this.mb = mb;
            this.mh = mh;
            this.mq = mq;
            this.columns = columns;
            this.kvHeads = kvHeads;
            this.group = group;
            this.within = within;
        }

        @Override
        boolean perHead() {
            return mh > 1;
        }

        @Override
        void fill(int b, int h, int r, Row row) {
            row.reset(columns);
            int mbIndex = b / kvHeads;
            int mhIndex = b % kvHeads * group + h;
            long base = ((((long) (mb == 1 ? 0 : mbIndex) * mh + (mh == 1 ? 0 : mhIndex)) * mq + (mq == 1 ? 0 : r))
                    * columns);
            int from = within == null ? 0 : within.lo(r);
            int to = within == null ? columns : within.hi(r) + 1;
            for (int c = from; c < to; c++) {
                float x = mask.getAtIndex(ValueLayout.JAVA_FLOAT, base + c);
                if (x != Float.NEGATIVE_INFINITY) {
                    row.cols[row.count] = c;
                    row.bias[row.count] = x;
                    row.count++;
                    row.biased |= x != 0f;
                }
            }
        }
    }

    /** The fused sinks kernels' causal (and windowed) rule: one run of keys per row, the same for every head. */
    static final class Causal extends Admission {
        private final int tq;
        private final int tk;
        private final int window;

        Causal(int tq, int tk, int window) {
            this.tq = tq;
            this.tk = tk;
            this.window = window;
        }

        /** The first key row {@code r} admits (past {@link #hi} when it admits none). */
        int lo(int r) {
            long diagonal = (long) r + tk - tq;
            return (int) Math.max(0, window == 0 ? 0 : diagonal - window + 1);
        }

        /** The last key row {@code r} admits. */
        int hi(int r) {
            long diagonal = (long) r + tk - tq;
            return (int) Math.max(-1, Math.min(tk - 1L, diagonal));
        }

        @Override
        boolean perHead() {
            return false;
        }

        @Override
        void fill(int b, int h, int r, Row row) {
            row.reset(tk);
            int lo = lo(r);
            row.addRun(lo, Math.max(lo, hi(r) + 1));
        }
    }
}
