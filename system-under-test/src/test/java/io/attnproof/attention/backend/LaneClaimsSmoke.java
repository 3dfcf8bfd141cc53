package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;

/** A small fused call whose output must be finite and non-zero: the lane still works. */
final class LaneClaimsSmoke {
    private LaneClaimsSmoke() {
    }

    static void fusedRuns(Backend lane) {
        float[] q = NativeFaultsTest.ramp(2 * 9 * 64);
        float[] k = NativeFaultsTest.ramp(20 * 64);
        Tensor out = lane.flashAttnSinks(Tensor.of(q, DType.F32, lane.device(), 1, 2, 9, 64),
                Tensor.of(k, DType.F32, lane.device(), 1, 1, 20, 64), Tensor.of(k, DType.F32, lane.device(), 1, 1, 20,
                        64), Tensor.of(new float[] {0.5f, -0.5f}, DType.F32, lane.device(), 2), null, 0);
        boolean nonZero = false;
        for (float x : out.toFloatArray()) {
            assertTrue(Float.isFinite(x), "finite output on " + lane.name());
            nonZero |= x != 0f;
        }
        assertTrue(nonZero, "non-zero output on " + lane.name());
    }
}
