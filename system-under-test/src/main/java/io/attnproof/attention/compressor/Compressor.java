package io.attnproof.attention.compressor;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * The V4 key compressor of one layer (docs/system.md §3), in f32: prefill of T tokens emits {@code floor(T/R)} blocks
 * of width D, block b once token (b+1)R - 1 is seen, each row of a batch compressed as if alone.
 *
 * <p>Per token t the caller passes a value {@code kv_t} and a gate {@code score_t}, already projected. For each block
 * b and output channel d in [0, D), one softmax (max-subtracted, accumulated in f32) runs over the gate logits
 * {@code score + ape} of the block's terms, and {@code pooled[d] = sum weight * value}:
 * <ul>
 *   <li>R = 128 (HCA, disjoint): kv_t, score_t in R^D; block b pools tokens {@code [bR, (b+1)R)}, token bR + i with
 *       logit {@code score[d] + ape[i][d]} and value {@code kv[d]}; ape is {@code [R][D]}.
 *   <li>R = 4 (CSA, overlapping "Ca/Cb halves"): kv_t, score_t in R^{2D}, channels [0, D) the "a" half and
 *       [D, 2D) the "b" half; block b pools tokens {@code [(b-1)R, (b+1)R)} in ONE softmax over 2R terms: earlier
 *       token (b-1)R + i with logit {@code score[d] + ape[i][d]} and value {@code kv[d]}, current token bR + i with
 *       logit {@code score[D+d] + ape[R+i][d]} and value {@code kv[D+d]}; ape is {@code [2R][D]}. Block 0 has no
 *       earlier half (weight 0): its softmax runs over the R current terms only.
 * </ul>
 * Then RMSNorm: {@code out[d] = pooled[d] / sqrt(mean_d(pooled^2) + 1e-6) * gamma[d]}. The {@code < R} remainder
 * waits; for R = 4 a stream also keeps the last complete block's tokens for the next block's overlap.
 * {@code t_c = floor(T_hist / R)}. Bad input (NaN/infinite values, wrong widths) is refused naming the parameter.
 */
public final class Compressor {
    private final CompressorWeights weights;
    private final BlockPool pool;

    private Compressor(CompressorWeights weights) {
        this.weights = weights;
        this.pool = new BlockPool(weights);
    }

    /** The compressor with {@code weights} (already validated by their record). */
    public static Compressor of(CompressorWeights weights) {
        return new Compressor(Require.present("weights", weights));
    }

    public CompressorWeights weights() {
        return weights;
    }

    /** R, 4 or 128. */
    public int ratio() {
        return weights.ratio();
    }

    /** D, the width of each compressed block. */
    public int headDim() {
        return weights.headDim();
    }

    /** Width of each token's kv and score: D for R = 128, 2D for R = 4. */
    public int width() {
        return weights.width();
    }

    /** A fresh, empty stream for one row. */
    public CompressorState newState() {
        return new CompressorState(pool, ratio(), width());
    }

    /**
     * The {@code floor(T/R)} blocks of a prefill of the T tokens {@code kv[t]}, {@code score[t]}; the remainder is
     * not read into any block.
     *
     * @throws IllegalArgumentException naming {@code kv[t]}, {@code score[t]} or the lengths for bad input
     */
    public List<float[]> prefill(float[][] kv, float[][] score) {
        float[][][] tokens = checkedTokens("kv", kv, "score", score, width());
        float[][] k = tokens[0];
        float[][] s = tokens[1];
        int r = ratio();
        int blocks = k.length / r;
        List<float[]> out = new ArrayList<>(blocks);
        for (int b = 0; b < blocks; b++) {
            boolean overlap = r == 4 && b > 0;
            out.add(pool.pool(overlap ? k : null, overlap ? s : null, (b - 1) * r, k, s, b * r));
        }
        return out;
    }

    /**
     * Compresses a batch of rows of different lengths, row i from tokens {@code kv.get(i)[t]},
     * {@code score.get(i)[t]}: each row has its own stream, all streams advance in lock step one token at a time
     * (as a batched decode would; a row that runs out of tokens stops), and row i's blocks equal
     * {@code prefill(kv.get(i), score.get(i))} bit for bit. Every row is validated before any is compressed.
     *
     * @throws IllegalArgumentException naming {@code kv[i][t]}, {@code score[i][t]} or the row counts for bad input
     */
    public List<List<float[]>> prefillBatch(List<float[][]> kv, List<float[][]> score) {
        Require.present("kv", kv);
        Require.present("score", score);
        Require.that(score.size() == kv.size(), "score.size()", score.size(), "equal kv.size() = " + kv.size());
        List<float[][][]> rows = new ArrayList<>(kv.size());
        int longest = 0;
        for (int i = 0; i < kv.size(); i++) {
            float[][][] row = checkedTokens("kv[" + i + "]", kv.get(i), "score[" + i + "]", score.get(i), width());
            rows.add(row);
            longest = Math.max(longest, row[0].length);
        }
        List<CompressorState> states = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            states.add(newState());
        }
        for (int t = 0; t < longest; t++) {
            for (int i = 0; i < rows.size(); i++) {
                float[][][] row = rows.get(i);
                if (t < row[0].length) {
                    states.get(i).accept(row[0][t], row[1][t]);
                }
            }
        }
        List<List<float[]>> out = new ArrayList<>(states.size());
        for (CompressorState state : states) {
            out.add(state.blocks());
        }
        return out;
    }

    /** {@code t_c = floor(tHist / ratio)}: the blocks that exist after {@code tHist} tokens. */
    public static long tc(long tHist, int ratio) {
        Require.that(tHist >= 0, "tHist", tHist, "be >= 0");
        CompressorWeights.requireGeometry(ratio, 2);
        return tHist / ratio;
    }

    /**
     * {@code blocks} as {@code compressed_kv [1, 1, t_c, D]} (F32, CPU), ready for {@code dsv4_attention}.
     *
     * @throws IllegalArgumentException naming {@code blocks[b]} if one is not {@code headDim} finite values
     */
    public static Tensor compressedKv(List<float[]> blocks, int headDim) {
        Require.present("blocks", blocks);
        Require.that(headDim >= 1, "headDim", headDim, "be >= 1");
        float[] flat = new float[blocks.size() * headDim];
        for (int b = 0; b < blocks.size(); b++) {
            float[] block = CompressorWeights.finiteRow("blocks[" + b + "]", blocks.get(b), headDim);
            System.arraycopy(block, 0, flat, b * headDim, headDim);
        }
        return Tensor.of(flat, DType.F32, Device.CPU, 1, 1, blocks.size(), headDim);
    }

    /** Validated copies {@code {kv, score}} of T tokens, each of {@code width} finite values; refusals name the token. */
    static float[][][] checkedTokens(String kvName, float[][] kv, String scoreName, float[][] score, int width) {
        Require.present(kvName, kv);
        Require.present(scoreName, score);
        Require.that(score.length == kv.length, scoreName + ".length", score.length,
                "equal " + kvName + ".length = " + kv.length + " (one gate per token)");
        float[][] k = new float[kv.length][];
        float[][] s = new float[score.length][];
        for (int t = 0; t < kv.length; t++) {
            k[t] = CompressorWeights.finiteRow(kvName + "[" + t + "]", kv[t], width);
            s[t] = CompressorWeights.finiteRow(scoreName + "[" + t + "]", score[t], width);
        }
        return new float[][][] {k, s};
    }
}
