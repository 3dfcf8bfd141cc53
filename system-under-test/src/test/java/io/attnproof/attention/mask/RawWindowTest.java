package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.attention.RowDelta;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.UnionGeometry;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.oracles.AdmitRules;
import io.attnproof.oracles.DenseMasks;
import io.attnproof.oracles.Precision;
import java.util.Arrays;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** U1: the raw window admits key j for query p iff p - W < j <= p, exactly at the boundaries. */
@Claim("U1")
class RawWindowTest {
    static final int W = 128;

    /** t_k in {W-1, W, W+1, 2W, 4W+1}; prefill (t_q = t_k) and decode (t_q = 1). */
    @ParameterizedTest(name = "t_k = {0}")
    @ValueSource(ints = {W - 1, W, W + 1, 2 * W, 4 * W + 1})
    void maskEqualsTheOracleAtTheBoundaries(int tk, Evidence ev) {
        long differing = 0;
        long offByOneGap = 0;
        boolean someRowFull = false;
        boolean someRowShort = false;
        for (int tq : new int[] {tk, 1}) {
            UnionGeometry g = UnionGeometry.of(tq, tk, 0, W, 0);
            UnionMask mask = new UnionMask(g.q0(), tq, g.base(), g.keep(), W, 0, 0);
            double[][] dense = denseOf(mask.materialize(DType.F32, Device.CPU), tq, g.keep());
            double[][] oracle = DenseMasks.union(g.q0(), tq, g.base(), g.keep(), W, 0, 0);
            double[][] wide = DenseMasks.union(g.q0(), tq, g.base(), g.keep(), W + 1, 0, 0);
            for (int r = 0; r < tq; r++) {
                long p = g.q0() + r;
                int admitted = 0;
                for (int c = 0; c < g.keep(); c++) {
                    boolean predicate = mask.admits(r, c);
                    boolean inDense = dense[r][c] == 0.0;
                    if (predicate != inDense || inDense != (oracle[r][c] == 0.0)) {
                        differing++;
                    }
                    if (inDense != (wide[r][c] == 0.0)) {
                        offByOneGap++;
                    }
                    admitted += inDense ? 1 : 0;
                }
                // Exactly W keys once p >= W-1, the diagonal always included.
                assertEquals(Math.min(p + 1, W), admitted, "keys admitted to p = " + p);
                assertEquals(0.0, dense[r][(int) (p - g.base())], "diagonal of p = " + p);
                someRowFull |= admitted == W;
                someRowShort |= admitted < W;
            }
        }
        ev.degeneracy("rows_with_full_and_short_windows", someRowFull == (tk >= W) && someRowShort,
                "t_k = " + tk + ": full " + someRowFull + ", short " + someRowShort);
        ev.checkBitIdentical("cells_differing_from_oracle", differing);
        if (tk > W) {
            // The upstream make_swa_mask width (W+1 keys) must disagree wherever a row has W keys.
            ev.controlAtLeast("window_plus_one_cells", offByOneGap, 1);
        }
    }

    /**
     * Output level: editing raw key j0 moves exactly the rows that admit it, bit for bit; j0 = 200 sits
     * inside the window of rows 200..327 and outside that of rows 199 and 328, the two boundaries.
     */
    @Test
    void editingAKeyMovesExactlyTheRowsThatAdmitIt(Evidence ev) {
        long seed = 11;
        ev.seed(seed);
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 2 * W + 80, 2 * W + 80, 0, 8, W, CompressRatio.STANDARD, 0,
                Precision.F32);
        int j0 = 200;
        boolean[][][] moved = RowDelta.moved(spec, seed, in -> Arrays.fill(in.k()[0][j0], 3.0));
        long q0 = 0;
        long wrong = 0;
        for (int h = 0; h < 2; h++) {
            for (int r = 0; r < spec.tq(); r++) {
                if (moved[0][h][r] != AdmitRules.rawAdmits(q0 + r, j0, W)) {
                    wrong++;
                }
            }
        }
        ev.degeneracy("boundary_rows_present", spec.tq() > j0 + W, "rows must reach past j0 + W = " + (j0 + W));
        ev.checkBitIdentical("rows_moved_against_rule", wrong);
        long wideWrong = 0;
        for (int r = 0; r < spec.tq(); r++) {
            wideWrong += moved[0][0][r] != AdmitRules.rawAdmits(q0 + r, j0, W + 1) ? 1 : 0;
        }
        ev.controlAtLeast("window_plus_one_rows", wideWrong, 1);
    }

    /** SYSTEM.md §4.10: the window reaches the generic SDPA backend on STANDARD layers only. */
    @Test
    void sdpaGetsTheWindowOnStandardLayersOnly(Evidence ev) {
        long wrong = 0;
        wrong += Dsv4Attention.sdpaSlidingWindow(CompressRatio.STANDARD, W).equals(OptionalInt.of(W)) ? 0 : 1;
        wrong += Dsv4Attention.sdpaSlidingWindow(CompressRatio.CSA, W).isEmpty() ? 0 : 1;
        wrong += Dsv4Attention.sdpaSlidingWindow(CompressRatio.HCA, W).isEmpty() ? 0 : 1;
        ev.checkBitIdentical("sdpa_window_choices_wrong", wrong);
    }

    static double[][] denseOf(Tensor mask, int tq, int cols) {
        double[][] out = new double[tq][cols];
        int n = mask.dim(3);
        for (int r = 0; r < tq; r++) {
            for (int c = 0; c < cols; c++) {
                out[r][c] = mask.flat(r * n + c);
            }
        }
        return out;
    }
}
