package io.attnproof.attention.dsv4;

import io.attnproof.attention.Require;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.engine.SoftmaxWithSinks;
import io.attnproof.attention.engine.UnionRows;
import io.attnproof.attention.engine.UnionStage;
import io.attnproof.attention.mask.CallerMasks;
import io.attnproof.attention.mask.GraphDecodeMask;
import io.attnproof.attention.mask.RaggedRows;
import io.attnproof.attention.mask.RaggedUnionMask;
import io.attnproof.attention.mask.UnionMask;
import io.attnproof.attention.mask.UnionMaskKey;
import io.attnproof.attention.mask.UnionMaskMemo;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;
import java.util.OptionalInt;

/**
 * {@code dsv4_attention} for a uniform batch: one softmax over the narrowed raw sliding window plus the compressed
 * blocks, with the per-head sink in the denominator only. {@code q[B,H,tq,D]}, {@code k} and {@code v}
 * {@code [B,1,tk,D]} (one shared K/V head), optional {@code compressedKv[B,1,tc,D]}, optional caller mask, sinks
 * {@code [H]} (null for none). Returns {@code [B,H,tq,D]} in q's dtype.
 */
public final class Dsv4Attention {
    private Dsv4Attention() {
    }

    /** How the scores are formed; both take the same dot products, so they agree bit for bit. */
    public enum Path {
        /** Each query head against the shared K/V head repeated to it. */
        REPEAT_KV,
        /** Decode ({@code tq == 1}) with sinks: the H heads become the query rows of one MQA head. */
        ABSORBED_MQA
    }

    /** The path a call takes: absorbed MQA exactly when {@code tq == 1} and sinks are present. */
    public static Path pathFor(Tensor q, Tensor sinks) {
        return q.dim(2) == 1 && sinks != null ? Path.ABSORBED_MQA : Path.REPEAT_KV;
    }

    /**
     * The window handed to a generic SDPA backend: {@code W} on STANDARD layers, none on CSA/HCA, where a relative
     * window over {@code [raw ++ compressed]} would delete compressed columns.
     */
    public static OptionalInt sdpaSlidingWindow(CompressRatio ratio, int window) {
        Require.that(window >= 1, "slidingWindow", window, "be >= 1");
        return Require.present("compressRatio", ratio) == CompressRatio.STANDARD ? OptionalInt.of(window)
                : OptionalInt.empty();
    }

    /** {@code dsv4_attention} on the path {@link #pathFor} picks. */
    public static Tensor attention(Tensor q, Tensor k, Tensor v, Tensor compressedKv, Tensor mask, Tensor sinks,
            Dsv4Config config) {
        Require.present("q", q);
        return attention(q, k, v, compressedKv, mask, sinks, config, pathFor(q, sinks));
    }

    /** {@code dsv4_attention} forced onto {@code path}; ABSORBED_MQA needs {@code tq == 1} and sinks. */
    public static Tensor attention(Tensor q, Tensor k, Tensor v, Tensor compressedKv, Tensor mask, Tensor sinks,
            Dsv4Config config, Path path) {
        return attention(q, k, v, compressedKv, mask, sinks, config, path, Backend.cpu());
    }

    /**
     * {@code dsv4_attention} with its last stage (scores, the union mask, softmax with sinks, P.V) on
     * {@code backend}: the Java kernels on the CPU lane ({@code path} as given), the native unfused masked path
     * ({@link Backend#attendMasked}) on the others. Narrowing, concatenation and the union mask are this method's
     * in every case, so each lane judges the same keys under the same mask.
     */
    public static Tensor attention(Tensor q, Tensor k, Tensor v, Tensor compressedKv, Tensor mask, Tensor sinks,
            Dsv4Config config, Backend backend) {
        Require.present("q", q);
        return attention(q, k, v, compressedKv, mask, sinks, config, pathFor(q, sinks), backend);
    }

