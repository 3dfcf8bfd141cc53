package io.attnproof.attention.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.util.Arrays;
import java.util.Collection;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Vector API engine on the shapes that reach its remainder paths, bit for bit against the scalar engine (the
 * engines run the same IEEE operations per query row, {@link UnionLanes}): head counts that leave 1, 2, 3, 6 or 8 head
 * vectors (the 2 x 8, 4 x 4, 2 x 4 and 1 x 1 register blocks, with and without a vector offset), key counts that leave
 * a partial tile and a remainder of 4 to 7 keys, head dims above one D chunk (64) with a tail below one vector (the
 * 4-vector, 1-vector and scalar PV paths, partial sums reloaded between chunks), head counts that are not multiples
 * of 16 (the q gather of heads in lanes reads the zero rows of a partial head vector) or of 4 (the single-head PV and
 * score blocks), admitted columns with holes (the keys-in-lanes runs), the unfused (two-pass) form over more than one
 * tile of keys and more than one head vector, a first tile of keys that all score -inf, a row with nothing admitted,
 * and a call whose V rows are its K rows (heads in lanes copies them once, padded, and reads them as both; 6-head PV
 * blocks beside 4-head and single ones). Every engine starts from empty scratch buffers (the pools are drained
 * first), so a buffer sized too small fails here whatever ran before in the JVM. Seeds are fixed (the {@code seed}
 * column); a failure names the case.
 */
class VectorLanesRemainderTest {

    /** Empties the engines' scratch pools, so the next call grows its buffers from nothing. */
    static void drainScratch() {
        try {
            Field free = UnionLanes.Pool.class.getDeclaredField("free");
            free.setAccessible(true);
            for (Class<?> owner : new Class<?>[] {VectorLanes.class, ScalarLanes.class, SplitKDecode.class}) {
                Field f = owner.getDeclaredField("SCRATCH");
                f.setAccessible(true);
                ((Collection<?>) free.get(f.get(null))).clear();
            }
            Field packed = VectorLanes.class.getDeclaredField("PACKED");
            packed.setAccessible(true);
            ((Collection<?>) free.get(packed.get(null))).clear();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the engines' scratch pools moved: " + e, e);
        }
    }

    /** {@code call} with a fresh zero output. */
    static UnionCall fresh(UnionCall c) {
        return new UnionCall(c.q(), c.batch(), c.heads(), c.tq(), c.headDim(), c.scale(), c.keys(), c.values(),
                c.admission(), c.sink(), new float[c.out().length], c.form());
    }

    static float[] scalar(UnionCall c) {
        drainScratch();
        UnionCall f = fresh(c);
        ScalarLanes.INSTANCE.run(f);
        return f.out();
    }

    static float[] vector(UnionCall c, boolean keysInLanes) {
        drainScratch();
        UnionCall f = fresh(c);
        ((VectorLanes) UnionLanes.vector()).run(f, keysInLanes);
        return f.out();
    }

    static long bitsDiffering(float[] a, float[] b) {
        long n = 0;
        for (int i = 0; i < a.length; i++) {
            n += Float.floatToIntBits(a[i]) == Float.floatToIntBits(b[i]) ? 0 : 1;
        }
        return n;
    }

    /** Both layouts of the vector engine give the scalar engine's bits; returns the scalar output. */
    static float[] assertEnginesAgree(String name, UnionCall c) {
        float[] s = scalar(c);
        assertEquals(0, bitsDiffering(s, vector(c, false)), name + ": vector heads-in-lanes vs scalar");
        assertEquals(0, bitsDiffering(s, vector(c, true)), name + ": vector keys-in-lanes vs scalar");
        return s;
    }

