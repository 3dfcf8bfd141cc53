package io.attnproof.conformance.corpus;

import io.attnproof.attention.tensor.DType;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.conformance.npy.Npy;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The values of one sinks-attention case while the corpus is built: dense {@code q[B,Hq,tq,D]},
 * {@code k, v[B,Hkv,tk,D]}, or packed varlen rows ({@code cuQ}, {@code cuK} non-null: {@code q[totalQ,Hq,D]},
 * {@code k, v[totalK,Hkv,D]}); sinks {@code [Hq]} ({@code -inf}: none); optional mask; window (0: none).
 */
final class SinksData {
    int b;
    int hq;
    int hkv;
    int tq;
    int tk;
    int d;
    int window;
    int[] cuQ;
    int[] cuK;
    float[] q;
    float[] k;
    float[] v;
    float[] sinks;
    /** No sinks field in the case at all (the reader's "no sink term"), distinct from sinks of -inf. */
    boolean noSinks;
    int[] maskShape;
    float[] mask;

    /** Dense seeded values, every batch row from its own stream; sinks live (N(0,1)) or -inf. */
    static SinksData dense(long seed, int b, int hq, int hkv, int tq, int tk, int d, int window, boolean liveSinks) {
        SinksData x = new SinksData();
        x.b = b;
        x.hq = hq;
        x.hkv = hkv;
        x.tq = tq;
        x.tk = tk;
        x.d = d;
        x.window = window;
        x.q = new float[b * hq * tq * d];
        x.k = new float[b * hkv * tk * d];
        x.v = new float[b * hkv * tk * d];
        for (int i = 0; i < b; i++) {
            SplittableRandom rng = Streams.row(seed, i);
            UnionData.fill(rng, x.q, i * hq * tq * d, hq * tq * d, 1.5);
            UnionData.fill(rng, x.k, i * hkv * tk * d, hkv * tk * d, 1.0);
            UnionData.fill(rng, x.v, i * hkv * tk * d, hkv * tk * d, 1.0);
        }
        x.sinks = sinks(seed, hq, liveSinks);
        return x;
    }

    /** Packed varlen rows: sequence i has qLens[i] queries and kLens[i] keys. */
    static SinksData varlen(long seed, int[] qLens, int[] kLens, int hq, int hkv, int d, int window, boolean liveSinks) {
        SinksData x = new SinksData();
        x.hq = hq;
        x.hkv = hkv;
        x.d = d;
        x.window = window;
        x.b = qLens.length;
        x.cuQ = new int[qLens.length + 1];
        x.cuK = new int[kLens.length + 1];
        for (int i = 0; i < qLens.length; i++) {
            x.cuQ[i + 1] = x.cuQ[i] + qLens[i];
            x.cuK[i + 1] = x.cuK[i] + kLens[i];
        }
        x.tq = x.cuQ[qLens.length];
        x.tk = x.cuK[kLens.length];
        x.q = new float[x.tq * hq * d];
        x.k = new float[x.tk * hkv * d];
        x.v = new float[x.tk * hkv * d];
        SplittableRandom rng = Streams.named(seed, "packed");
        UnionData.fill(rng, x.q, 0, x.q.length, 1.5);
        UnionData.fill(rng, x.k, 0, x.k.length, 1.0);
        UnionData.fill(rng, x.v, 0, x.v.length, 1.0);
        x.sinks = sinks(seed, hq, liveSinks);
        return x;
    }

    private static float[] sinks(long seed, int hq, boolean live) {
        float[] s = new float[hq];
        SplittableRandom r = Streams.named(seed, "sinks");
        for (int i = 0; i < hq; i++) {
            s[i] = live ? (float) r.nextGaussian() : Float.NEGATIVE_INFINITY;
        }
        return s;
    }

    SinksData copy() {
        SinksData x = new SinksData();
        x.b = b;
        x.hq = hq;
        x.hkv = hkv;
        x.tq = tq;
        x.tk = tk;
        x.d = d;
        x.window = window;
        x.cuQ = cuQ == null ? null : cuQ.clone();
        x.cuK = cuK == null ? null : cuK.clone();
        x.q = q.clone();
        x.k = k.clone();
        x.v = v.clone();
        x.sinks = sinks.clone();
        x.noSinks = noSinks;
        x.maskShape = maskShape == null ? null : maskShape.clone();
        x.mask = mask == null ? null : mask.clone();
        return x;
    }

    /** A dense case cut to its first {@code n} keys (tq must stay <= n). */
    SinksData firstKeys(int n) {
        SinksData x = copy();
        x.tk = n;
        x.k = new float[b * hkv * n * d];
        x.v = new float[b * hkv * n * d];
        for (int i = 0; i < b * hkv; i++) {
            System.arraycopy(k, i * tk * d, x.k, i * n * d, n * d);
            System.arraycopy(v, i * tk * d, x.v, i * n * d, n * d);
        }
        return x;
    }

    boolean varlen() {
        return cuQ != null;
    }

    CaseSpec toCase(String id, String claim, DType dtype, long seed, String description) {
        Npy.DType storage = dtype == DType.F16 ? Npy.DType.F2 : Npy.DType.F4;
        Map<String, CaseSpec.Arr> t = new LinkedHashMap<>();
        int[] qs = varlen() ? new int[] {tq, hq, d} : new int[] {b, hq, tq, d};
        int[] ks = varlen() ? new int[] {tk, hkv, d} : new int[] {b, hkv, tk, d};
        t.put("q", new CaseSpec.Arr(qs, UnionData.round(q, dtype), storage));
        t.put("k", new CaseSpec.Arr(ks, UnionData.round(k, dtype), storage));
        t.put("v", new CaseSpec.Arr(ks.clone(), UnionData.round(v, dtype), storage));
        if (!noSinks) {
            t.put("sinks", new CaseSpec.Arr(new int[] {hq}, sinks.clone(), Npy.DType.F4));
        }
        if (mask != null) {
            t.put("mask", new CaseSpec.Arr(maskShape.clone(), UnionData.round(mask, dtype), storage));
        }
        return new CaseSpec(id, claim, "sinks", dtype.name(), seed, description, t,
                CaseSpec.config("window", window, "cu_seqlens_q", cuQ, "cu_seqlens_k", cuK, "dtype", dtype.name()),
                new LinkedHashMap<>());
    }

    String shapeText() {
        String shapes = varlen() ? "varlen cu_seqlens_q " + java.util.Arrays.toString(cuQ) + ", cu_seqlens_k "
                + java.util.Arrays.toString(cuK) + ", Hq " + hq + ", Hkv " + hkv + ", D " + d
                : "B " + b + ", Hq " + hq + ", Hkv " + hkv + ", tq " + tq + ", tk " + tk + ", D " + d;
        return shapes + ", window " + window + (mask == null ? "" : ", mask " + java.util.Arrays.toString(maskShape))
                + (noSinks ? ", no sinks (absent)" : "");
    }
}
