package io.attnproof.attention.v4;

import io.attnproof.attention.Require;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.kvcache.BlockTable;
import io.attnproof.attention.kvcache.PagedCache;
import io.attnproof.attention.kvcache.SingleCache;
import io.attnproof.attention.tensor.Tensor;

/**
 * The four call sites of {@code dsv4_attention} in the V4 layer and the K/V handles each passes (docs/system.md §9):
 * paged serving gathers K and V from two pools (V written from {@code k.copy()}, so it never aliases — unless the
 * arm passes the gathered K twice, which is byte-identical); dummy/imatrix passes one binding twice; graph decode
 * and the dense normal cache pass one buffer twice.
 */
public enum AttentionArm {
    PAGED,
    DUMMY,
    GRAPH_DECODE,
    DENSE;

    /**
     * Runs this arm's call for new keys {@code k} ([1,1,t,D], appended to a fresh cache of the arm's kind) and
     * queries {@code q} ([1,H,tq,D]); {@code pagedKTwice} makes the paged arm pass the gathered K as V too.
     */
    public Tensor call(Tensor q, Tensor k, Tensor compressed, Tensor sinks, Dsv4Config config, boolean pagedKTwice) {
        Require.that(k.dim(0) == 1, "k.shape[0]", k.dim(0), "be 1: the arms are traced for one request");
        SingleCache cache = SingleCache.of(k, k, k.dim(2)); // one appended buffer: K and V are one handle
        return attend(q, cache.k(), cache.v(), compressed, sinks, config, pagedKTwice);
    }

    /**
     * This arm's {@code dsv4_attention} call over a layer's cached span ({@code kCached}, {@code vCached}
     * [B,1,t,D]): the handles it passes are the arm's (docs/system.md §9). The V4 model calls this for every layer.
     */
    public Tensor attend(Tensor q, Tensor kCached, Tensor vCached, Tensor compressed, Tensor sinks,
            Dsv4Config config, boolean pagedKTwice) {
        return switch (this) {
            case PAGED -> {
                int b = kCached.dim(0);
                int t = kCached.dim(2);
                PagedCache cache = new PagedCache(4, b * ((t + 3) / 4), kCached.dim(3), kCached.dtype());
                Tensor[] ks = new Tensor[b];
                Tensor[] vs = new Tensor[b];
                for (int i = 0; i < b; i++) {
                    BlockTable table = cache.newTable();
                    Tensor k = kCached.narrow(0, i, 1).copy();
                    Tensor v = k.copy(); // writing and reading one storage would self-deadlock the cache write
                    cache.reshapeAndCache(k, v, cache.appendSlots(table, t));
                    PagedCache.Gathered g = cache.gather(table, t);
                    ks[i] = g.k();
                    vs[i] = g.v();
                }
                Tensor k = b == 1 ? ks[0] : Tensor.cat(0, ks);
                Tensor v = b == 1 ? vs[0] : Tensor.cat(0, vs);
                yield Dsv4Attention.attention(q, k, pagedKTwice ? k : v, compressed, null, sinks, config);
            }
            case DUMMY -> Dsv4Attention.attention(q, kCached, kCached, compressed, null, sinks, config);
            case GRAPH_DECODE -> {
                long position = config.rawPrefix() + kCached.dim(2) - 1L;
                yield Dsv4Attention.attention(q, kCached, kCached, compressed, null, sinks,
                        config.withGraphPositions(position));
            }
            case DENSE -> Dsv4Attention.attention(q, kCached, vCached, compressed, null, sinks, config);
        };
    }

    /**
     * The arm a V4 layer takes for a call of {@code tq} queries under {@code config}: graph decode serves
     * single-query uniform decode steps of compressed (CSA/HCA) layers only; prefill, ragged steps and ratio-0 layers
     * take the dense arm. The other arms serve every call.
     */
    public AttentionArm forCall(int tq, Dsv4Config config) {
        boolean graph = tq == 1 && config.rowQ0() == null
                && config.compressRatio() != io.attnproof.attention.dsv4.CompressRatio.STANDARD;
        return this == GRAPH_DECODE && !graph ? DENSE : this;
    }
}
