package io.attnproof.attention.mask;

import io.attnproof.attention.RowDelta;
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
        long offByOneMin = 0;
        long geometryWrong = 0;
        long fullRows = 0;
        long shortRows = 0;
        for (int tq : new int[] {tk, 1}) {
            // The judge's geometry comes from the fixture's formulas (docs/system.md §4.1-2), never from the system.
            UnionCase fx = new UnionCase(tq, tk, W, 0, 0, 0, Precision.F32, 1, 1, 1);
            long q0 = fx.q0();
            long base = fx.base();
            int keep = (int) fx.keep();
            UnionGeometry g = UnionGeometry.of(tq, tk, 0, W, 0);
            geometryWrong += (g.q0() == q0 ? 0 : 1) + (g.base() == base ? 0 : 1) + (g.keep() == keep ? 0 : 1);
            UnionMask mask = new UnionMask(g.q0(), tq, g.base(), g.keep(), W, 0, 0);
            double[][] dense = denseOf(mask.materialize(DType.F32, Device.CPU), tq, g.keep());
            double[][] oracle = DenseMasks.union(q0, tq, base, keep, W, 0, 0);
            double[][] wide = DenseMasks.union(q0, tq, base, keep, W + 1, 0, 0);
            for (int r = 0; r < tq; r++) {
                long p = q0 + r;
                int admitted = 0;
                for (int c = 0; c < keep; c++) {
                    boolean inDense = c < g.keep() && dense[r][c] == 0.0;
                    boolean predicate = c < g.keep() && mask.admits(r, c);
                    if (predicate != inDense || inDense != (oracle[r][c] == 0.0)) {
                        differing++;
                    }
                    if (inDense != (wide[r][c] == 0.0)) {
                        offByOneGap++;
                    }
                    admitted += oracle[r][c] == 0.0 ? 1 : 0;
                }
                // W + 1 keys admit key p - W too wherever it lies inside the keep span: one cell per such row.
                offByOneMin += p - W >= base ? 1 : 0;
                fullRows += admitted == W ? 1 : 0;
                shortRows += admitted < W ? 1 : 0;
            }
        }
        // Measured on the oracle's rows: rows with W keys (from t_k = W on) and rows with fewer (the first W - 1).
        ev.degeneracy("rows_with_a_short_window", shortRows, Comparison.GE, 1, "rows before p = W - 1");
        if (tk >= W) {
            ev.degeneracy("rows_with_a_full_window", fullRows, Comparison.GE, 1, "rows from p = W - 1 on");
        }
        ev.checkBitIdentical("geometry_fields_off_the_formulas", geometryWrong);
        ev.checkBitIdentical("cells_differing_from_oracle", differing);
        if (offByOneMin > 0) {
            // The upstream make_swa_mask width (W+1 keys) must disagree on every row whose key p - W is retained.
            ev.controlAtLeast("window_plus_one_cells", offByOneGap, offByOneMin);
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
        // Measured on the output: unmoved rows on both sides of the moved run (both window boundaries exercised).
        int firstMoved = -1;
        int lastMoved = -1;
        for (int r = 0; r < spec.tq(); r++) {
            if (moved[0][0][r]) {
                firstMoved = firstMoved < 0 ? r : firstMoved;
                lastMoved = r;
            }
        }
        ev.degeneracy("unmoved_rows_before_the_moved_run", firstMoved, Comparison.GT, 0, "first moved row");
        ev.degeneracy("unmoved_rows_after_the_moved_run", spec.tq() - 1 - lastMoved, Comparison.GT, 0,
                "last moved row " + lastMoved + " of " + spec.tq());
        ev.checkBitIdentical("rows_moved_against_rule", wrong);
        long wideWrong = 0;
        long wideMin = 0;
        for (int r = 0; r < spec.tq(); r++) {
            wideWrong += moved[0][0][r] != AdmitRules.rawAdmits(q0 + r, j0, W + 1) ? 1 : 0;
            wideMin += AdmitRules.rawAdmits(q0 + r, j0, W + 1) != AdmitRules.rawAdmits(q0 + r, j0, W) ? 1 : 0;
        }
        ev.controlAtLeast("window_plus_one_rows", wideWrong, wideMin);
    }

    /** docs/system.md §4.10: the window reaches the generic SDPA backend on STANDARD layers only. */
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
