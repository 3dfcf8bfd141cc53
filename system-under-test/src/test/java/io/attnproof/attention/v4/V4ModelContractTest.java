package io.attnproof.attention.v4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Contract of the V4 stack on tiny configurations (milliseconds): the config's refusals and their boundaries, the
 * seeded weights' distributions, one layer's forward against an oracle written from docs/system.md's formulas (RMS norm,
 * q/kv projections, scale D^-0.5, one softmax with the sink in the denominator only, output projection, LM head plus
 * the bigram prior), the compressed blocks reaching attention, commit's bookkeeping, and the arms' selection.
 */
class V4ModelContractTest {
    static final long SEED = 1414;

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    static V4Config cfg(int vocab, int hidden, int heads, int headDim, int window, int layers, int capacity) {
        return new V4Config(vocab, hidden, heads, headDim, window, layers, capacity, 1.5, SEED);
    }

    // ---- V4Config ----

    @Test
    void configRefusesEachBoundNamingItAndAcceptsTheBoundaryValues() {
        V4Config min = new V4Config(2, 1, 1, 2, 1, 1, 1, 0.0, 1);
        assertEquals(2, min.vocab());
        assertEquals(43, new V4Config(2, 1, 1, 2, 1, 43, 1, 0.0, 1).layers());
        refused("vocab = 1: must be >= 2", () -> new V4Config(1, 1, 1, 2, 1, 1, 1, 0.0, 1));
        refused("hidden = 0: must be >= 1", () -> new V4Config(2, 0, 1, 2, 1, 1, 1, 0.0, 1));
        refused("heads = 0: must be >= 1", () -> new V4Config(2, 1, 0, 2, 1, 1, 1, 0.0, 1));
        refused("headDim = 0: must be even and >= 2 (the CSA compressor halves)",
                () -> new V4Config(2, 1, 1, 0, 1, 1, 1, 0.0, 1));
        refused("headDim = 3: must be even and >= 2 (the CSA compressor halves)",
                () -> new V4Config(2, 1, 1, 3, 1, 1, 1, 0.0, 1));
        refused("window = 0: must be >= 1", () -> new V4Config(2, 1, 1, 2, 0, 1, 1, 0.0, 1));
        refused("layers = 0: must lie in [1, 43] (the MTP block is layer 43)",
                () -> new V4Config(2, 1, 1, 2, 1, 0, 1, 0.0, 1));
        refused("layers = 44: must lie in [1, 43] (the MTP block is layer 43)",
                () -> new V4Config(2, 1, 1, 2, 1, 44, 1, 0.0, 1));
        refused("capacity = 0: must be >= 1", () -> new V4Config(2, 1, 1, 2, 1, 1, 0, 0.0, 1));
        refused("prior = -0.5: must be finite and >= 0", () -> new V4Config(2, 1, 1, 2, 1, 1, 1, -0.5, 1));
        refused("prior = NaN: must be finite and >= 0", () -> new V4Config(2, 1, 1, 2, 1, 1, 1, Double.NaN, 1));
    }

    @Test
    void theRealConfigHasV4sAttentionDimensions() {
        assertEquals(new V4Config(1024, 512, 64, 512, 128, 43, 4096, 3.0, 9), V4Config.real(9));
    }

    // ---- V4Weights ----

    static double meanSquare(float[][] m) {
        double s = 0;
        int n = 0;
        for (float[] row : m) {
            for (float x : row) {
                s += (double) x * x;
                n++;
            }
        }
        return s / n;
    }

