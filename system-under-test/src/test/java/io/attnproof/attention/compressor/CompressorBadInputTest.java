package io.attnproof.attention.compressor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every public entry point refuses bad input with the parameter, the value and the rule; a refusal changes nothing. */
class CompressorBadInputTest {
    static final CompressorWeights CSA = CompressorWeights.seeded(4, 4, 11L);
    static final CompressorWeights HCA = CompressorWeights.seeded(128, 4, 12L);

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    @Test
    void weightsRefuseBadGeometryAndShapes() {
        String ratioRule = ": must be 4 (CSA, overlapping) or 128 (HCA, disjoint); ratio-0 layers have no compressor";
        refused("ratio = 0" + ratioRule, () -> CompressorWeights.seeded(0, 4, 1L));
        refused("ratio = 8" + ratioRule, () -> CompressorWeights.seeded(8, 4, 1L));
        refused("headDim = 5: must be even and >= 2", () -> CompressorWeights.seeded(4, 5, 1L));
        refused("headDim = 0: must be even and >= 2", () -> CompressorWeights.seeded(128, 0, 1L));
        float[] gamma = new float[4];
        refused("ape.length = 4: must be 8 for ratio 4 (R rows for R = 128, 2R for R = 4)",
                () -> new CompressorWeights(4, 4, new float[4][4], gamma));
        refused("ape.length = 8: must be 128 for ratio 128 (R rows for R = 128, 2R for R = 4)",
                () -> new CompressorWeights(128, 4, new float[8][4], gamma));
        float[][] ape = new float[8][4];
        ape[3] = new float[3];
        refused("ape[3].length = 3: must be 4", () -> new CompressorWeights(4, 4, ape, gamma));
        ape[3] = new float[4];
        ape[6][2] = Float.NaN;
        refused("ape[6][2] = NaN: must be finite", () -> new CompressorWeights(4, 4, ape, gamma));
        ape[6][2] = 0f;
        refused("gamma.length = 2: must be 4", () -> new CompressorWeights(4, 4, ape, new float[2]));
        refused("gamma[1] = Infinity: must be finite",
                () -> new CompressorWeights(4, 4, ape, new float[] {1, Float.POSITIVE_INFINITY, 1, 1}));
        refused("gamma = null: must be present", () -> new CompressorWeights(4, 4, ape, null));
        refused("weights = null: must be present", () -> Compressor.of(null));
    }

    @Test
    void weightsAreSeededAndDeepCopied() {
        assertEquals(CompressorWeights.seeded(4, 4, 11L), CSA);
        assertNotEquals(CompressorWeights.seeded(4, 4, 13L), CSA);
        float[][] ape = CSA.ape();
        ape[0][0] += 1f;
        assertNotEquals(ape[0][0], CSA.ape()[0][0]);
        assertEquals(8, CSA.ape().length);
        assertEquals(128, HCA.ape().length);
        assertEquals(8, CSA.width());
        assertEquals(4, HCA.width());
    }

    @Test
    void tokensAreRefusedByName() {
        Compressor c = Compressor.of(CSA);
        CompressorState s = c.newState();
        refused("kv.length = 4: must be 8", () -> s.push(new float[4], new float[8]));
        float[] nan = new float[8];
        nan[2] = Float.NaN;
        refused("score[2] = NaN: must be finite", () -> s.push(new float[8], nan));
        float[] inf = new float[8];
        inf[7] = Float.NEGATIVE_INFINITY;
        refused("kv[7] = -Infinity: must be finite", () -> s.push(inf, new float[8]));
        refused("kv = null: must be present", () -> s.push(null, new float[8]));
        refused("score.length = 2: must equal kv.length = 3 (one gate per token)",
                () -> s.pushAll(new float[3][8], new float[2][8]));
        float[][] bad = new float[3][8];
        bad[1] = nan;
        refused("kv[1][2] = NaN: must be finite", () -> c.prefill(bad, new float[3][8]));
        refused("score[1][2] = NaN: must be finite", () -> s.pushAll(new float[3][8], bad));
        refused("score.size() = 1: must equal kv.size() = 2",
                () -> c.prefillBatch(List.of(new float[1][8], new float[1][8]), List.<float[][]>of(new float[1][8])));
        refused("kv[1][0].length = 4: must be 8",
                () -> c.prefillBatch(List.of(new float[1][8], new float[1][4]), List.of(new float[1][8], new float[1][8])));
        refused("tHist = -1: must be >= 0", () -> Compressor.tc(-1, 4));
        refused("ratio = 0: must be 4 (CSA, overlapping) or 128 (HCA, disjoint); ratio-0 layers have no compressor",
                () -> Compressor.tc(10, 0));
        refused("blocks[1].length = 3: must be 4", () -> Compressor.compressedKv(List.of(new float[4], new float[3]), 4));
        assertEquals(0, s.seen());
    }

    @Test
    void aRefusedPushLeavesTheStateUnchanged() {
        for (CompressorWeights w : List.of(CSA, HCA)) {
            Compressor c = Compressor.of(w);
            int r = w.ratio();
            Tokens in = Tokens.generate(77L, 0, 3 * r + 1, w.width(), 2.0);
            CompressorState state = c.newState();
            List<float[]> got = new ArrayList<>(state.pushAll(in.slice(0, r + 2).kv(), in.slice(0, r + 2).score()));
            long seen = state.seen();
            int tc = state.tc();
            int pending = state.pending();
            float[] nan = in.kv()[r + 2].clone();
            nan[1] = Float.NaN;
            assertThrows(IllegalArgumentException.class, () -> state.push(nan, in.score()[r + 2]));
            // A chunk whose valid first R tokens would complete a block, with a bad token after them: none is taken.
            Tokens chunk = in.slice(r + 2, 2 * r + 3);
            float[][] badChunk = chunk.score().clone();
            badChunk[r] = nan;
            assertThrows(IllegalArgumentException.class, () -> state.pushAll(chunk.kv(), badChunk));
            assertThrows(IllegalArgumentException.class, () -> state.push(new float[1], new float[1]));
            assertEquals(seen, state.seen());
            assertEquals(tc, state.tc());
            assertEquals(pending, state.pending());
            // The caller's arrays are copied: changing them after a push cannot reach the state.
            float[] kv = in.kv()[r + 2].clone();
            got.addAll(state.push(kv, in.score()[r + 2]));
            kv[0] = 1e6f;
            got.addAll(state.pushAll(in.slice(r + 3, in.length()).kv(), in.slice(r + 3, in.length()).score()));
            assertEquals(0, Tokens.bitsDiffering(got, c.prefill(in.kv(), in.score())), "ratio " + r);
            Tensor t = state.compressedKv();
            assertArrayEquals(new int[] {1, 1, 3, 4}, t.shape());
        }
    }
}
