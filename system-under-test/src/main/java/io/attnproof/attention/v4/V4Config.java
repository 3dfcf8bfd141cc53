package io.attnproof.attention.v4;

import io.attnproof.attention.Require;

/**
 * Dimensions of the V4 attention stack: {@code layers} attention layers (ratios from
 * {@link io.attnproof.attention.dsv4.CompressRatio#forV4Layer}) over a {@code hidden}-wide residual stream, H query
 * heads of dim D sharing one K = V head, sliding window W, a {@code vocab}-token LM head whose bigram prior of
 * strength {@code prior} makes greedy decoding (and the MTP draft) observable.
 */
public record V4Config(int vocab, int hidden, int heads, int headDim, int window, int layers, int capacity,
        double prior, long seed) {

    public V4Config {
        Require.that(vocab >= 2, "vocab", vocab, "be >= 2");
        Require.that(hidden >= 1, "hidden", hidden, "be >= 1");
        Require.that(heads >= 1, "heads", heads, "be >= 1");
        Require.that(headDim >= 2 && headDim % 2 == 0, "headDim", headDim, "be even and >= 2 (the CSA compressor halves)");
        Require.that(window >= 1, "window", window, "be >= 1");
        Require.that(layers >= 1 && layers <= 43, "layers", layers, "lie in [1, 43] (the MTP block is layer 43)");
        Require.that(capacity >= 1, "capacity", capacity, "be >= 1");
        Require.that(Double.isFinite(prior) && prior >= 0, "prior", prior, "be finite and >= 0");
    }

    /** A small test configuration: H = 4, D = 16, W = 16, all 43 layers. */
    public static V4Config small(long seed) {
        return new V4Config(64, 32, 4, 16, 16, 43, 512, 3.5, seed);
    }

    /** The real V4 attention dimensions: H = 64, D = 512, W = 128 (for benchmarks; heavy). */
    public static V4Config real(long seed) {
        return new V4Config(1024, 512, 64, 512, 128, 43, 4096, 3.0, seed);
    }
}