    @Test
    void seededWeightsHaveTheDocumentedDistributions() {
        // N(0, 1/fan_in) projections, N(0, 1) embeddings and sinks; compressors on the CSA/HCA layers only.
        V4Config c = cfg(64, 64, 16, 16, 4, 4, 8);
        V4Weights w = V4Weights.seeded(c);
        assertSame(c, w.config());
        for (int l = 0; l < c.layers(); l++) {
            V4Weights.Layer layer = w.layers[l];
            boolean compressed = CompressRatio.forV4Layer(l) != CompressRatio.STANDARD;
            assertEquals(compressed, layer.compressor() != null, "layer " + l);
            assertEquals(compressed, layer.wcKv() != null, "layer " + l);
            double wq = meanSquare(layer.wq()) * c.hidden();   // 1024 x 64 draws of N(0, 1/64), times 64
            assertTrue(wq > 0.9 && wq < 1.1, "layer " + l + " wq mean square x fan_in " + wq);
            double wo = meanSquare(layer.wo()) * c.heads() * c.headDim();
            assertTrue(wo > 0.9 && wo < 1.1, "layer " + l + " wo mean square x fan_in " + wo);
            double sinks = meanSquare(new float[][] {layer.sinks()});
            assertTrue(sinks > 0.2 && sinks < 3, "layer " + l + " sinks mean square " + sinks);
        }
        double emb = meanSquare(w.embedding);
        assertTrue(emb > 0.9 && emb < 1.1, "embedding mean square " + emb);
        double head = meanSquare(w.lmHead) * c.hidden();
        assertTrue(head > 0.8 && head < 1.2, "lm head mean square x fan_in " + head);
    }

    // ---- V4Model: the small helpers ----

    @Test
    void argmaxTakesTheFirstOfTiedMaxima() {
        assertEquals(1, V4Model.argmax(new float[] {1f, 3f, 3f, 0f}));
        assertEquals(0, V4Model.argmax(new float[] {2f, 2f}));
    }

    @Test
    void matVecAndRmsNormFollowTheirFormulas() {
        assertArrayEquals(new float[] {17f, 39f}, V4Model.matVec(new float[][] {{1f, 2f}, {3f, 4f}}, new float[] {5f, 6f}));
        // mean square 1e-6 equals eps: y = x / sqrt(1e-6 + 1e-6) = +-0.7071
        float[] y = V4Model.rmsNorm(new float[] {1e-3f, -1e-3f});
        assertEquals(0.70710677f, y[0], 1e-5f);
        assertEquals(-0.70710677f, y[1], 1e-5f);
    }

    // ---- V4Model: refusals ----

    @Test
    void newRowForwardAndCommitRefuseBadInputNamingIt() {
        V4Model m = new V4Model(V4Weights.seeded(cfg(8, 4, 1, 2, 4, 1, 4)), true, AttentionArm.PAGED);
        assertSame(AttentionArm.PAGED, m.arm());
        refused("prompt = []: must hold at least one token", () -> m.newRow(List.of()));
        refused("prompt token = 8: must lie in [0, 8)", () -> m.newRow(List.of(1, 8)));
        refused("prompt token = -1: must lie in [0, 8)", () -> m.newRow(List.of(-1)));
        assertEquals(List.of(0, 7), m.newRow(List.of(0, 7)).tokens());
        RowState r = m.newRow(List.of(1));
        refused("rows = []: must hold at least one row", () -> m.forward(List.of(), new int[][] {{1}}, null));
        refused("newTokens.length = 1: must equal the batch 2",
                () -> m.forward(List.of(r, m.newRow(List.of(2))), new int[][] {{1}}, null));
        refused("newTokens.length = null: must equal the batch 1", () -> m.forward(List.of(r), null, null));
        refused("newTokens[1].length = 2: must equal t_q = 1 (>= 1) for every row",
                () -> m.forward(List.of(r, m.newRow(List.of(2))), new int[][] {{1}, {1, 2}}, null));
        refused("newTokens[0].length = 0: must equal t_q = 0 (>= 1) for every row",
                () -> m.forward(List.of(r), new int[][] {{}}, null));
        // capacity 4: four tokens on an empty row fit exactly; one more after them does not.
        V4Model.Forward f = m.forward(List.of(r), new int[][] {{1, 2, 3, 4}}, null);
        refused("committed[0] = 5: must lie in [0, t_q = 4]",
                () -> m.commit(List.of(r), f, new int[] {5}, new int[] {4}));
        refused("committed[0] = -1: must lie in [0, t_q = 4]",
                () -> m.commit(List.of(r), f, new int[] {-1}, new int[] {4}));
        RowState z = m.newRow(List.of(1));
        V4Model.Forward fz = m.forward(List.of(z), new int[][] {{1, 2}}, null);
        m.commit(List.of(z), fz, new int[] {0}, new int[] {2}); // committed == 0: the compressor streams take none
        assertEquals(2, z.cached());
        m.commit(List.of(r), f, new int[] {4}, new int[] {4}); // committed == t_q
        assertEquals(4, r.cached());
        refused("cached + t_q = 5: must be <= capacity 4", () -> m.forward(List.of(r), new int[][] {{5}}, null));
    }

