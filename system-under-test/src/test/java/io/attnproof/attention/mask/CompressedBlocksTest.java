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
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionCase;
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
        // The judge's geometry comes from the fixture's formulas (docs/system.md §4.1-2), never from the system.
        UnionCase fx = new UnionCase(tq, tk, W, ratio, tc, 0, Precision.F32, 1, 1, 1);
        long q0 = fx.q0();
        int keep = (int) fx.keep();
        UnionGeometry g = UnionGeometry.of(tq, tk, tc, W, 0);
        long geometryWrong = (g.q0() == q0 ? 0 : 1) + (g.base() == fx.base() ? 0 : 1) + (g.keep() == keep ? 0 : 1)
                + (g.nKeys() == keep + tc ? 0 : 1);
        UnionMask mask = new UnionMask(g.q0(), tq, g.base(), g.keep(), W, tc, ratio);
        Tensor dense = mask.materialize(DType.F32, Device.CPU);
        double[][] oracle = DenseMasks.union(q0, tq, fx.base(), keep, W, tc, ratio);
        ev.checkBitIdentical("geometry_fields_off_the_formulas", geometryWrong);
        long differing = 0;
        long offByOne = 0;
        long offByOneMin = 0;
        java.util.TreeSet<Long> thresholds = new java.util.TreeSet<>();
        for (int r = 0; r < tq; r++) {
            long p = q0 + r;
            long threshold = 0;
            for (int b = 0; b < tc; b++) {
                int c = keep + b;
                boolean inDense = dense.flat(r * g.nKeys() + c) == 0f;
                boolean admitted = oracle[r][c] == 0.0;
                threshold += admitted ? 1 : 0;
                if (inDense != mask.admits(r, c) || inDense != admitted) {
                    differing++;
                }
                // Control: the off-by-one threshold floor(p / R) (the query's own token not counted).
                if (inDense != (b < p / ratio)) {
                    offByOne++;
                }
            }
            thresholds.add(threshold);
            // floor(p / R) is one block short exactly on the rows that complete a block, while that block exists.
            offByOneMin += (p + 1) % ratio == 0 && (p + 1) / ratio <= tc ? 1 : 0;
        }
        // Measured on the oracle's rows: the admitted-block counts differ across rows, and some row admits fewer than
        // t_c (a row that admits every block cannot show a too-permissive threshold).
        if (tq > 1) {
            ev.degeneracy("distinct_thresholds_across_rows", thresholds.size(), Comparison.GE, 2,
                    "admitted-block counts " + thresholds);
        }
        ev.degeneracy("some_threshold_below_tc", thresholds.first(), Comparison.LE, tc - 1,
                "admitted-block counts " + thresholds + " vs t_c " + tc);
        ev.checkBitIdentical("cells_differing_from_oracle", differing);
        ev.controlAtLeast("threshold_floor_p_over_R_cells", offByOne, Math.max(1, offByOneMin));
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
        long offByOneMin = 0;
        for (int r = 0; r < tk; r++) {
            wrong += moved[0][1][r] != AdmitRules.compressedAdmits(r, b0, 4) ? 1 : 0;
            offByOne += moved[0][1][r] != (b0 < r / 4) ? 1 : 0;
            offByOneMin += AdmitRules.compressedAdmits(r, b0, 4) != (b0 < r / 4) ? 1 : 0;
        }
        ev.checkBitIdentical("rows_moved_against_rule", wrong);
        ev.controlAtLeast("threshold_floor_p_over_R_rows", offByOne, Math.max(1, offByOneMin));
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
        // Bar: the tolerance limit of the CSA output against its oracle (and no less than a 1e-2 signal).
        UnionRun.Spec csaSpec = new UnionRun.Spec(2, 2, 4, tk, 6, 8, 8, CompressRatio.CSA, 0, Precision.F32);
        double limit = UnionRun.of(csaSpec, in, in.sinks(), null, null).limit();
        ev.controlGap("csa_layer_uses_the_blocks", Diff.of(Tensors.toArray4(csa), Tensors.toArray4(without)).maxAbs(),
                Math.max(1e-2, limit));
    }
}
