package io.attnproof.attention.compressor;

import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * One row's compressor stream: block b is emitted the moment token (b+1)R - 1 is pushed, so after T tokens
 * {@code tc() == floor(T/R)} and the blocks equal, bit for bit, those of a prefill of the same T tokens however the
 * tokens were chunked. Holds only the row's own tokens (the {@code < R} waiting remainder and, for R = 4, the last
 * complete block kept for the next block's overlap); a refused push leaves it unchanged. Not thread-safe.
 */
public final class CompressorState {
    private final BlockPool pool;
    private final int ratio;
    private final int width;
    private float[][] earlierKv;      // R = 4: the last complete block's tokens; null before block 0 exists
    private float[][] earlierScore;
    private float[][] kv;             // the current block's tokens [R][width], rows [0, filled) valid
    private float[][] score;
    private int filled;
    private long seen;
    private final List<float[]> blocks = new ArrayList<>();

    CompressorState(BlockPool pool, int ratio, int width) {
        this.pool = pool;
        this.ratio = ratio;
        this.width = width;
        this.kv = new float[ratio][];
        this.score = new float[ratio][];
    }

    /**
     * Pushes one token's value and gate (each of width D for R = 128, 2D for R = 4) and returns the block it
     * completes, if any (an empty list otherwise).
     *
     * @throws IllegalArgumentException naming {@code kv} or {@code score} for a wrong length or a NaN/infinite value
     */
    public List<float[]> push(float[] kv, float[] score) {
        float[] k = CompressorWeights.finiteRow("kv", kv, width);
        float[] s = CompressorWeights.finiteRow("score", score, width);
        float[] block = accept(k, s);
        return block == null ? List.of() : List.of(block.clone());
    }

    /**
     * Pushes tokens {@code kv[t]}, {@code score[t]} in order and returns the blocks they complete; every token is
     * validated before any is taken, so a refusal leaves the state unchanged.
     *
     * @throws IllegalArgumentException naming {@code kv[t]}, {@code score[t]} or the lengths for bad input
     */
    public List<float[]> pushAll(float[][] kv, float[][] score) {
        float[][][] tokens = Compressor.checkedTokens("kv", kv, "score", score, width);
        List<float[]> out = new ArrayList<>();
        for (int t = 0; t < tokens[0].length; t++) {
            float[] block = accept(tokens[0][t], tokens[1][t]);
            if (block != null) {
                out.add(block.clone());
            }
        }
        return out;
    }

    /**
     * An independent copy: pushing to either never changes the other. A speculative step compresses its
     * not-yet-verified tokens on a copy and pushes only the committed ones to the row's own state.
     */
    public CompressorState copy() {
        CompressorState c = new CompressorState(pool, ratio, width);
        c.earlierKv = earlierKv;       // accepted token rows are never written again: sharing them is safe
        c.earlierScore = earlierScore;
        c.kv = kv.clone();
        c.score = score.clone();
        c.filled = filled;
        c.seen = seen;
        c.blocks.addAll(blocks);
        return c;
    }

    /** Tokens pushed so far (T_hist). */
    public long seen() {
        return seen;
    }

    /** Blocks emitted so far: {@code t_c = floor(T_hist / R)}. */
    public int tc() {
        return blocks.size();
    }

    /** Tokens waiting for their block to complete ({@code T_hist mod R}). */
    public int pending() {
        return filled;
    }

    /** Copies of every block emitted so far, in order. */
    public List<float[]> blocks() {
        List<float[]> out = new ArrayList<>(blocks.size());
        for (float[] b : blocks) {
            out.add(b.clone());
        }
        return out;
    }

    /** The row's compressed keys so far as {@code compressed_kv [1, 1, t_c, D]} (F32, CPU). */
    public Tensor compressedKv() {
        return Compressor.compressedKv(blocks, pool.headDim());
    }

    /** Takes a validated token (owned by the state); returns the block it completes, or null. */
    float[] accept(float[] k, float[] s) {
        kv[filled] = k;
        score[filled] = s;
        filled++;
        seen++;
        if (filled < ratio) {
            return null;
        }
        float[] block = pool.pool(earlierKv, earlierScore, 0, kv, score, 0);
        blocks.add(block);
        if (ratio == 4) {
            earlierKv = kv;
            earlierScore = score;
        }
        kv = new float[ratio][];
        score = new float[ratio][];
        filled = 0;
        return block;
    }
}
