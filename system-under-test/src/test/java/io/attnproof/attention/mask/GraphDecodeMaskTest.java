package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.oracles.DenseMasks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** U7: the graph-decode compressed mask equals the uniform rule at each row's own position. */
@Claim("U7")
class GraphDecodeMaskTest {

    @ParameterizedTest(name = "R = {0}")
    @ValueSource(ints = {4, 128})
    void compressedHalfIsTheUniformRuleAtEachRowsPosition(int ratio, Evidence ev) {
        long[] positions = ratio == 4 ? new long[] {2, 3, 34, 35, 63} : new long[] {126, 127, 255, 300, 511};
        int tc = (int) (positions[positions.length - 1] + 1) / ratio;
        int keep = 16;
        long q0 = 511;
        UnionMask raw = new UnionMask(q0, 1, q0 + 1 - keep, keep, 128, tc, ratio);
        Tensor graph = new GraphDecodeMask(raw, positions).materialize(DType.F32, Device.CPU);
        double[][] oracle = DenseMasks.compressed(positions, tc, ratio);
        long differing = 0;
        long batchPositionGap = 0;
        long distinctThresholds = java.util.Arrays.stream(positions).map(p -> (p + 1) / ratio).distinct().count();
        ev.degeneracy("distinct_thresholds_across_rows", distinctThresholds, io.attnproof.fixtures.evidence.Comparison.GE,
                2, "thresholds floor((p + 1) / R) over " + java.util.Arrays.toString(positions));
        // The batch position admits |T(q0) - T(p_b)| blocks more or fewer on row b (T capped at t_c).
        long batchPositionMin = 0;
        for (long p : positions) {
            batchPositionMin += Math.abs(Math.min(tc, io.attnproof.oracles.AdmitRules.compressedThreshold(q0, ratio))
                    - Math.min(tc, io.attnproof.oracles.AdmitRules.compressedThreshold(p, ratio)));
        }
        Tensor uniformAtBatch = raw.materialize(DType.F32, Device.CPU);
        int n = keep + tc;
        for (int b = 0; b < positions.length; b++) {
            UnionMask uniformAtRow = new UnionMask(positions[b], 1, 0, 0, 1, tc, ratio);
            for (int c = 0; c < n; c++) {
                float g = graph.flat(b * n + c);
                if (c < keep) {
                    differing += g == uniformAtBatch.flat(c) ? 0 : 1;
                    continue;
                }
                boolean admitted = g == 0f;
                differing += admitted == (oracle[b][c - keep] == 0.0) ? 0 : 1;
                differing += admitted == uniformAtRow.admits(0, c - keep) ? 0 : 1;
                batchPositionGap += admitted == (uniformAtBatch.flat(c) == 0f) ? 0 : 1;
            }
        }
        ev.checkBitIdentical("cells_differing_from_rule", differing);
        ev.controlAtLeast("batch_position_instead_of_row_position_cells", batchPositionGap, Math.max(1, batchPositionMin));
    }

    @Test
    void equalPositionsGiveTheUniformMaskBitForBit(Evidence ev) {
        UnionMask raw = new UnionMask(40, 1, 33, 8, 8, 10, 4);
        Tensor graph = new GraphDecodeMask(raw, new long[] {40, 40}).materialize(DType.F32, Device.CPU);
        Tensor uniform = raw.materialize(DType.F32, Device.CPU);
        long differing = 0;
        for (int b = 0; b < 2; b++) {
            for (int c = 0; c < raw.nKeys(); c++) {
                differing += Float.floatToRawIntBits(graph.flat(b * raw.nKeys() + c))
                        == Float.floatToRawIntBits(uniform.flat(c)) ? 0 : 1;
            }
        }
        ev.checkBitIdentical("bits_graph_vs_uniform", differing);
    }

    @Test
    void ratioZeroIsRefusedAndNoBlocksGiveAnEmptyHalf() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GraphDecodeMask(new UnionMask(9, 1, 2, 8, 8, 0, 0), new long[] {9}));
        assertTrue(e.getMessage().startsWith("compressRatio = 0: must be CSA(4) or HCA(128)"), e.getMessage());
        IllegalArgumentException cfg = assertThrows(IllegalArgumentException.class,
                () -> Dsv4Config.of(CompressRatio.STANDARD, 8, 0).withGraphPositions(9));
        assertTrue(cfg.getMessage().startsWith("compressRatio = STANDARD: must be CSA or HCA"), cfg.getMessage());
        Tensor empty = new GraphDecodeMask(new UnionMask(9, 1, 2, 8, 8, 0, 4), new long[] {9, 9})
                .materialize(DType.F32, Device.CPU);
        assertArrayEquals(new int[] {2, 1, 1, 8}, empty.shape());
        for (int i = 0; i < empty.numel(); i++) {
            assertEquals(0f, empty.flat(i), "t_c == 0: the raw half only, all admitted at decode");
        }
    }
}
