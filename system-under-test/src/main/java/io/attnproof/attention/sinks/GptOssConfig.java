package io.attnproof.attention.sinks;

import io.attnproof.attention.Require;
import io.attnproof.attention.mask.VarlenCausalMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;

/**
 * GPT-OSS attention layers: a sliding window of {@code slidingWindow} keys on even layers ({@code layer % 2 == 0}),
 * full causal on odd layers, sinks on every layer, GQA with {@code queryHeads} a multiple of {@code kvHeads}.
 */
public record GptOssConfig(int layers, int queryHeads, int kvHeads, int headDim, int slidingWindow) {
    /** GPT-OSS's attention geometry: 64 query heads over 8 KV heads, head_dim 64, window 128. */
    public static final int QUERY_HEADS = 64;
    public static final int KV_HEADS = 8;
    public static final int HEAD_DIM = 64;
    public static final int SLIDING_WINDOW = 128;

    public GptOssConfig {
        Require.that(layers >= 1, "layers", layers, "be >= 1");
        Require.that(queryHeads >= 1, "queryHeads", queryHeads, "be >= 1");
        Require.that(kvHeads >= 1 && queryHeads % kvHeads == 0, "kvHeads", kvHeads,
                "divide queryHeads = " + queryHeads + " (GQA)");
        Require.that(headDim >= 1, "headDim", headDim, "be >= 1");
        Require.that(slidingWindow >= 1, "slidingWindow", slidingWindow, "be >= 1");
    }

    /** GPT-OSS with {@code layers} layers (24 in gpt-oss-20b, 36 in gpt-oss-120b). */
    public static GptOssConfig gptOss(int layers) {
        return new GptOssConfig(layers, QUERY_HEADS, KV_HEADS, HEAD_DIM, SLIDING_WINDOW);
    }

    /** The window {@code sinks_attn} gets on {@code layer}: {@code slidingWindow} on even layers, 0 (none) on odd. */
    public int window(int layer) {
        checkLayer(layer);
        return layer % 2 == 0 ? slidingWindow : 0;
    }

    /** Every layer has sinks (one logit per query head). */
    public boolean hasSinks(int layer) {
        checkLayer(layer);
        return true;
    }

    /** Query heads per KV head. */
    public int group() {
        return queryHeads / kvHeads;
    }

    /**
     * The mask GPT-OSS itself passes on {@code layer}: its causal (and, on even layers, windowed) rule as an additive
     * {@code [1, 1, tq, tk]} F32 mask on {@code device}. GPT-OSS always passes it, so its calls never go fused.
     */
    public Tensor layerMask(int layer, int tq, int tk, Device device) {
        Tensor rule = new VarlenCausalMask(tq, tk, window(layer)).materialize();
        return Tensor.of(rule.toFloatArray(), DType.F32, Require.present("device", device), 1, 1, tq, tk);
    }

    /** One layer's attention: {@code sinks_attn} with this layer's window, after checking the tensors fit the config. */
    public Tensor attention(int layer, Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask) {
        int window = window(layer);
        Require.present("q", q);
        Require.present("k", k);
        Require.that(q.rank() == 4 && q.dim(1) == queryHeads && q.dim(3) == headDim, "q.shape", q.shape(),
                "be [B, " + queryHeads + ", t_q, " + headDim + "]");
        Require.that(k.rank() == 4 && k.dim(1) == kvHeads, "k.shape", k.shape(),
                "be [B, " + kvHeads + ", t_k, " + headDim + "]");
        return SinksAttention.sinksAttn(q, k, v, sinks, mask, window);
    }

    private void checkLayer(int layer) {
        Require.that(layer >= 0 && layer < layers, "layer", layer, "lie in [0, " + layers + ")");
    }
}