    private static Tensor attention(Tensor q, Tensor k, Tensor v, Tensor compressedKv, Tensor mask, Tensor sinks,
            Dsv4Config config, Path path, Backend backend) {
        Require.present("backend", backend);
        Require.present("config", config);
        Require.present("path", path);
        checkQkv(q, k, v);
        Tensor compressed = config.compressRatio() == CompressRatio.STANDARD ? null : compressedKv;
        int batch = q.dim(0);
        int heads = q.dim(1);
        int tq = q.dim(2);
        int headDim = q.dim(3);
        if (compressed != null) {
            int[] cs = compressed.shape();
            Require.that(cs.length == 4 && cs[0] == batch && cs[1] == 1 && cs[3] == headDim, "compressed_kv.shape", cs,
                    "be [" + batch + ", 1, t_c, " + headDim + "]");
            Require.that(compressed.dtype() == q.dtype() && compressed.device().equals(q.device()),
                    "compressed_kv", compressed, "share q's dtype " + q.dtype() + " and device " + q.device());
        }
        float[] sink = sinks == null ? null : finiteSinks(sinks, heads);
        Require.that(path == Path.REPEAT_KV || (tq == 1 && sinks != null), "path", path,
                "be REPEAT_KV unless t_q == 1 and sinks are present (t_q = " + tq + ")");
        int tc = compressed == null ? 0 : compressed.dim(2);
        UnionGeometry g = UnionGeometry.of(tq, k.dim(2), tc, config.slidingWindow(), config.rawPrefix());

        // Keys before base are invisible to every row: narrowing to the keep span is an identity. The narrowed and
        // concatenated rows are views of k, v and compressed_kv: nothing is copied.
        int from = (int) (g.base() - config.rawPrefix());
        boolean vAliasesK = VkDedup.vAliasesK(k, v); // before narrowing, which makes new ids
        UnionRows.Span rawKeys = UnionRows.Span.of(k, from, g.keep());
        UnionRows.Span rawValues = VkDedup.site(vAliasesK, rawKeys, () -> UnionRows.Span.of(v, from, g.keep()));
        UnionRows keys = UnionRows.of(rawKeys, null);
        UnionRows values = UnionRows.of(rawValues, null);
        if (tc > 0) {
            UnionRows.Span blocks = UnionRows.Span.of(compressed, 0, tc);
            keys = UnionRows.of(rawKeys, blocks);
            values = VkDedup.site(vAliasesK, keys, () -> UnionRows.of(rawValues, blocks));
        }
        Local local = localMask(g, tq, q, config);
        UnionStage stage = new UnionStage(q, k, v, tc > 0 ? compressed : null, from, g.keep(), vAliasesK, keys, values,
                local.rule(), local.dense(), mask,
                new CallerMasks.Span(batch, heads, tq, g.tkFull(), g.base(), g.keep(), tc),
                path == Path.ABSORBED_MQA, sink);
        float[] out = backend.attendUnion(stage);
        return Tensor.wrap(out, q.dtype(), q.device(), batch, heads, tq, headDim);
    }

    /** A call's local mask: the dense additive form, and the uniform rule it was built from (null when not uniform). */
    record Local(Tensor dense, UnionMask rule) {
    }

    /**
     * The local additive mask of a call and its rule: built fresh in graph decode and for a ragged cohort (per-row
     * leads are content, not key); a uniform dense call takes its mask from the memo (one lookup per call, so a
     * 43-layer step still builds one mask per ratio class) and hands the kernel the rule of that mask's key.
     */
    static Local localMask(UnionGeometry g, int tq, Tensor q, Dsv4Config config) {
        int ratio = config.compressRatio().value();
        UnionMask mask = new UnionMask(g.q0(), tq, g.base(), g.keep(), config.slidingWindow(), g.tc(), ratio);
        long[] positions = config.graphPositions();
        if (positions != null) {
            Require.that(positions.length == q.dim(0), "graphPositions.length", positions.length,
                    "equal the batch " + q.dim(0));
            return new Local(new GraphDecodeMask(mask, positions).materialize(q.dtype(), q.device()), null);
        }
        long[] rows = RaggedRows.resolve(config.rowQ0(), g.q0(), q.dim(0));
        if (rows != null) {
            return new Local(new RaggedUnionMask(mask, rows).materialize(q.dtype(), q.device()), null);
        }
        UnionMaskKey key = UnionMaskKey.of(mask, q.dtype(), q.device());
        return new Local(UnionMaskMemo.current().get(key), key.mask());
    }

    private static void checkQkv(Tensor q, Tensor k, Tensor v) {
        Require.present("q", q);
        Require.present("k", k);
        Require.present("v", v);
        Require.that(q.rank() == 4, "q.rank", q.rank(), "be 4 [B, H, t_q, D]");
        Require.that(k.rank() == 4, "k.rank", k.rank(), "be 4 [B, 1, t_k, D]");
        int[] ks = k.shape();
        Require.that(ks[0] == q.dim(0) && ks[1] == 1 && ks[3] == q.dim(3), "k.shape", ks,
                "be [" + q.dim(0) + ", 1, t_k, " + q.dim(3) + "] (one shared K/V head, q's batch and head dim)");
        Require.that(Arrays.equals(v.shape(), ks), "v.shape", v.shape(), "equal k.shape " + Arrays.toString(ks));
        Require.that(q.dim(1) >= 1, "q.shape[1] (heads)", q.dim(1), "be >= 1");
        Require.that(q.dim(3) >= 1, "q.shape[3] (head dim)", q.dim(3), "be >= 1");
        for (Tensor t : new Tensor[] {k, v}) {
            Require.that(t.dtype() == q.dtype() && t.device().equals(q.device()), "k/v", t,
                    "share q's dtype " + q.dtype() + " and device " + q.device());
        }
    }

    private static float[] finiteSinks(Tensor sinks, int heads) {
        float[] s = SoftmaxWithSinks.sinkValues(sinks, heads);
        for (int h = 0; h < s.length; h++) {
            Require.that(Float.isFinite(s[h]), "sinks[" + h + "]", s[h],
                    "be finite in dsv4_attention (pass null sinks for a layer without a sink)");
        }
        return s;
    }
}
