package io.attnproof.attention.v4;

import io.attnproof.attention.Require;
import io.attnproof.attention.compressor.CompressorState;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.kvcache.Aligned;
import io.attnproof.attention.kvcache.CacheOps;
import io.attnproof.attention.kvcache.NormalCache;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * The V4 attention stack over a batch of rows: each layer projects q and one K = V head from the normalised
 * residual, appends K to the front-aligned batched cache, compresses (CSA/HCA) on each row's own stream and runs
 * {@code dsv4_attention}; the LM head adds a bigram prior so that greedy decoding is observable.
 */
public final class V4Model {
    private final V4Weights w;
    private final boolean masksRaggedBatches;
    private final AttentionArm arm;

    /** {@code masksRaggedBatches = false} models a target that collapses per-row positions to one scalar. */
    public V4Model(V4Weights weights, boolean masksRaggedBatches) {
        this(weights, masksRaggedBatches, AttentionArm.DENSE);
    }

    /** A model whose layers call {@code dsv4_attention} through {@code arm} (the serving path: dense, paged, ...). */
    public V4Model(V4Weights weights, boolean masksRaggedBatches, AttentionArm arm) {
        this.w = Require.present("weights", weights);
        this.masksRaggedBatches = masksRaggedBatches;
        this.arm = Require.present("arm", arm);
    }

    /** The serving arm this model's layers call attention through. */
    public AttentionArm arm() {
        return arm;
    }

    public V4Model(V4Weights weights) {
        this(weights, true);
    }

    public V4Config config() {
        return w.config;
    }

    /** The capability {@code target_masks_ragged_batches}. */
    public boolean masksRaggedBatches() {
        return masksRaggedBatches;
    }

    /** A new sequence with {@code prompt} as its tokens and nothing cached yet. */
    public RowState newRow(List<Integer> prompt) {
        Require.that(prompt != null && !prompt.isEmpty(), "prompt", prompt, "hold at least one token");
        for (int t : prompt) {
            Require.that(t >= 0 && t < w.config.vocab(), "prompt token", t, "lie in [0, " + w.config.vocab() + ")");
        }
        V4Config c = w.config;
        CompressorState[] compressors = new CompressorState[c.layers()];
        for (int l = 0; l < c.layers(); l++) {
            if (w.layers[l].compressor() != null) {
                compressors[l] = w.layers[l].compressor().newState();
            }
        }
        return new RowState(prompt, NormalCache.create(c.layers(), 1, c.capacity(), c.headDim(), DType.F32, Device.CPU),
                compressors);
    }

    /** One forward pass: logits {@code [B][tq][V]}, the batched cache holding the new K, and the compressor inputs. */
    public record Forward(float[][][] logits, NormalCache batched, int[] leads, float[][][][] compressorKv,
            float[][][][] compressorScore) {
    }

    /**
     * Runs {@code newTokens[b]} (the same count per row) after each row's cached tokens. {@code rowQ0} is handed to
     * attention as the per-row past lengths (null: the scalar path); the rows are not changed.
     */
    public Forward forward(List<RowState> rows, int[][] newTokens, long[] rowQ0) {
        Require.that(rows != null && !rows.isEmpty(), "rows", rows, "hold at least one row");
        Require.that(newTokens != null && newTokens.length == rows.size(), "newTokens.length",
                newTokens == null ? "null" : newTokens.length, "equal the batch " + rows.size());
        int b = rows.size();
        int tq = newTokens[0].length;
        V4Config c = w.config;
        for (int i = 0; i < b; i++) {
            Require.that(newTokens[i].length == tq && tq >= 1, "newTokens[" + i + "].length", newTokens[i].length,
                    "equal t_q = " + tq + " (>= 1) for every row");
            Require.that(rows.get(i).cached() + tq <= c.capacity(), "cached + t_q", rows.get(i).cached() + tq,
                    "be <= capacity " + c.capacity());
        }
        List<NormalCache> caches = new ArrayList<>(b);
        rows.forEach(r -> caches.add(r.cache));
        Aligned<NormalCache> aligned = CacheOps.frontAlignLayers(caches);
        NormalCache batched = aligned.cache();
        float[][][] x = new float[b][tq][];
        for (int i = 0; i < b; i++) {
            for (int t = 0; t < tq; t++) {
                x[i][t] = w.embedding[newTokens[i][t]].clone();
            }
        }
        float[][][][] cKv = new float[c.layers()][][][];
        float[][][][] cScore = new float[c.layers()][][][];
        for (int l = 0; l < c.layers(); l++) {
            V4Weights.Layer layer = w.layers[l];
            float[][][] h = new float[b][tq][];
            for (int i = 0; i < b; i++) {
                for (int t = 0; t < tq; t++) {
                    h[i][t] = rmsNorm(x[i][t]);
                }
            }
            Tensor q = project(h, layer.wq(), c.heads(), c.headDim());
            Tensor kv = project(h, layer.wkv(), 1, c.headDim());
            batched.layer(l).append(kv, kv);
            Tensor k = batched.layer(l).k();
            Tensor v = batched.layer(l).v();
            Tensor compressed = null;
            if (layer.compressor() != null) {
                cKv[l] = new float[b][tq][];
                cScore[l] = new float[b][tq][];
                compressed = compress(rows, l, layer, h, cKv[l], cScore[l]);
            }
            Dsv4Config cfg = Dsv4Config.of(layer.ratio(), c.window(), 0)
                    .withRowQ0(masksRaggedBatches ? rowQ0 : null);
            Tensor out = arm.forCall(tq, cfg).attend(q, k, v, compressed,
                    Tensor.of(layer.sinks(), DType.F32, Device.CPU, c.heads()), cfg, false);
            addOutput(x, out, layer.wo(), c.heads(), c.headDim());
        }
        float[][][] logits = new float[b][tq][];
        for (int i = 0; i < b; i++) {
            for (int t = 0; t < tq; t++) {
                float[] hn = rmsNorm(x[i][t]);
                float[] lg = matVec(w.lmHead, hn);
                lg[w.successor(newTokens[i][t])] += (float) c.prior();
                logits[i][t] = lg;
            }
        }
        return new Forward(logits, batched, aligned.leads(), cKv, cScore);
    }