    // ---- V4Model: one layer against the formulas ----

    static double[] rms(double[] x) {
        double ss = 0;
        for (double v : x) {
            ss += v * v;
        }
        double inv = 1.0 / Math.sqrt(ss / x.length + 1e-6);
        double[] y = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = x[i] * inv;
        }
        return y;
    }

    static double[] mv(float[][] m, double[] v) {
        double[] y = new double[m.length];
        for (int r = 0; r < m.length; r++) {
            for (int c = 0; c < v.length; c++) {
                y[r] += m[r][c] * v[c];
            }
        }
        return y;
    }

    /**
     * The oracle of a one-layer (ratio 0) stack over one fresh row: position t attends keys 0..t (window >= t_q);
     * returns the logits [t][V].
     */
    static double[][] oracle(V4Weights w, int[] tokens) {
        V4Config c = w.config;
        V4Weights.Layer layer = w.layers[0];
        int n = tokens.length;
        int d = c.headDim();
        double[][] x = new double[n][];
        double[][] q = new double[n][];
        double[][] kv = new double[n][];
        for (int t = 0; t < n; t++) {
            x[t] = new double[c.hidden()];
            for (int i = 0; i < c.hidden(); i++) {
                x[t][i] = w.embedding[tokens[t]][i];
            }
            double[] h = rms(x[t]);
            q[t] = mv(layer.wq(), h);
            kv[t] = mv(layer.wkv(), h);
        }
        double[][] logits = new double[n][];
        for (int t = 0; t < n; t++) {
            double[] o = new double[c.heads() * d];
            for (int hh = 0; hh < c.heads(); hh++) {
                double[] s = new double[t + 1];
                double max = layer.sinks()[hh];
                for (int j = 0; j <= t; j++) {
                    for (int e = 0; e < d; e++) {
                        s[j] += q[t][hh * d + e] * kv[j][e];
                    }
                    s[j] /= Math.sqrt(d);
                    max = Math.max(max, s[j]);
                }
                double den = Math.exp(layer.sinks()[hh] - max);
                for (int j = 0; j <= t; j++) {
                    double p = Math.exp(s[j] - max);
                    den += p;
                    for (int e = 0; e < d; e++) {
                        o[hh * d + e] += p * kv[j][e];
                    }
                }
                for (int e = 0; e < d; e++) {
                    o[hh * d + e] /= den;
                }
            }
            double[] y = mv(layer.wo(), o);
            double[] x1 = new double[c.hidden()];
            for (int i = 0; i < x1.length; i++) {
                x1[i] = x[t][i] + y[i];
            }
            logits[t] = mv(w.lmHead, rms(x1));
            logits[t][(int) ((5L * tokens[t] + 3) % c.vocab())] += c.prior(); // the successor (5 t + 3) mod vocab
        }
        return logits;
    }

    @Test
    void oneLayerForwardOfTwoRowsMatchesTheFormulasOnEveryArm() {
        V4Weights w = V4Weights.seeded(cfg(8, 6, 2, 4, 4, 1, 8));
        int[][] toks = {{3, 5}, {6, 1}};
        for (AttentionArm arm : AttentionArm.values()) {
            V4Model m = new V4Model(w, true, arm);
            List<RowState> rows = List.of(m.newRow(List.of(3)), m.newRow(List.of(6)));
            V4Model.Forward f = m.forward(rows, toks, null);
            for (int b = 0; b < 2; b++) {
                double[][] want = oracle(w, toks[b]);
                for (int t = 0; t < 2; t++) {
                    for (int v = 0; v < 8; v++) {
                        assertEquals(want[t][v], f.logits()[b][t][v], 1e-4, arm + " row " + b + " t " + t + " v " + v);
                    }
                }
            }
        }
    }

    @Test
    void theArmsGiveTheDenseLogitsBitForBitOnARaggedTwoRowDecode() {
        // Layers 0..3 (ratio 0, 0, CSA, HCA), window 4: rows of 9 and 6 cached tokens, one decode step each.
        V4Weights w = V4Weights.seeded(cfg(16, 8, 2, 4, 4, 4, 16));
        float[][][] want = null;
        for (AttentionArm arm : new AttentionArm[] {AttentionArm.DENSE, AttentionArm.PAGED, AttentionArm.DUMMY,
                AttentionArm.GRAPH_DECODE}) {
            V4Model m = new V4Model(w, true, arm);
            RowState a = prefilled(m, List.of(1, 2, 3, 4, 5, 6, 7, 8, 9));
            RowState b = prefilled(m, List.of(9, 8, 7, 6, 5, 4));
            V4Model.Forward f = m.forward(List.of(a, b), new int[][] {{10}, {11}}, new long[] {9, 6});
            float[][][] got = f.logits();
            if (want == null) {
                want = got;
            }
            for (int r = 0; r < 2; r++) {
                assertArrayEquals(want[r][0], got[r][0], arm + " row " + r);
            }
            // each arm alone, one row (graph decode serves these single-query steps of the compressed layers)
            V4Model.Forward one = m.forward(List.of(a), new int[][] {{10}}, null);
            V4Model dm = new V4Model(w, true, AttentionArm.DENSE);
            V4Model.Forward ref = dm.forward(List.of(prefilled(dm, List.of(1, 2, 3, 4, 5, 6, 7, 8, 9))),
                    new int[][] {{10}}, null);
            assertArrayEquals(ref.logits()[0][0], one.logits()[0][0], arm + " alone");
        }
    }

    static RowState prefilled(V4Model m, List<Integer> prompt) {
        RowState r = m.newRow(prompt);
        int[] toks = prompt.stream().mapToInt(Integer::intValue).toArray();
        V4Model.Forward f = m.forward(List.of(r), new int[][] {toks}, null);
        m.commit(List.of(r), f, new int[] {toks.length}, new int[] {toks.length});
        return r;
    }

    // ---- V4Model: compressed blocks and commit ----

    @Test
    void compressedBlocksReachAttentionExactlyWhenTheyExist() {
        // Layer 2 is CSA (ratio 4). Perturbing its compressor's input projection changes the logits of an 8-token
        // prompt (2 blocks admitted at its last position) and leaves a 3-token prompt (no block yet) bit for bit.
        V4Config c = cfg(16, 8, 2, 4, 16, 3, 16);
        for (int n : new int[] {3, 8}) {
            int[] toks = new int[n];
            for (int i = 0; i < n; i++) {
                toks[i] = (3 * i + 1) % 16;
            }
            V4Weights w = V4Weights.seeded(c);
            V4Model m = new V4Model(w);
            float[] before = m.forward(List.of(m.newRow(List.of(1))), new int[][] {toks}, null).logits()[0][n - 1];
            for (float[] row : w.layers[2].wcKv()) {
                row[0] += 0.5f;
            }
            float[] after = m.forward(List.of(m.newRow(List.of(1))), new int[][] {toks}, null).logits()[0][n - 1];
            long differing = 0;
            for (int v = 0; v < before.length; v++) {
                differing += Float.floatToRawIntBits(before[v]) == Float.floatToRawIntBits(after[v]) ? 0 : 1;
            }
            if (n < 4) {
                assertEquals(0, differing, "no compressed block exists for " + n + " tokens");
            } else {
                assertTrue(differing > 0, "the compressed blocks of " + n + " tokens did not reach attention");
            }
        }
    }

    @Test
    void commitFeedsEachCompressedLayerExactlyTheCommittedTokens() {
        V4Model m = new V4Model(V4Weights.seeded(cfg(16, 8, 2, 4, 16, 3, 16)));
        RowState r = m.newRow(List.of(1));
        V4Model.Forward f = m.forward(List.of(r), new int[][] {{1, 2, 3, 4, 5, 6, 7, 8}}, null);
        m.commit(List.of(r), f, new int[] {5}, new int[] {5});
        assertNull(r.compressors[0]);
        assertNotNull(r.compressors[2]);
        assertEquals(1, r.compressors[2].tc()); // 5 tokens at ratio 4: one block
        RowState s = m.newRow(List.of(1));
        V4Model.Forward g = m.forward(List.of(s), new int[][] {{1, 2, 3, 4, 5, 6, 7, 8}}, null);
        m.commit(List.of(s), g, new int[] {8}, new int[] {8});
        assertEquals(2, s.compressors[2].tc());
        assertEquals(8, s.cached());
    }

    // ---- AttentionArm ----

    @Test
    void graphDecodeServesOnlyUniformSingleQueryStepsOfCompressedLayers() {
        Dsv4Config csa = Dsv4Config.of(CompressRatio.CSA, 4, 0);
        Dsv4Config hca = Dsv4Config.of(CompressRatio.HCA, 4, 0);
        Dsv4Config standard = Dsv4Config.of(CompressRatio.STANDARD, 4, 0);
        assertSame(AttentionArm.GRAPH_DECODE, AttentionArm.GRAPH_DECODE.forCall(1, csa));
        assertSame(AttentionArm.GRAPH_DECODE, AttentionArm.GRAPH_DECODE.forCall(1, hca));
        assertSame(AttentionArm.DENSE, AttentionArm.GRAPH_DECODE.forCall(2, csa));
        assertSame(AttentionArm.DENSE, AttentionArm.GRAPH_DECODE.forCall(1, standard));
        assertSame(AttentionArm.DENSE, AttentionArm.GRAPH_DECODE.forCall(1, csa.withRowQ0(3, 5)));
        for (AttentionArm arm : new AttentionArm[] {AttentionArm.PAGED, AttentionArm.DUMMY, AttentionArm.DENSE}) {
            assertSame(arm, arm.forCall(1, csa));
            assertSame(arm, arm.forCall(2, standard));
        }
    }

    @Test
    void callRefusesABatchOfRequests() {
        Tensor k = Tensor.zeros(DType.F32, Device.CPU, 2, 1, 3, 4);
        Tensor q = Tensor.zeros(DType.F32, Device.CPU, 2, 1, 3, 4);
        refused("k.shape[0] = 2: must be 1: the arms are traced for one request",
                () -> AttentionArm.DENSE.call(q, k, null, Tensor.zeros(DType.F32, Device.CPU, 1),
                        Dsv4Config.of(CompressRatio.STANDARD, 4, 0), false));
    }

    static Tensor seeded(java.util.SplittableRandom rnd, int... shape) {
        int n = 1;
        for (int d : shape) {
            n *= d;
        }
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        return Tensor.of(x, DType.F32, Device.CPU, shape);
    }

    @Test
    void graphDecodeAdmitsOnlyTheBlocksOfItsOwnPosition() {
        // t = 3 cached keys at CSA (ratio 4): the query sits at position 2 and admits floor(3 / 4) = 0 of the 2
        // blocks passed, exactly like the dense arm's union mask; position 2 + 2 would admit one.
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(61);
        Tensor q = seeded(rnd, 1, 2, 1, 4);
        Tensor k = seeded(rnd, 1, 1, 3, 4);
        Tensor blocks = seeded(rnd, 1, 1, 2, 4);
        Tensor sinks = seeded(rnd, 2);
        Dsv4Config cfg = Dsv4Config.of(CompressRatio.CSA, 8, 0);
        float[] dense = AttentionArm.DENSE.call(q, k, blocks, sinks, cfg, false).toFloatArray();
        float[] graph = AttentionArm.GRAPH_DECODE.call(q, k, blocks, sinks, cfg, false).toFloatArray();
        assertArrayEquals(dense, graph);
    }
}
