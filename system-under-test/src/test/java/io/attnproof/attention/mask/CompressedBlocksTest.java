package io.attnproof.attention.mask;

import io.attnproof.attention.RowDelta;
import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.UnionGeometry;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.AdmitRules;
import io.attnproof.oracles.DenseMasks;
import io.attnproof.oracles.Precision;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** U2: compressed block b is admitted iff b < floor((p+1)/R); ratio-0 layers have no compressed columns. */
@Claim("U2")
class CompressedBlocksTest {
    static final int W = 128;

    @ParameterizedTest(name = "R = {0}, t_k = {1}")
    @CsvSource({"4,127", "4,128", "4,129", "4,256", "4,513", "128,255", "128,256", "128,513"})
    void compressedHalfEqualsTheOracle(int ratio, int tk, Evidence ev) {
        int tq = Math.min(tk, 3 * ratio + 2);
        int tc = tk / ratio;
        UnionGeometry g = UnionGeometry.of(tq, tk, tc, W, 0);
        UnionMask mask = new UnionMask(g.q0(), tq, g.base(), g.keep(), W, tc, ratio);
        Tensor dense = mask.materialize(DType.F32, Device.CPU);
        double[][] oracle = DenseMasks.union(g.q0(), tq, g.base(), g.keep(), W, tc, ratio);
        long differing = 0;
        long offByOne = 0;
        long minThreshold = Long.MAX_VALUE;
        long maxThreshold = Long.MIN_VALUE;
        for (int r = 0; r < tq; r++) {
            long p = g.q0() + r;
            minThreshold = Math.min(minThreshold, AdmitRules.compressedThreshold(p, ratio));
            maxThreshold = Math.max(maxThreshold, AdmitRules.compressedThreshold(p, ratio));
            for (int b = 0; b < tc; b++) {
                int c = g.keep() + b;
                boolean inDense = dense.flat(r * g.nKeys() + c) == 0f;
                if (inDense != mask.admits(r, c) || inDense != (oracle[r][c] == 0.0)) {
                    differing++;
                }
                // Control: the off-by-one threshold floor(p / R) (the query's own token not counted).
                if (inDense != (b < p / ratio)) {
                    offByOne++;
                }
            }
        }
        ev.degeneracy("thresholds_differ_across_rows", minThreshold < maxThreshold || tq == 1,
                "thresholds " + minThreshold + ".." + maxThreshold);
        ev.degeneracy("some_threshold_below_tc", minThreshold < tc || tc == 0,
                "min threshold " + minThreshold + " vs t_c " + tc);
        ev.checkBitIdentical("cells_differing_from_oracle", differing);
        ev.controlAtLeast("threshold_floor_p_over_R_cells", offByOne, 1);
    }

    @Test
    void boundaryPositionsAreExact(Evidence ev) {
        long wrong = 0;
        for (int ratio : new int[] {4, 128}) {
            for (int b = 1; b <= 4; b++) {
                long last = (long) b * ratio - 1; // the token that completes block b-1
                UnionMask before = new UnionMask(last - 1, 1, 0, 1, 1, b, ratio);
                UnionMask at = new UnionMask(last, 1, 0, 1, 1, b, ratio);
                wrong += before.admits(0, 1 + b - 1) ? 1 : 0;
                wrong += at.admits(0, 1 + b - 1) ? 0 : 1;
            }
        }
        ev.checkBitIdentical("boundary_cells_wrong", wrong);
    }

    /** Output level: editing block b0 moves exactly the rows whose threshold exceeds b0. */
    @Test
    void editingABlockMovesExactlyTheRowsThatAdmitIt(Evidence ev) {
        long seed = 21;
        ev.seed(seed);
        int tk = 40;
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, tk, tk, tk / 4, 8, W, CompressRatio.CSA, 0, Precision.F32);
        int b0 = 5;
        boolean[][][] moved = RowDelta.moved(spec, seed, in -> Arrays.fill(in.compressed()[0][b0], 3.0));
        long wrong = 0;
        long offByOne = 0;
        for (int r = 0; r < tk; r++) {
            wrong += moved[0][1][r] != AdmitRules.compressedAdmits(r, b0, 4) ? 1 : 0;
            offByOne += moved[0][1][r] != (b0 < r / 4) ? 1 : 0;
        }
        ev.checkBitIdentical("rows_moved_against_rule", wrong);
        ev.controlAtLeast("threshold_floor_p_over_R_rows", offByOne, 1);
    }

    /** A ratio-0 layer handed compressed columns ignores them: bit-identical to passing none. */
    @Test
    void ratioZeroLayersHaveNoCompressedColumns(Evidence ev) {
        long seed = 22;
        ev.seed(seed);
        int tk = 24;
        UnionRun.Spec spec = new UnionRun.Spec(2, 2, 4, tk, 6, 8, 8, CompressRatio.STANDARD, 0, Precision.F32);
        UnionInputs in = spec.inputs(seed);
        Tensor q = Tensors.of4(in.q(), DType.F32);
        Tensor k = Tensors.kv(in.k(), DType.F32);
        Tensor compressed = Tensors.kv(in.compressed(), DType.F32);
        Tensor sinks = Tensors.sinks(in.sinks());
        Tensor with = Dsv4Attention.attention(q, k, k, compressed, null, sinks, spec.config());
        Tensor without = Dsv4Attention.attention(q, k, k, null, null, sinks, spec.config());
        ev.checkBitIdentical("bits_with_vs_without_compressed", Diff.bitsDiffering(with.toFloatArray(),
                without.toFloatArray()));
        // Control: the same compressed columns on a CSA layer do change the output.
        Tensor csa = Dsv4Attention.attention(q, k, k, compressed, null, sinks,
                io.attnproof.attention.dsv4.Dsv4Config.of(CompressRatio.CSA, 8, 0));
        ev.controlGap("csa_layer_uses_the_blocks", Diff.of(Tensors.toArray4(csa), Tensors.toArray4(without)).maxAbs(),
                1e-2);
    }
}