    /** Each row's blocks after also compressing its new tokens (on a copy of its stream), right-padded with zeros. */
    private Tensor compress(List<RowState> rows, int l, V4Weights.Layer layer, float[][][] h, float[][][] kvOut,
            float[][][] scoreOut) {
        int b = rows.size();
        int d = w.config.headDim();
        List<List<float[]>> blocks = new ArrayList<>(b);
        int tc = 0;
        for (int i = 0; i < b; i++) {
            CompressorState st = rows.get(i).compressors[l].copy();
            for (int t = 0; t < h[i].length; t++) {
                kvOut[i][t] = matVec(layer.wcKv(), h[i][t]);
                scoreOut[i][t] = matVec(layer.wcScore(), h[i][t]);
                st.push(kvOut[i][t], scoreOut[i][t]);
            }
            blocks.add(st.blocks());
            tc = Math.max(tc, st.tc());
        }
        if (tc == 0) {
            return null;
        }
        float[] flat = new float[b * tc * d];
        for (int i = 0; i < b; i++) {
            List<float[]> rowBlocks = blocks.get(i);
            for (int j = 0; j < rowBlocks.size(); j++) {
                System.arraycopy(rowBlocks.get(j), 0, flat, (i * tc + j) * d, d);
            }
        }
        return Tensor.of(flat, DType.F32, Device.CPU, b, 1, tc, d);
    }

    /**
     * Commits the first {@code committed[i]} new tokens of a forward pass into row i: its cache becomes its live run
     * (dead prefix dropped) truncated to {@code lengths[i]}, and its compressor streams take the committed tokens.
     */
    public void commit(List<RowState> rows, Forward f, int[] committed, int[] lengths) {
        int b = rows.size();
        int tq = f.logits()[0].length;
        int[] live = new int[b];
        for (int i = 0; i < b; i++) {
            Require.that(committed[i] >= 0 && committed[i] <= tq, "committed[" + i + "]", committed[i],
                    "lie in [0, t_q = " + tq + "]");
            live[i] = rows.get(i).cached() + tq;
        }
        List<NormalCache> split = CacheOps.cloneOutCache(f.batched(), live);
        for (int i = 0; i < b; i++) {
            RowState row = rows.get(i);
            NormalCache cache = split.get(i);
            cache.setLen(lengths[i]);
            for (int l = 0; l < w.config.layers(); l++) {
                if (row.compressors[l] != null) {
                    for (int t = 0; t < committed[i]; t++) {
                        row.compressors[l].push(f.compressorKv()[l][i][t], f.compressorScore()[l][i][t]);
                    }
                }
            }
            row.cache = cache;
        }
    }

    /** Index of the largest logit (the first on ties). */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int v = 1; v < logits.length; v++) {
            if (logits[v] > logits[best]) {
                best = v;
            }
        }
        return best;
    }

    /** The MTP draft for the token after {@code token}: the LM head's bigram successor (projection-only head). */
    public int draft(int token) {
        return w.successor(token);
    }

    private static Tensor project(float[][][] h, float[][] wm, int heads, int headDim) {
        int b = h.length;
        int tq = h[0].length;
        float[] flat = new float[b * heads * tq * headDim];
        for (int i = 0; i < b; i++) {
            for (int t = 0; t < tq; t++) {
                float[] y = matVec(wm, h[i][t]);
                for (int hh = 0; hh < heads; hh++) {
                    System.arraycopy(y, hh * headDim, flat, ((i * heads + hh) * tq + t) * headDim, headDim);
                }
            }
        }
        return Tensor.of(flat, DType.F32, Device.CPU, b, heads, tq, headDim);
    }

    private static void addOutput(float[][][] x, Tensor out, float[][] wo, int heads, int headDim) {
        int tq = x[0].length;
        float[] o = new float[heads * headDim];
        for (int i = 0; i < x.length; i++) {
            for (int t = 0; t < tq; t++) {
                for (int hh = 0; hh < heads; hh++) {
                    for (int d = 0; d < headDim; d++) {
                        o[hh * headDim + d] = out.get(i, hh, t, d);
                    }
                }
                float[] y = matVec(wo, o);
                for (int j = 0; j < y.length; j++) {
                    x[i][t][j] += y[j];
                }
            }
        }
    }

    static float[] matVec(float[][] m, float[] v) {
        float[] y = new float[m.length];
        for (int r = 0; r < m.length; r++) {
            float acc = 0f;
            float[] row = m[r];
            for (int c = 0; c < v.length; c++) {
                acc += row[c] * v[c];
            }
            y[r] = acc;
        }
        return y;
    }

    static float[] rmsNorm(float[] x) {
        float ss = 0f;
        for (float v : x) {
            ss += v * v;
        }
        float inv = (float) (1.0 / Math.sqrt(ss / x.length + 1e-6f));
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = x[i] * inv;
        }
        return y;
    }
}