    static float[] gaussian(SplittableRandom rng, int n, double scale) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) (scale * rng.nextGaussian());
        }
        return a;
    }

    /** A union call over one dense tensor of {@code n} columns ({@code [B,1,n,D]}) under an additive mask. */
    static UnionCall denseCall(float[] q, float[] k, float[] v, int batch, int heads, int tq, int n, int d,
            Tensor mask, float[] sink) {
        UnionRows keys = UnionRows.of(new UnionRows.Span(MemorySegment.ofArray(k), n, 0, n, d), null);
        UnionRows values = UnionRows.of(new UnionRows.Span(MemorySegment.ofArray(v), n, 0, n, d), null);
        return new UnionCall(MemorySegment.ofArray(q), batch, heads, tq, d, (float) (1.0 / Math.sqrt(d)), keys, values,
                Admission.dense(mask, batch, heads, tq, n), sink, new float[batch * heads * tq * d]);
    }

    /**
     * The mask of a case: {@code all} admits every column at 0; {@code holes} removes every 7th column (shifted per
     * row); {@code mixed} admits all of row 0, removes columns 40 and 100 from row 1 and every 3rd of row 2's
     * columns past 130, with biases on row 1; {@code perHead} thins each head's row at random and removes every
     * column of one head of each row; {@code twoHoles} removes columns 40 + r and 50 + r of row r.
     */
    static Tensor mask(String kind, SplittableRandom rng, int batch, int heads, int tq, int n) {
        int mh = kind.equals("perHead") ? heads : 1;
        float[] m = new float[batch * mh * tq * n];
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < mh; h++) {
                for (int r = 0; r < tq; r++) {
                    int at = ((b * mh + h) * tq + r) * n;
                    for (int col = 0; col < n; col++) {
                        boolean admitted = switch (kind) {
                            case "all" -> true;
                            case "holes" -> (col + r + b) % 7 != 3;
                            case "mixed" -> r % 3 == 0 || (r % 3 == 1 ? col != 40 && col != 100 : col < 130 || col % 3 != 0);
                            case "perHead" -> (h + r) % heads != heads - 1 && rng.nextDouble() < 0.8;
                            case "twoHoles" -> col != 40 + r && col != 50 + r;
                            default -> throw new IllegalArgumentException(kind);
                        };
                        float bias = kind.equals("mixed") && r % 3 == 1 && col % 5 == 0 ? 0.25f * (col % 4 - 1) : 0f;
                        m[at + col] = admitted ? bias : Float.NEGATIVE_INFINITY;
                    }
                }
            }
        }
        return Tensor.of(m, DType.F32, Device.CPU, batch, mh, tq, n);
    }

    @ParameterizedTest(name = "{0}: seed {1} B {2} H {3} tq {4} n {5} D {6} mask {7} sinks {8}")
    @CsvSource({
        // head vectors (L = 16; L = 8 doubles them): 3 (2 x 4 block then a 1 x 1 at vector 2), partial second tile
        // of 12 keys (a 4-key block at ordinal 8), D = 147 (D chunks 64 + 64 + 19, transposition tail 3, PV tail)
        "nv3, 1, 1, 40, 1, 76, 147, all, finite",
        // 2 head vectors: the 2 x 8 block, then a 2 x 4 block at ordinal 8 of the 12-key tile
        "nv2, 2, 1, 20, 1, 76, 147, all, finite",
        "nv2-holes, 3, 1, 20, 2, 90, 70, holes, finite",
        // 6 head vectors: 4 x 4 at vector 0, 2 x 4 at vector 4 (a vector offset), D above one chunk
        "nv6, 4, 1, 96, 1, 70, 130, all, finite",
        // 8 head vectors: 4 x 4 blocks at vectors 0 and 4
        "nv8, 5, 1, 128, 1, 68, 72, all, finite",
        // 5 heads: one 4-head PV block and one single-head block at D offsets 0 and 64 (and past)
        "pv1x4, 6, 2, 5, 2, 80, 147, holes, finite",
        // keys in lanes: runs of 64 and runs broken by holes, 6 heads (one 4-head score block, two single ones)
        "keys-mixed, 7, 1, 6, 3, 200, 20, mixed, finite",
        "keys-perHead, 8, 1, 7, 2, 150, 24, perHead, none",
        "keys-holes, 9, 2, 9, 3, 140, 33, holes, finite",
        // keys in lanes: 5 heads (a 4-head score block and a single one) over a 64-key run, D = 147 in chunks of 64:
        // the single head's partial sums wait in S between chunks
        "keys-d-chunks, 10, 1, 5, 2, 70, 147, all, finite",
        // keys in lanes, one D chunk without biases (scores from 0, scale and max folded in): two holes 10 columns
        // apart, so the first 64 ordinals end 2 columns past a 64-column run
        "keys-two-holes, 11, 1, 4, 3, 140, 48, twoHoles, finite",
        // keys in lanes at D = 256 over 256 columns: V rows padded to 272, K and V packed the same size an entry
        "keys-d256, 12, 1, 4, 2, 256, 256, all, finite",
        // keys in lanes, a tile's tail of 36 keys that is one run: one 4 x 4 block whose last 28 lanes are scratch
        // (the packed K read 28 columns past the last, the max taken over the 36 admitted lanes only), on the
        // one-chunk path (D 48) and on the chunked path (D 147, with a single head's block)
        "keys-tail, 13, 1, 4, 2, 100, 48, all, finite",
        "keys-tail-chunks, 14, 1, 5, 2, 100, 147, all, finite",
        // the same with two holes in the first tile: every row's second tile is a 4 x 4 tail block at ordinal 0
        "keys-tail-holes, 15, 1, 8, 3, 118, 64, twoHoles, none",
    })
    void theRemainderPathsGiveTheScalarBits(String name, long seed, int batch, int heads, int tq, int n, int d,
            String maskKind, String sinks) {
        SplittableRandom rng = new SplittableRandom(seed);
        float[] q = gaussian(rng, batch * heads * tq * d, 1.5);
        float[] k = gaussian(rng, batch * n * d, 1.5);
        float[] v = gaussian(rng, batch * n * d, 1.0);
        float[] sink = new float[heads];
        for (int h = 0; h < heads; h++) {
            sink[h] = sinks.equals("none") ? Float.NEGATIVE_INFINITY : (float) (rng.nextGaussian() + Math.log(n));
        }
        Tensor m = mask(maskKind, rng, batch, heads, tq, n);
        UnionCall c = denseCall(q, k, v, batch, heads, tq, n, d, m, sink);
        float[] s = assertEnginesAgree(name + " seed " + seed, c);
        double worst = worstAgainstReference(c, s);
        assertTrue(worst < 2e-5, name + " seed " + seed + ": max |f32 - fp64| = " + worst);
    }

    @ParameterizedTest(name = "seed {0}: Hq {1} Hkv {2} tq {3} tk {4} D {5} window {6} mask {7}")
    @CsvSource({
        // a group of 20 query heads: 2 head vectors (L = 16) in the two-pass softmax; 100 keys, more than a tile
        "11, 40, 2, 3, 100, 40, 0, none",
        "12, 40, 2, 2, 90, 72, 0, perHead",
        "13, 21, 1, 4, 130, 20, 70, bias",
        // 4 query heads a KV head, D = 72 (two chunks): one tile of 150 keys in the unfused form, two 64-key score
        // blocks and a tail on the chunked path
        "14, 8, 2, 2, 150, 72, 0, none",
    })
    void theUnfusedFormGivesTheScalarBitsOnEveryLayout(long seed, int hq, int hkv, int tq, int tk, int d, int window,
            String maskKind) {
        SplittableRandom rng = new SplittableRandom(seed);
        float[] q = gaussian(rng, hq * tq * d, 1.5);
        float[] k = gaussian(rng, hkv * tk * d, 1.5);
        float[] v = gaussian(rng, hkv * tk * d, 1.0);
        float[] sink = new float[hq];
        for (int h = 0; h < hq; h++) {
            sink[h] = (float) (rng.nextGaussian() + Math.log(tk));
        }
        MemorySegment mask = null;
        int mh = maskKind.equals("perHead") ? hq : 1;
        if (!maskKind.equals("none")) {
            float[] m = new float[mh * tq * tk];
            for (int i = 0; i < m.length; i++) {
                m[i] = rng.nextDouble() < 0.2 ? Float.NEGATIVE_INFINITY
                        : maskKind.equals("bias") ? (float) rng.nextGaussian() : 0f;
            }
            mask = MemorySegment.ofArray(m);
        }
        UnionCall unfused = SinksLanes.unfusedCall(MemorySegment.ofArray(q), MemorySegment.ofArray(k),
                MemorySegment.ofArray(v), 1, hq, hkv, tq, tk, d, sink, true, window, mask, 1, mh, mask == null ? 1 : tq);
        assertEnginesAgree("unfused seed " + seed, unfused);
        UnionCall fused = SinksLanes.fusedCall(MemorySegment.ofArray(q), MemorySegment.ofArray(k),
                MemorySegment.ofArray(v), 1, hq, hkv, tq, tk, d, sink, window);
        assertEnginesAgree("fused seed " + seed, fused);
    }

    @ParameterizedTest(name = "{0}: seed {1} B {2} H {3} tq {4} n {5} D {6} mask {7}")
    @CsvSource({
        // heads in lanes, V the same rows as K (one row set, as dsv4_attention hands over when v aliases k): the K
        // rows copied once and read as V; D 512, so the rows are padded to 528; 64 heads: ten 6-head PV blocks and
        // a 4-head one
        "kv-d512-h64, 31, 1, 64, 1, 150, 512, holes",
        // 20 heads (two 6-head PV blocks, two 4-head ones; 2 head vectors), D 147 (no padding, a PV tail)
        "kv-d147-h20, 32, 2, 20, 1, 76, 147, all",
        // 7 heads (one 6-head PV block and a single head), D 256 (padded to 272), three rows
        "kv-d256-h7, 33, 1, 7, 3, 100, 256, mixed",
    })
    void aCallWhoseValuesAreItsKeysGivesTheScalarBits(String name, long seed, int batch, int heads, int tq, int n,
            int d, String maskKind) {
        SplittableRandom rng = new SplittableRandom(seed);
        float[] q = gaussian(rng, batch * heads * tq * d, 1.5);
        float[] k = gaussian(rng, batch * n * d, 1.5);
        float[] sink = new float[heads];
        for (int h = 0; h < heads; h++) {
            sink[h] = (float) (rng.nextGaussian() + Math.log(n));
        }
        UnionCall distinct = denseCall(q, k, k.clone(), batch, heads, tq, n, d, mask(maskKind, rng, batch, heads, tq,
                n), sink);
        // the same call with one row set for K and V
        UnionCall c = new UnionCall(distinct.q(), batch, heads, tq, d, distinct.scale(), distinct.keys(),
                distinct.keys(), distinct.admission(), sink, new float[distinct.out().length]);
        assertTrue(c.values() == c.keys() && distinct.values() != distinct.keys(), name + ": lost its aliasing");
        float[] s = assertEnginesAgree(name + " seed " + seed, c);
        assertEquals(0, bitsDiffering(s, vector(distinct, false)),
                name + ": heads in lanes, V aliasing K vs the same values as rows of their own");
        double worst = worstAgainstReference(c, s);
        assertTrue(worst < 2e-5, name + " seed " + seed + ": max |f32 - fp64| = " + worst);
    }

    @Test
    void entriesPackedInSeveralPassesGiveTheScalarBits() {
        // 6144 columns of D 256 pack to 3.25 M floats an entry: 2 entries a pass of 8 M, so 3 entries take two
        // passes, the second of one entry (packed into the first pass's buffer); row blocks of 8 rows at 1 head.
        int batch = 3;
        int n = 6144;
        int d = 256;
        int tq = 3;
        long perEntry = (long) d * (n + VectorLanes.L) + (long) n * VectorLanes.vStride(d);
        assertEquals(2, VectorLanes.packedEntries(batch, perEntry), "the case no longer packs 2 of 3 entries a pass");
        SplittableRandom rng = new SplittableRandom(21);
        float[] q = gaussian(rng, batch * tq * d, 0.05);
        float[] k = gaussian(rng, batch * n * d, 1.0);
        float[] v = gaussian(rng, batch * n * d, 1.0);
        float[] sink = {(float) Math.log(n)};
        UnionCall c = denseCall(q, k, v, batch, 1, tq, n, d, mask("holes", null, batch, 1, tq, n), sink);
        float[] s = scalar(c);
        assertEquals(0, bitsDiffering(s, vector(c, true)),
                "two packing passes, the second short: vector keys-in-lanes vs scalar");
    }

    @Test
    void aSmallCallAfterALargeOneOnTheSameScratchGivesTheScalarBits() {
        // UnionLanes: a row's result depends only on its admitted keys, never on what ran before. The first call
        // leaves the scratch row's column buffer holding every 10th of 400 columns; the second (20 columns, fewer
        // admitted keys than a tile, 4 heads: the 4-head score block) reuses that scratch, whose entries past its
        // own admitted count are the first call's columns, far beyond its 20.
        SplittableRandom rng = new SplittableRandom(31);
        int heads = 4;
        int d = 12;
        int big = 400;
        float[] m = new float[big];
        for (int col = 0; col < big; col++) {
            m[col] = col % 10 == 0 ? 0f : Float.NEGATIVE_INFINITY;
        }
        float[] sink = {0.5f, 1f, -0.5f, 2f};
        UnionCall large = denseCall(gaussian(rng, heads * d, 1.0), gaussian(rng, big * d, 1.0),
                gaussian(rng, big * d, 1.0), 1, heads, 1, big, d, Tensor.of(m, DType.F32, Device.CPU, 1, 1, 1, big),
                sink);
        int small = 20;
        UnionCall next = denseCall(gaussian(rng, heads * d, 1.0), gaussian(rng, small * d, 1.0),
                gaussian(rng, small * d, 1.0), 1, heads, 1, small, d, mask("all", null, 1, heads, 1, small), sink);
        float[] expected = scalar(next);
        for (boolean keysInLanes : new boolean[] {true, false}) {
            drainScratch();
            VectorLanes engine = (VectorLanes) UnionLanes.vector();
            engine.run(fresh(large), keysInLanes);
            UnionCall second = fresh(next);
            engine.run(second, keysInLanes);
            assertEquals(0, bitsDiffering(expected, second.out()), "keysInLanes " + keysInLanes);
        }
    }

    @Test
    void aFirstTileScoringMinusInfinityThenLiveKeysGivesTheScalarBits() {
        // 6 heads, one query, 150 keys, no sink. Keys 0..69 hold -inf in element 0 and q's element 0 is positive, so
        // they score -inf: the first tile (ordinals 0..63) is dead (running max -inf), the second is live.
        int heads = 6;
        int n = 150;
        int d = 24;
        SplittableRandom rng = new SplittableRandom(21);
        float[] q = gaussian(rng, heads * d, 1.0);
        for (int h = 0; h < heads; h++) {
            q[h * d] = 0.5f + Math.abs(q[h * d]);
        }
        float[] k = gaussian(rng, n * d, 1.0);
        for (int col = 0; col < 70; col++) {
            k[col * d] = Float.NEGATIVE_INFINITY;
        }
        float[] v = gaussian(rng, n * d, 1.0);
        float[] sink = new float[heads];
        Arrays.fill(sink, Float.NEGATIVE_INFINITY);
        UnionCall c = denseCall(q, k, v, 1, heads, 1, n, d, mask("all", rng, 1, heads, 1, n), sink);
        float[] s = assertEnginesAgree("dead first tile", c);
        double worst = worstAgainstReference(c, s);
        assertTrue(worst < 2e-5, "dead first tile: max |f32 - fp64| = " + worst);
        for (float x : s) {
            assertTrue(Float.isFinite(x), "dead first tile: a non-finite output " + x);
        }
    }

    @Test
    void aRowWhoseEveryKeyScoresMinusInfinityGivesZerosEvenAgainstInfiniteValues() {
        // docs/system.md §4.7: with the running max started at the sink, a row with nothing to weigh gives zeros, never
        // NaN. No sink, every admitted key scores -inf (a -inf element against a positive q element), and V holds
        // +inf and NaN, which a weight of 0 would turn into NaN if the row were not zeroed.
        int heads = 3;
        int n = 10;
        int d = 20;
        float[] q = new float[heads * d];
        Arrays.fill(q, 1f);
        float[] k = new float[n * d];
        Arrays.fill(k, 1f);
        float[] v = new float[n * d];
        for (int col = 0; col < n; col++) {
            k[col * d] = Float.NEGATIVE_INFINITY;
            Arrays.fill(v, col * d, (col + 1) * d, col % 2 == 0 ? Float.POSITIVE_INFINITY : Float.NaN);
        }
        float[] sink = new float[heads];
        Arrays.fill(sink, Float.NEGATIVE_INFINITY);
        UnionCall online = denseCall(q, k, v, 1, heads, 1, n, d, mask("all", null, 1, heads, 1, n), sink);
        UnionCall unfused = SinksLanes.unfusedCall(MemorySegment.ofArray(q), MemorySegment.ofArray(k),
                MemorySegment.ofArray(v), 1, heads, 1, 1, n, d, sink, true, 0, null, 1, 1, 1);
        for (UnionCall c : new UnionCall[] {online, unfused}) {
            String form = c.form().twoPass() ? "unfused" : "online";
            float[][] outs = {scalar(c), vector(c, false), vector(c, true)};
            String[] names = {"scalar", "vector heads-in-lanes", "vector keys-in-lanes"};
            for (int e = 0; e < outs.length; e++) {
                for (int i = 0; i < outs[e].length; i++) {
                    assertEquals(0, Float.floatToIntBits(outs[e][i]), form + " " + names[e] + " out[" + i + "] = "
                            + outs[e][i]);
                }
            }
        }
    }

    /** The largest |f32 - fp64| over every row of {@code c}, the fp64 softmax-with-sink of the same admitted keys. */
    static double worstAgainstReference(UnionCall c, float[] out) {
        Admission.Row row = new Admission.Row();
        int d = c.headDim();
        double worst = 0;
        for (int b = 0; b < c.batch(); b++) {
            for (int h = 0; h < c.heads(); h++) {
                for (int r = 0; r < c.tq(); r++) {
                    c.admission().fill(b, h, r, row);
                    double[] s = new double[row.count];
                    double sink = c.sink(b, h);
                    double m = sink;
                    for (int i = 0; i < row.count; i++) {
                        double dot = 0;
                        for (int e = 0; e < d; e++) {
                            dot += (double) c.q().getAtIndex(ValueLayout.JAVA_FLOAT, (c.qByteOffset(b, h, r) >> 2) + e)
                                    * at(c.keys(), b, row.cols[i], e);
                        }
                        s[i] = dot * c.scale() + (row.biased ? row.bias[i] : 0);
                        m = Math.max(m, s[i]);
                    }
                    int o = c.outOffset(b, h, r);
                    if (m == Double.NEGATIVE_INFINITY) {
                        for (int e = 0; e < d; e++) {
                            worst = Math.max(worst, Math.abs(out[o + e]));
                        }
                        continue;
                    }
                    double denom = Math.exp(sink - m);
                    double[] acc = new double[d];
                    for (int i = 0; i < row.count; i++) {
                        double p = Math.exp(s[i] - m);
                        if (p == 0) {
                            continue;
                        }
                        denom += p;
                        for (int e = 0; e < d; e++) {
                            acc[e] += p * at(c.values(), b, row.cols[i], e);
                        }
                    }
                    for (int e = 0; e < d; e++) {
                        double diff = Math.abs(acc[e] / denom - out[o + e]);
                        worst = Math.max(worst, Double.isNaN(diff) ? Double.POSITIVE_INFINITY : diff);
                    }
                }
            }
        }
        return worst;
    }

    static float at(UnionRows rows, int b, int col, int e) {
        return rows.data(col).get(ValueLayout.JAVA_FLOAT, rows.byteOffset(b, col) + 4L * e);
    }
}
