package io.attnproof.conformance.corpus;

import io.attnproof.attention.tensor.DType;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.conformance.npy.Npy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The values of one union-attention case while the corpus is built (mutable; {@link #copy} before deriving a
 * variant): {@code q[B,H,tq,D]}, {@code k[B,1,tk,D]}, optional {@code v} (null: V is K), optional
 * {@code ckv[B,1,tc,D]}, {@code sinks[H]}, optional mask, the layer config and canary slots of k.
 */
final class UnionData {
    /** The sink of a case whose claim is not about sinks: finite (the union kind needs it), weight exactly 0. */
    static final float NO_SINK = -1e30f;

    int b;
    int h;
    int tq;
    int tk;
    int tc;
    int d;
    int ratio;
    int window;
    int rawPrefix;
    long[] rowQ0;
    float[] q;
    float[] k;
    float[] v;
    float[] ckv;
    float[] sinks;
    int[] maskShape;
    float[] mask;
    List<int[]> kCanary = new ArrayList<>();

    /** Seeded values: every batch row from its own stream, sinks live (N(0,1)) or {@link #NO_SINK}. */
    static UnionData random(long seed, int b, int h, int tq, int tk, int tc, int d, int ratio, int window,
            boolean liveSinks) {
        UnionData x = new UnionData();
        x.b = b;
        x.h = h;
        x.tq = tq;
        x.tk = tk;
        x.tc = tc;
        x.d = d;
        x.ratio = ratio;
        x.window = window;
        x.q = new float[b * h * tq * d];
        x.k = new float[b * tk * d];
        x.ckv = tc > 0 ? new float[b * tc * d] : null;
        for (int i = 0; i < b; i++) {
            SplittableRandom rng = Streams.row(seed, i);
            fill(rng, x.q, i * h * tq * d, h * tq * d, 1.5);
            fill(rng, x.k, i * tk * d, tk * d, 1.0);
            if (x.ckv != null) {
                fill(rng, x.ckv, i * tc * d, tc * d, 1.0);
            }
        }
        x.sinks = new float[h];
        SplittableRandom s = Streams.named(seed, "sinks");
        for (int i = 0; i < h; i++) {
            x.sinks[i] = liveSinks ? (float) s.nextGaussian() : NO_SINK;
        }
        return x;
    }

    static void fill(SplittableRandom rng, float[] a, int from, int n, double scale) {
        for (int i = 0; i < n; i++) {
            a[from + i] = (float) (scale * rng.nextGaussian());
        }
    }

    /** A distinct V drawn from its own stream. */
    UnionData withDistinctV(long seed) {
        v = new float[k.length];
        fill(Streams.named(seed, "v"), v, 0, v.length, 1.0);
        return this;
    }

    UnionData copy() {
        UnionData x = new UnionData();
        x.b = b;
        x.h = h;
        x.tq = tq;
        x.tk = tk;
        x.tc = tc;
        x.d = d;
        x.ratio = ratio;
        x.window = window;
        x.rawPrefix = rawPrefix;
        x.rowQ0 = rowQ0 == null ? null : rowQ0.clone();
        x.q = q.clone();
        x.k = k.clone();
        x.v = v == null ? null : v.clone();
        x.ckv = ckv == null ? null : ckv.clone();
        x.sinks = sinks.clone();
        x.maskShape = maskShape == null ? null : maskShape.clone();
        x.mask = mask == null ? null : mask.clone();
        x.kCanary = new ArrayList<>(kCanary);
        return x;
    }

    long tkFull() {
        return (long) rawPrefix + tk;
    }

    long q0() {
        return tkFull() - tq;
    }

    /** Keys {@code [from, from+n)} of every row of k (and v), as a new tk = n. */
    UnionData sliceKeys(int from, int n) {
        k = slice(k, tk, from, n);
        if (v != null) {
            v = slice(v, tk, from, n);
        }
        tk = n;
        return this;
    }

    private float[] slice(float[] x, int rows, int from, int n) {
        float[] out = new float[b * n * d];
        for (int i = 0; i < b; i++) {
            System.arraycopy(x, (i * rows + from) * d, out, i * n * d, n * d);
        }
        return out;
    }

    /** Only batch row {@code i}, as B = 1. */
    UnionData row(int i) {
        q = java.util.Arrays.copyOfRange(q, i * h * tq * d, (i + 1) * h * tq * d);
        k = java.util.Arrays.copyOfRange(k, i * tk * d, (i + 1) * tk * d);
        v = v == null ? null : java.util.Arrays.copyOfRange(v, i * tk * d, (i + 1) * tk * d);
        ckv = ckv == null ? null : java.util.Arrays.copyOfRange(ckv, i * tc * d, (i + 1) * tc * d);
        b = 1;
        rowQ0 = null;
        return this;
    }

    /** Only query row {@code r} of every batch row, as tq = 1. */
    UnionData query(int r) {
        float[] out = new float[b * h * d];
        for (int i = 0; i < b * h; i++) {
            System.arraycopy(q, (i * tq + r) * d, out, i * d, d);
        }
        q = out;
        tq = 1;
        return this;
    }

    /** Drops the last {@code n} compressed blocks. */
    UnionData dropBlocks(int n) {
        float[] out = new float[b * (tc - n) * d];
        for (int i = 0; i < b; i++) {
            System.arraycopy(ckv, i * tc * d, out, i * (tc - n) * d, (tc - n) * d);
        }
        tc -= n;
        ckv = tc == 0 ? null : out;
        return this;
    }

    /** Marks key slot {@code (row, t)} of k a NaN canary. */
    UnionData nanKey(int row, int t) {
        for (int x = 0; x < d; x++) {
            k[(row * tk + t) * d + x] = Float.NaN;
        }
        kCanary.add(new int[] {row, 0, t});
        return this;
    }

    CaseSpec toCase(String id, String claim, DType dtype, long seed, String description) {
        Npy.DType storage = dtype == DType.F16 ? Npy.DType.F2 : Npy.DType.F4;
        Map<String, CaseSpec.Arr> t = new LinkedHashMap<>();
        t.put("q", new CaseSpec.Arr(new int[] {b, h, tq, d}, round(q, dtype), storage));
        t.put("k", new CaseSpec.Arr(new int[] {b, 1, tk, d}, round(k, dtype), storage));
        if (v != null) {
            t.put("v", new CaseSpec.Arr(new int[] {b, 1, tk, d}, round(v, dtype), storage));
        }
        t.put("sinks", new CaseSpec.Arr(new int[] {h}, sinks.clone(), Npy.DType.F4));
        if (ckv != null && tc > 0) {
            t.put("compressed_kv", new CaseSpec.Arr(new int[] {b, 1, tc, d}, round(ckv, dtype), storage));
        }
        if (mask != null) {
            t.put("mask", new CaseSpec.Arr(maskShape.clone(), round(mask, dtype), storage));
        }
        Map<String, List<int[]>> canary = new LinkedHashMap<>();
        if (!kCanary.isEmpty()) {
            canary.put("k", List.copyOf(kCanary));
        }
        return new CaseSpec(id, claim, "union", dtype.name(), seed, description, t,
                CaseSpec.config("ratio", ratio, "window", window, "rawPrefix", rawPrefix, "rowQ0", rowQ0,
                        "dtype", dtype.name()), canary);
    }

    static float[] round(float[] x, DType dtype) {
        float[] out = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = dtype.round(x[i]);
        }
        return out;
    }

    String shapeText() {
        return "B " + b + ", H " + h + ", tq " + tq + ", tk " + tk + ", tc " + tc + ", D " + d + ", ratio " + ratio
                + ", W " + window + (rawPrefix == 0 ? "" : ", rawPrefix " + rawPrefix)
                + (rowQ0 == null ? "" : ", rowQ0 " + java.util.Arrays.toString(rowQ0)) + (v == null ? ", V = K" : "")
                + (mask == null ? "" : ", mask " + java.util.Arrays.toString(maskShape));
    }
}
