package io.attnproof.attention.compressor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The compressor's accessors, refusals (exact messages, edges accepted) and the pool's shift-invariant softmax. */
class CompressorContractTest {
    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    static CompressorWeights flat128() {
        float[][] ape = new float[128][2];
        return new CompressorWeights(128, 2, ape, new float[] {1f, 1f});
    }

    @Test
    void theCompressorHandsBackItsWeightsAndHeadDim() {
        CompressorWeights w = CompressorWeights.seeded(4, 6, 7L);
        Compressor c = Compressor.of(w);
        assertSame(w, c.weights());
        assertEquals(6, c.headDim());
        assertEquals("CompressorWeights[ratio=4, headDim=6]", w.toString());
    }

    @Test
    void weightsAreValuesOverTheirArrays() {
        CompressorWeights a = CompressorWeights.seeded(4, 6, 7L);
        CompressorWeights b = CompressorWeights.seeded(4, 6, 7L);
        assertEquals(a, b);
        assertEquals(b, a);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, CompressorWeights.seeded(4, 6, 8L));
    }

    @Test
    void weightsRefuseAnotherRatioOrAnOddHeadDimBeforeAnythingElse() {
        refused("ratio = 5: must be 4 (CSA, overlapping) or 128 (HCA, disjoint); ratio-0 layers have no compressor",
                () -> new CompressorWeights(5, 2, new float[5][2], new float[2]));
        refused("headDim = 3: must be even and >= 2", () -> new CompressorWeights(4, 3, new float[8][3], new float[3]));
        refused("headDim = -2: must be even and >= 2", () -> CompressorWeights.seeded(4, -2, 1L));
    }

    @Test
    void compressedKvRefusesAZeroHeadDimAndAcceptsOne() {
        refused("headDim = 0: must be >= 1", () -> Compressor.compressedKv(List.of(), 0));
        assertArrayEquals(new int[] {1, 1, 1, 1}, Compressor.compressedKv(List.of(new float[] {2f}), 1).shape());
    }

    @Test
    void aBatchGivesOneBlockListPerRow() {
        Compressor c = Compressor.of(flat128());
        float[][] kv = new float[128][2];
        List<List<float[]>> out = c.prefillBatch(List.of(kv, new float[3][2]), List.of(kv, new float[3][2]));
        assertEquals(2, out.size());
        assertEquals(1, out.get(0).size());
        assertEquals(0, out.get(1).size());
    }

    @Test
    void equalGateLogitsPoolTheSameBitsAtAnyLevel() {
        // Every gate logit equal: the max-shifted softmax gives each token e^0 = 1, so score 0 and score 60 pool
        // the same bits (an unshifted e^60 * e^60 would overflow f32).
        Compressor c = Compressor.of(flat128());
        float[][] kv = new float[128][];
        float[][] zero = new float[128][];
        float[][] sixty = new float[128][];
        for (int t = 0; t < 128; t++) {
            kv[t] = new float[] {1f, 3f};
            zero[t] = new float[] {0f, 0f};
            sixty[t] = new float[] {60f, 60f};
        }
        float[] a = c.prefill(kv, zero).get(0);
        float[] b = c.prefill(kv, sixty).get(0);
        assertTrue(Float.isFinite(a[0]) && Float.isFinite(a[1]), Arrays.toString(a));
        assertArrayEquals(a, b);
    }
}
