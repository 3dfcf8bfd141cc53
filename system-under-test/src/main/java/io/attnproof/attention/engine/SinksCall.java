package io.attnproof.attention.engine;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * The validated sizes of one dense sinks-attention call: {@code q[B,Hq,tq,D]}, {@code k} and {@code v}
 * {@code [B,Hkv,tk,D]} with {@code Hq} a multiple of {@code Hkv} (query head h reads KV head {@code h / (Hq/Hkv)}),
 * sinks {@code [Hq]}.
 */
public record SinksCall(int batch, int queryHeads, int kvHeads, int tq, int tk, int headDim, float[] sink) {

    /** The query heads that share one KV head. */
    public int group() {
        return queryHeads / kvHeads;
    }

    /** Checks q, k, v, sinks and the window of a dense call; every failure names the parameter, value and rule. */
    public static SinksCall of(Tensor q, Tensor k, Tensor v, Tensor sinks, int window) {
        Require.present("q", q);
        Require.present("k", k);
        Require.present("v", v);
        Require.that(q.rank() == 4, "q.rank", q.rank(), "be 4 [B, Hq, t_q, D]");
        Require.that(k.rank() == 4, "k.rank", k.rank(), "be 4 [B, Hkv, t_k, D]");
        Require.that(q.dim(1) >= 1, "q.shape[1] (query heads)", q.dim(1), "be >= 1");
        Require.that(q.dim(3) >= 1, "q.shape[3] (head dim)", q.dim(3), "be >= 1");
        int[] ks = k.shape();
        Require.that(ks[0] == q.dim(0) && ks[3] == q.dim(3), "k.shape", ks,
                "be [" + q.dim(0) + ", Hkv, t_k, " + q.dim(3) + "] (q's batch and head dim)");
        Require.that(ks[1] >= 1 && q.dim(1) % ks[1] == 0, "k.shape[1] (KV heads)", ks[1],
                "divide the query heads " + q.dim(1) + " (GQA: Hq a multiple of Hkv)");
        Require.that(Arrays.equals(v.shape(), ks), "v.shape", v.shape(), "equal k.shape " + Arrays.toString(ks));
        sameKind(q, k, "k");
        sameKind(q, v, "v");
        Require.nonNegative("window", window);
        float[] sink = sinkValues(sinks, q);
        return new SinksCall(q.dim(0), q.dim(1), ks[1], q.dim(2), ks[2], q.dim(3), sink);
    }

    /** Validated sink logits {@code [Hq]} on q's device. */
    /**
     * Refuses, naming the parameter, the value and the rule, anything but packed varlen rows: {@code q[totalQ, Hq, D]},
     * {@code k, v[totalK, Hkv, D]} with Hq a multiple of Hkv, q's dtype and device, and a window {@code >= 0}.
     */
    public static void checkPacked(Tensor q, Tensor k, Tensor v, int window) {
        Require.present("q", q);
        Require.present("k", k);
        Require.present("v", v);
        Require.that(q.rank() == 3, "q.rank", q.rank(), "be 3 [total_q, Hq, D] (packed rows)");
        Require.that(k.rank() == 3, "k.rank", k.rank(), "be 3 [total_k, Hkv, D] (packed rows)");
        int hq = q.dim(1);
        int d = q.dim(2);
        int hkv = k.dim(1);
        Require.that(hq >= 1, "q.shape[1] (query heads)", hq, "be >= 1");
        Require.that(d >= 1, "q.shape[2] (head dim)", d, "be >= 1");
        Require.that(k.dim(2) == d, "k.shape", k.shape(), "be [total_k, Hkv, " + d + "] (q's head dim)");
        Require.that(hkv >= 1 && hq % hkv == 0, "k.shape[1] (KV heads)", hkv,
                "divide the query heads " + hq + " (GQA: Hq a multiple of Hkv)");
        Require.that(Arrays.equals(v.shape(), k.shape()), "v.shape", v.shape(),
                "equal k.shape " + Arrays.toString(k.shape()));
        for (Tensor t : new Tensor[] {k, v}) {
            Require.that(t.dtype() == q.dtype() && t.device().equals(q.device()), "k/v", t,
                    "share q's dtype " + q.dtype() + " and device " + q.device());
        }
        Require.nonNegative("window", window);
    }

    public static float[] sinkValues(Tensor sinks, Tensor q) {
        Require.present("sinks", sinks);
        Require.that(sinks.device().equals(q.device()), "sinks.device", sinks.device(), "equal q's device " + q.device());
        return SoftmaxWithSinks.sinkValues(sinks, q.dim(1));
    }

    /**
     * The caller's mask as {@code [B|1, Hq|1, tq|1, tk]}: rank 2 {@code [tq, tk]} reads as {@code [1, 1, tq, tk]},
     * rank 4 as is; null stays null. Any other shape, or another device than q's, is refused.
     */
    public Tensor mask4(Tensor mask, Tensor q) {
        if (mask == null) {
            return null;
        }
        String rule = "be [t_q, t_k] = [" + tq + ", " + tk + "] or [B|1, Hq|1, t_q|1, t_k] = [" + batch + "|1, "
                + queryHeads + "|1, " + tq + "|1, " + tk + "]";
        int[] s = mask.shape();
        boolean rank2 = s.length == 2 && s[0] == tq && s[1] == tk;
        boolean rank4 = s.length == 4 && (s[0] == 1 || s[0] == batch) && (s[1] == 1 || s[1] == queryHeads)
                && (s[2] == 1 || s[2] == tq) && s[3] == tk;
        Require.that(rank2 || rank4, "mask.shape", s, rule);
        Require.that(mask.device().equals(q.device()), "mask.device", mask.device(), "equal q's device " + q.device());
        return rank2 ? mask.reshape(1, 1, tq, tk) : mask;
    }

    private static void sameKind(Tensor q, Tensor t, String name) {
        Require.that(t.dtype() == q.dtype() && t.device().equals(q.device()), name, t,
                "share q's dtype " + q.dtype() + " and device " + q.device());
    }
}
