package io.attnproof.attention.engine;

import io.attnproof.attention.dispatch.DispatchRegistry;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Split-K (two-pass) decode of the union kernel (docs/system.md §8, claim B5): a single-query row ({@code t_q == 1}) that
 * admits at least {@link DispatchRegistry#SPLIT_K_MIN_KEYS} keys splits its admitted keys (by ordinal) into chunks of
 * {@link DispatchRegistry#SPLIT_K_CHUNK}. Pass one gives each chunk, with no sink, its running max {@code m_c}, sum
 * of exponentials {@code l_c} and unnormalised output {@code o_c} (the tiles and operations of {@link UnionLanes},
 * the running max started at -inf); the chunks of one row run as separate work items, so a B = 1 decode uses every
 * core. Pass two combines them in chunk order with the sink entering once: {@code m = max(sink, max_c m_c)},
 * {@code l = e^(sink-m) + sum_c e^(m_c-m) l_c}, {@code o = sum_c e^(m_c-m) o_c / l}; zeros when {@code m} is -inf.
 * A row under the threshold is computed exactly as the engines compute it ({@link ScalarLanes}, bit for bit the
 * vector engine). The decision and the chunks depend only on the row's admitted keys, so narrowing, a ragged row
 * against itself alone and the absorbed against the repeat-KV traversal still agree bit for bit. The fused sinks
 * kernels' form ({@link UnionCall.Form#splitOnColumns()}) decides on the kv length instead and chunks on key
 * positions {@code [c * chunk, (c + 1) * chunk)}, as the native kernels do (a window may leave chunks empty); the
 * unfused form never splits.
 */
final class SplitKDecode {
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT;
    private static final UnionLanes.Pool<Scratch> SCRATCH = new UnionLanes.Pool<>(Scratch::new);

    private static final class Scratch {
        final Admission.Row row = new Admission.Row();
        float[] p = new float[LaneMath.TILE];
        float[] q = new float[0];
        float[] k = new float[0];
        float[] v = new float[0];
    }

    private SplitKDecode() {
    }

    /**
     * Whether {@code call} has a split-K row: single-query, and some row admits at least the switch's keys. (A call
     * with none keeps the engine's path, vector engine included; the rows are the same either way.)
     */
    static boolean applies(UnionCall call) {
        if (call.form().twoPass() || !DispatchRegistry.splitK(call.tq(), call.columns())) {
            return false;
        }
        if (call.form().splitOnColumns()) {
            return true;
        }
        Admission.Row row = new Admission.Row();
        int heads = call.admission().perHead() ? call.heads() : 1;
        for (int b = 0; b < call.batch(); b++) {
            for (int h = 0; h < heads; h++) {
                call.admission().fill(b, h, 0, row);
                if (DispatchRegistry.splitK(1, row.count)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Runs {@code call} ({@link #applies} true); returns how many rows took split-K. */
    static int run(UnionCall c) {
        int heads = c.heads();
        int d = c.headDim();
        int chunk = DispatchRegistry.SPLIT_K_CHUNK;
        int chunks = DispatchRegistry.splitChunks(c.columns());
        int rows = c.batch() * heads;
        // Per (row, chunk): m, l, then o[d].
        int stride = d + 2;
        float[] part = new float[rows * chunks * stride];
        int[] counts = new int[rows];
        UnionLanes.forEach(rows * chunks, UnionLanes.parallel(c.macs()), SCRATCH, (s, item) -> {
            int rowIndex = item / chunks;
            int ci = item % chunks;
            int b = rowIndex / heads;
            int h = rowIndex % heads;
            Admission.Row row = s.row;
            c.admission().fill(b, h, 0, row);
            if (ci == 0) {
                counts[rowIndex] = row.count;
            }
            if (!splits(c, row.count)) {
                if (ci == 0) {
                    ScalarLanes.Scratch ss = ScalarLanes.SCRATCH.take();
                    try {
                        ScalarLanes.group(c, b, 0, h, h + 1, ss);
                    } finally {
                        ScalarLanes.SCRATCH.give(ss);
                    }
                }
                return;
            }
            int from = c.form().splitOnColumns() ? ordinalOf(row, ci * chunk) : Math.min(row.count, ci * chunk);
            int to = c.form().splitOnColumns() ? ordinalOf(row, (ci + 1) * chunk) : Math.min(row.count, from + chunk);
            chunkPass(c, b, h, row, from, to, s, part, (rowIndex * chunks + ci) * stride);
        });
        int split = 0;
        for (int rowIndex = 0; rowIndex < rows; rowIndex++) {
            if (!splits(c, counts[rowIndex])) {
                continue;
            }
            split++;
            int b = rowIndex / heads;
            int h = rowIndex % heads;
            combine(part, rowIndex * chunks * stride, chunks, stride, d, c.sink(b, h), c.out(), c.outOffset(b, h, 0));
        }
        return split;
    }

    /** Whether a row admitting {@code count} keys takes split-K (on columns: every row of the call does). */
    private static boolean splits(UnionCall c, int count) {
        return c.form().splitOnColumns() || DispatchRegistry.splitK(1, count);
    }

    /** The first ordinal of {@code row} whose column is at least {@code column} ({@code row.count} if none). */
    private static int ordinalOf(Admission.Row row, int column) {
        // columns increase strictly: found, the ordinal; else the insertion point (-at - 1 from binarySearch)
        int at = Arrays.binarySearch(row.cols, 0, row.count, column);
        return at >= 0 ? at : -at - 1;
    }

    /** Pass one over admitted ordinals {@code [from, to)}: m, l and the unnormalised o, no sink. */
    private static void chunkPass(UnionCall c, int b, int h, Admission.Row row, int from, int to, Scratch s,
            float[] part, int at) {
        int d = c.headDim();
        s.q = UnionLanes.grow(s.q, d);
        s.k = UnionLanes.grow(s.k, LaneMath.TILE * d);
        s.v = UnionLanes.grow(s.v, LaneMath.TILE * d);
        MemorySegment.copy(c.q(), F, c.qByteOffset(b, h, 0), s.q, 0, d);
        float m = Float.NEGATIVE_INFINITY;
        float l = 0f;
        int o = at + 2;
        Arrays.fill(part, o, o + d, 0f);
        for (int t0 = from; t0 < to; t0 += LaneMath.TILE) {
            int tn = Math.min(LaneMath.TILE, to - t0);
            float tileMax = ScalarLanes.scoreTile(c, b, row, t0, tn, s.q, s.k, s.v, s.p);
            float mNew = Math.max(m, tileMax);
            boolean dead = mNew == Float.NEGATIVE_INFINITY;
            float alpha = dead ? 0f : LaneMath.exp(m - mNew);
            l = l * alpha;
            for (int i = 0; i < tn; i++) {
                float p = dead ? 0f : LaneMath.exp(s.p[i] - mNew);
                s.p[i] = p;
                l = l + p;
            }
            for (int e = 0; e < d; e++) {
                float a = part[o + e] * alpha;
                for (int i = 0; i < tn; i++) {
                    a = Math.fma(s.p[i], s.v[i * d + e], a);
                }
                part[o + e] = a;
            }
            m = mNew;
        }
        part[at] = m;
        part[at + 1] = l;
    }

    /** Pass two: the chunks of one row in order, the sink entering once. */
    private static void combine(float[] part, int at, int chunks, int stride, int d, float sink, float[] out, int o) {
        float m = sink;
        for (int ci = 0; ci < chunks; ci++) {
            m = Math.max(m, part[at + ci * stride]);
        }
        if (m == Float.NEGATIVE_INFINITY) {
            Arrays.fill(out, o, o + d, 0f);
            return;
        }
        float l = LaneMath.exp(sink - m);
        float[] w = new float[chunks];
        for (int ci = 0; ci < chunks; ci++) {
            w[ci] = LaneMath.exp(part[at + ci * stride] - m);
            l = Math.fma(w[ci], part[at + ci * stride + 1], l);
        }
        for (int e = 0; e < d; e++) {
            float acc = 0f;
            for (int ci = 0; ci < chunks; ci++) {
                acc = Math.fma(w[ci], part[at + ci * stride + 2 + e], acc);
            }
            out[o + e] = acc / l;
        }
    }
}
