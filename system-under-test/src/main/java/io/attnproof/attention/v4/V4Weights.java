package io.attnproof.attention.v4;

import io.attnproof.attention.compressor.Compressor;
import io.attnproof.attention.compressor.CompressorWeights;
import io.attnproof.attention.dsv4.CompressRatio;
import java.util.SplittableRandom;

/** Seeded weights of the V4 stack: per layer q/kv/output projections, sinks and (CSA/HCA) the compressor. */
public final class V4Weights {
    /** One attention layer's weights; {@code compressor} and its projections are null on ratio-0 layers. */
    public record Layer(CompressRatio ratio, float[][] wq, float[][] wkv, float[][] wo, float[] sinks,
            float[][] wcKv, float[][] wcScore, Compressor compressor) {
    }

    final V4Config config;
    final float[][] embedding;
    final float[][] lmHead;
    final Layer[] layers;

    private V4Weights(V4Config config, float[][] embedding, float[][] lmHead, Layer[] layers) {
        this.config = config;
        this.embedding = embedding;
        this.lmHead = lmHead;
        this.layers = layers;
    }

    /** Weights drawn from {@code config.seed()}: N(0, 1/fan_in) projections, N(0, 1) embeddings and sinks. */
    public static V4Weights seeded(V4Config c) {
        SplittableRandom rng = new SplittableRandom(c.seed());
        int hd = c.heads() * c.headDim();
        Layer[] layers = new Layer[c.layers()];
        for (int l = 0; l < c.layers(); l++) {
            CompressRatio ratio = CompressRatio.forV4Layer(l);
            float[] sinks = new float[c.heads()];
            for (int h = 0; h < sinks.length; h++) {
                sinks[h] = (float) rng.nextGaussian();
            }
            float[][] wcKv = null;
            float[][] wcScore = null;
            Compressor compressor = null;
            if (ratio != CompressRatio.STANDARD) {
                compressor = Compressor.of(CompressorWeights.seeded(ratio.value(), c.headDim(), rng.nextLong()));
                wcKv = matrix(rng, compressor.width(), c.hidden());
                wcScore = matrix(rng, compressor.width(), c.hidden());
            }
            layers[l] = new Layer(ratio, matrix(rng, hd, c.hidden()), matrix(rng, c.headDim(), c.hidden()),
                    matrix(rng, c.hidden(), hd), sinks, wcKv, wcScore, compressor);
        }
        float[][] embedding = new float[c.vocab()][c.hidden()];
        for (float[] row : embedding) {
            for (int i = 0; i < row.length; i++) {
                row[i] = (float) rng.nextGaussian();
            }
        }
        return new V4Weights(c, embedding, matrix(rng, c.vocab(), c.hidden()), layers);
    }

    public V4Config config() {
        return config;
    }

    /** The bigram successor {@code (5 token + 3) mod vocab} the LM head's prior favours; also the MTP draft. */
    public int successor(int token) {
        return (int) ((5L * token + 3) % config.vocab());
    }

    private static float[][] matrix(SplittableRandom rng, int rows, int cols) {
        float[][] m = new float[rows][cols];
        double std = 1.0 / Math.sqrt(cols);
        for (float[] row : m) {
            for (int i = 0; i < cols; i++) {
                row[i] = (float) (std * rng.nextGaussian());
            }
        }
        return m;
    }
}
