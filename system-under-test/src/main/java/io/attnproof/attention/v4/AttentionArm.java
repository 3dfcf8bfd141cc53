package io.attnproof.attention.v4;

import io.attnproof.attention.Require;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.kvcache.BlockTable;
import io.attnproof.attention.kvcache.PagedCache;
import io.attnproof.attention.kvcache.SingleCache;
import io.attnproof.attention.tensor.Tensor;

/**
 * The four call sites of {@code dsv4_attention} in the V4 layer and the K/V handles each passes (SYSTEM.md §9):
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
        return switch (this) {
            case PAGED -> {
                PagedCache cache = new PagedCache(4, (k.dim(2) + 3) / 4, k.dim(3), k.dtype());
                BlockTable table = cache.newTable();
                Tensor v = k.copy(); // writing and reading one storage would self-deadlock the cache write
                cache.reshapeAndCache(k, v, cache.appendSlots(table, k.dim(2)));
                PagedCache.Gathered g = cache.gather(table, k.dim(2));
                yield Dsv4Attention.attention(q, g.k(), pagedKTwice ? g.k() : g.v(), compressed, null, sinks, config);
            }
            case DUMMY -> Dsv4Attention.attention(q, k, k, compressed, null, sinks, config);
            case GRAPH_DECODE -> {
                Tensor kFull = SingleCache.of(k, k, k.dim(2)).k(); // one appended buffer
                long position = config.rawPrefix() + k.dim(2) - 1L;
                yield Dsv4Attention.attention(q, kFull, kFull, compressed, null, sinks,
                        config.withGraphPositions(position));
            }
            case DENSE -> {
                SingleCache cache = SingleCache.of(k, k, k.dim(2));
                Tensor kCached = cache.k(); // one cached span
                yield Dsv4Attention.attention(q, kCached, cache.v(), compressed, null, sinks, config);
            }
        };
    }
}
