package io.attnproof.attention.dsv4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every public entry point refuses bad input with the parameter, the value and the rule in the message. */
class Dsv4BadInputTest {
    static final Dsv4Config CSA = Dsv4Config.of(CompressRatio.CSA, 8, 0);

    static Tensor t(int... shape) {
        return Tensor.zeros(DType.F32, Device.CPU, shape);
    }

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    static Tensor call(Tensor q, Tensor k, Tensor v, Tensor c, Tensor sinks, Dsv4Config cfg) {
        return Dsv4Attention.attention(q, k, v, c, null, sinks, cfg);
    }

    @Test
    void wrongRanksAndMismatchedDims() {
        Tensor k = t(1, 1, 10, 4);
        Tensor s = t(2);
        refused("q.rank = 3: must be 4 [B, H, t_q, D]", () -> call(t(2, 3, 4), k, k, null, s, CSA));
        refused("k.rank = 3: must be 4 [B, 1, t_k, D]", () -> call(t(1, 2, 3, 4), t(1, 10, 4), k, null, s, CSA));
        refused("k.shape = [1, 2, 10, 4]: must be [1, 1, t_k, 4] (one shared K/V head, q's batch and head dim)",
                () -> call(t(1, 2, 3, 4), t(1, 2, 10, 4), t(1, 2, 10, 4), null, s, CSA));
        refused("k.shape = [1, 1, 10, 5]: must be [1, 1, t_k, 4] (one shared K/V head, q's batch and head dim)",
                () -> call(t(1, 2, 3, 4), t(1, 1, 10, 5), t(1, 1, 10, 5), null, s, CSA));
        refused("k.shape = [2, 1, 10, 4]: must be [1, 1, t_k, 4] (one shared K/V head, q's batch and head dim)",
                () -> call(t(1, 2, 3, 4), t(2, 1, 10, 4), t(2, 1, 10, 4), null, s, CSA));
        refused("v.shape = [1, 1, 9, 4]: must equal k.shape [1, 1, 10, 4]",
                () -> call(t(1, 2, 3, 4), k, t(1, 1, 9, 4), null, s, CSA));
        refused("compressed_kv.shape = [1, 1, 2, 3]: must be [1, 1, t_c, 4]",
                () -> call(t(1, 2, 3, 4), k, k, t(1, 1, 2, 3), s, CSA));
        refused("sinks.shape = [3]: must be [2], one logit per query head",
                () -> call(t(1, 2, 3, 4), k, k, null, t(3), CSA));
        Tensor f16 = Tensor.zeros(DType.F16, Device.CPU, 1, 1, 10, 4);
        refused("k/v = " + f16 + ": must share q's dtype F32 and device cpu",
                () -> call(t(1, 2, 3, 4), f16, f16, null, s, CSA));
    }

    @Test
    void positionsOutOfRange() {
        Tensor s = t(2);
        refused("t_q = 11: must be <= t_k_full = rawPrefix + t_k = 10",
                () -> call(t(1, 2, 11, 4), t(1, 1, 10, 4), t(1, 1, 10, 4), null, s, CSA));
        // keep = min(3 + 8 - 1, 12) = 10 keys from base 2, but the passed K starts at rawPrefix 5.
        refused("base = 2: must be >= rawPrefix = 5 (the keep span [base, t_k_full) must lie inside the passed keys;"
                + " t_q = 3, W = 8, t_k_full = 12)",
                () -> call(t(1, 2, 3, 4), t(1, 1, 7, 4), t(1, 1, 7, 4), null, s, Dsv4Config.of(CompressRatio.CSA, 8, 5)));
    }

    @Test
    void ratioZeroForcesCompressedColumnsAway() {
        Tensor q = t(1, 2, 3, 4);
        Tensor k = t(1, 1, 10, 4);
        Tensor out = call(q, k, k, t(1, 1, 2, 4), t(2), Dsv4Config.of(CompressRatio.STANDARD, 8, 0));
        assertEquals(4, out.rank(), "a ratio-0 layer with compressed columns runs (forced to none), no error");
    }

    @Test
    void graphDecodeOnRatioZeroAndBadPositions() {
        refused("compressRatio = STANDARD: must be CSA or HCA with graphPositions: graph decode builds a compressed"
                + " half, which ratio 0 lacks", () -> Dsv4Config.of(CompressRatio.STANDARD, 8, 0).withGraphPositions(3));
        refused("graphPositions = [-1]: must hold positions >= 0", () -> CSA.withGraphPositions(-1));
        Tensor k = t(2, 1, 10, 4);
        refused("graphPositions.length = 1: must equal the batch 2",
                () -> call(t(2, 2, 1, 4), k, k, t(2, 1, 2, 4), t(2), CSA.withGraphPositions(9)));
    }

    @Test
    void nanAndInfiniteSinks() {
        Tensor q = t(1, 2, 3, 4);
        Tensor k = t(1, 1, 10, 4);
        for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY}) {
            Tensor s = Tensor.of(new float[] {0f, bad}, DType.F32, Device.CPU, 2);
            refused("sinks[1] = " + bad + ": must be finite (or -inf for no sink)", () -> call(q, k, k, null, s, CSA));
        }
        Tensor minusInf = Tensor.of(new float[] {Float.NEGATIVE_INFINITY, 0f}, DType.F32, Device.CPU, 2);
        refused("sinks[0] = -Infinity: must be finite in dsv4_attention (pass null sinks for a layer without a sink)",
                () -> call(q, k, k, null, minusInf, CSA));
    }

    @Test
    void negativeSizes() {
        refused("shape = [1, -2]: must have no negative sizes", () -> t(1, -2));
        refused("slidingWindow = 0: must be >= 1", () -> Dsv4Config.of(CompressRatio.CSA, 0, 0));
        refused("rawPrefix = -1: must be >= 0", () -> Dsv4Config.of(CompressRatio.CSA, 8, -1));
        refused("t_k = -1: must be >= 0", () -> UnionGeometry.of(1, -1, 0, 8, 0));
        refused("t_q = -3: must be >= 0", () -> UnionGeometry.of(-3, 4, 0, 8, 0));
        refused("t_c = -2: must be >= 0", () -> UnionGeometry.of(1, 4, -2, 8, 0));
    }

    @Test
    void nothingIsWrittenToTheInputs() {
        Tensor q = Tensor.of(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, DType.F32, Device.CPU, 1, 2, 1, 4);
        Tensor k = Tensor.of(new float[] {1, 0, 0, 1, 0, 1, 1, 0}, DType.F32, Device.CPU, 1, 1, 2, 4);
        Supplier<float[]> snapshot = () -> concat(q.toFloatArray(), k.toFloatArray());
        float[] before = snapshot.get();
        call(q, k, k, null, t(2), CSA);
        assertEquals(java.util.Arrays.toString(before), java.util.Arrays.toString(snapshot.get()));
    }

    private static float[] concat(float[] a, float[] b) {
        float[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
