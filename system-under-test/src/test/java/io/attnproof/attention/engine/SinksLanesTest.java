package io.attnproof.attention.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sinks-attention forms on the union kernel's engines ({@link SinksLanes}) agree bit for bit whichever engine and
 * layout runs them (scalar; Vector API heads in lanes, keys in lanes, its own choice): the sinks claims that compare
 * bits (one query against N, a prefill row against a decode step, repeated calls, varlen against unfused) hold on
 * every call size, not only on the small calls the claim tests make (which take the scalar engine). Each form is also
 * checked against an fp64 reference of the same rule, and the fused and unfused forms differ in their bits (the
 * dispatch tests tell the arms apart by them). Seeds are fixed (the row's {@code seed} column).
 */
class SinksLanesTest {

    @ParameterizedTest(name = "seed {0}: B {1} Hq {2} Hkv {3} tq {4} tk {5} D {6} window {7} mask {8} sink {9}")
    @CsvSource({
        "1, 1, 8, 2, 9, 40, 64, 0, none, yes",
        "2, 1, 8, 2, 33, 70, 64, 16, none, yes",
        "3, 2, 6, 3, 5, 5, 80, 3, bias, yes",
        "4, 1, 4, 4, 1, 300, 64, 0, none, yes",
        "5, 1, 16, 2, 1, 1100, 64, 0, none, yes",
        "6, 1, 4, 2, 1, 1300, 32, 500, none, yes",
        "7, 2, 4, 1, 12, 20, 48, 5, perhead, yes",
        "8, 1, 4, 2, 7, 3, 64, 0, none, none",
        "9, 1, 8, 2, 70, 140, 64, 0, none, yes",
        // A per-head mask under GQA with several KV heads and batches: query head h of KV head kvh reads mask head
        // kvh * group + h; with one KV head (row 7) every head map agrees with the wrong ones.
        "10, 2, 6, 3, 5, 12, 32, 0, perhead, yes",
    })
    void everyEngineGivesTheSameBitsAndTheRightAnswer(long seed, int batch, int hq, int hkv, int tq, int tk, int d,
            int window, String mask, String sinks) {
        SplittableRandom rng = new SplittableRandom(seed);
        float[] q = gaussian(rng, batch * hq * tq * d);
        float[] k = gaussian(rng, batch * hkv * tk * d);
        float[] v = gaussian(rng, batch * hkv * tk * d);
        float[] sink = new float[hq];
        for (int h = 0; h < hq; h++) {
            sink[h] = sinks.equals("none") ? Float.NEGATIVE_INFINITY
                    : (float) (rng.nextGaussian() + Math.log(Math.max(1, Math.min(tk, window == 0 ? tk : window))));
        }
        int mh = mask.equals("perhead") ? hq : 1;
        float[] m = null;
        if (!mask.equals("none")) {
            m = new float[batch * mh * tq * tk];
            for (int i = 0; i < m.length; i++) {
                double u = rng.nextDouble();
                m[i] = u < 0.25 ? Float.NEGATIVE_INFINITY : mask.equals("bias") ? (float) rng.nextGaussian() : 0f;
            }
        }
        MemorySegment qs = MemorySegment.ofArray(q);
        MemorySegment ks = MemorySegment.ofArray(k);
        MemorySegment vs = MemorySegment.ofArray(v);
        MemorySegment ms = m == null ? null : MemorySegment.ofArray(m);
        for (boolean fused : new boolean[] {true, false}) {
            if (fused && m != null) {
                continue; // the fused kernels take no mask
            }
            String form = fused ? "fused" : "unfused";
            java.util.function.Supplier<UnionCall> make = () -> fused
                    ? SinksLanes.fusedCall(qs, ks, vs, batch, hq, hkv, tq, tk, d, sink, window)
                    : SinksLanes.unfusedCall(qs, ks, vs, batch, hq, hkv, tq, tk, d, sink, true, window, ms, batch, mh,
                            tq);
            UnionCall probe = make.get();
            boolean split = SplitKDecode.applies(probe);
            float[] viaRun = SinksLanes.run(make.get());
            float[] scalar = split ? viaRun : run(UnionLanes.scalar(), make.get(), null);
            if (!split) {
                VectorLanes vector = (VectorLanes) UnionLanes.vector();
                assertEquals(0, bitsDiffering(scalar, run(vector, make.get(), false)), form + ": heads in lanes");
                assertEquals(0, bitsDiffering(scalar, run(vector, make.get(), true)), form + ": keys in lanes");
                assertEquals(0, bitsDiffering(scalar, run(vector, make.get(), null)), form + ": vector's own choice");
                assertEquals(0, bitsDiffering(scalar, viaRun), form + ": the call as sinks_attn runs it");
            }
            double worst = 0;
            double scale = 1.0 / Math.sqrt(d);
            int group = hq / hkv;
            for (int b = 0; b < batch; b++) {
                for (int h = 0; h < hq; h++) {
                    for (int r = 0; r < tq; r++) {
                        double[] ref = reference(q, k, v, m, b, h, r, batch, hq, hkv, tq, tk, d, window, mh, scale,
                                sink[h], group);
                        int o = ((b * hq + h) * tq + r) * d;
                        for (int e = 0; e < d; e++) {
                            worst = Math.max(worst, Math.abs(ref[e] - viaRun[o + e]));
                            assertTrue(!Float.isNaN(viaRun[o + e]), form + ": NaN at b " + b + " h " + h + " r " + r);
                        }
                    }
                }
            }
            assertTrue(worst < 2e-5, form + ": max |f32 - fp64| = " + worst + " (seed " + seed + ")");
        }
        if (m == null && tk > 1) {
            float[] fused = SinksLanes.run(SinksLanes.fusedCall(qs, ks, vs, batch, hq, hkv, tq, tk, d, sink, window));
            float[] unfused = SinksLanes.run(SinksLanes.unfusedCall(qs, ks, vs, batch, hq, hkv, tq, tk, d, sink, true,
                    window, null, 1, 1, 1));
            assertTrue(bitsDiffering(fused, unfused) > 0, "the fused and unfused forms must differ in their bits");
        }
    }

    private static float[] run(UnionLanes engine, UnionCall call, Boolean keysInLanes) {
        if (keysInLanes == null) {
            engine.run(call);
        } else {
            ((VectorLanes) engine).run(call, keysInLanes);
        }
        return call.out();
    }

    /** fp64 over the rule's keys (and the mask's), the sink in the denominator only; zeros with nothing at all. */
    private static double[] reference(float[] q, float[] k, float[] v, float[] mask, int b, int h, int r, int batch,
            int hq, int hkv, int tq, int tk, int d, int window, int mh, double scale, float sink, int group) {
        int kvh = h / group;
        long last = (long) r + tk - tq;
        double[] s = new double[tk];
        boolean[] in = new boolean[tk];
        double m = sink;
        for (int j = 0; j < tk; j++) {
            boolean admitted = j <= last && (window == 0 || j >= last - window + 1);
            double bias = 0;
            if (mask != null) {
                float x = mask[((b * mh + (mh == 1 ? 0 : h)) * tq + r) * tk + j];
                admitted &= x != Float.NEGATIVE_INFINITY;
                bias = x;
            }
            if (!admitted) {
                continue;
            }
            double dot = 0;
            for (int e = 0; e < d; e++) {
                dot += (double) q[((b * hq + h) * tq + r) * d + e] * k[((b * hkv + kvh) * tk + j) * d + e];
            }
            s[j] = dot * scale + bias;
            in[j] = true;
            m = Math.max(m, s[j]);
        }
        double[] out = new double[d];
        if (m == Double.NEGATIVE_INFINITY) {
            return out;
        }
        double l = Math.exp(sink - m);
        for (int j = 0; j < tk; j++) {
            if (in[j]) {
                double p = Math.exp(s[j] - m);
                l += p;
                for (int e = 0; e < d; e++) {
                    out[e] += p * v[((b * hkv + kvh) * tk + j) * d + e];
                }
            }
        }
        for (int e = 0; e < d; e++) {
            out[e] /= l;
        }
        return out;
    }

    private static float[] gaussian(SplittableRandom rng, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) rng.nextGaussian();
        }
        return a;
    }

    private static long bitsDiffering(float[] a, float[] b) {
        assertEquals(a.length, b.length);
        long n = 0;
        for (int i = 0; i < a.length; i++) {
            n += Float.floatToRawIntBits(a[i]) != Float.floatToRawIntBits(b[i]) ? 1 : 0;
        }
        return n;
    }
}
