package io.attnproof.attention.ragged;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.ragged.RaggedCohort;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * R1 (and R9 at t_q = 1): each row of a left-aligned ragged cohort equals that row run alone with its dead prefix
 * absent, on every ratio class; the same cohort fed the batch-wide position disagrees.
 */
public class RaggedCohortTest {
    static final long SEED = 1001;

    /** The R1 cohorts: ratio classes 0, 4 and 128. */
    public static Stream<Arguments> cohorts() {
        return Stream.of(
                Arguments.of(new RaggedCohort(new int[] {37, 50, 10, 44}, 3, 16, 0, 4, 16)),
                Arguments.of(new RaggedCohort(new int[] {37, 50, 10, 44}, 3, 16, 4, 4, 16)),
                Arguments.of(new RaggedCohort(new int[] {300, 140, 390, 10}, 3, 16, 128, 4, 16)));
    }

    static Stream<Arguments> decodeCohorts() {
        return Stream.of(
                Arguments.of(new RaggedCohort(new int[] {33, 50, 6, 41}, 1, 16, 0, 4, 16)),
                Arguments.of(new RaggedCohort(new int[] {33, 50, 6, 41}, 1, 16, 4, 4, 16)),
                Arguments.of(new RaggedCohort(new int[] {300, 140, 390, 9}, 1, 16, 128, 4, 16)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cohorts")
    @Claim("R1")
    void eachRowEqualsItselfAlone(RaggedCohort cohort, Evidence ev) {
        check(cohort, ev);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("decodeCohorts")
    @Claim("R9")
    void aRaggedDecodeNeverAttendsTheDeadPrefix(RaggedCohort cohort, Evidence ev) {
        check(cohort, ev);
    }

    private static void check(RaggedCohort cohort, Evidence ev) {
        check(cohort, ev, Backend.cpu());
    }

    /** The R1/R9 check of {@code cohort} with dsv4_attention's last stage on {@code backend}. */
    public static void check(RaggedCohort cohort, Evidence ev, Backend backend) {
        String label = backend instanceof io.attnproof.attention.backend.Cpu ? "" : "[" + cohort + "]";
        ev.seed(SEED);
        for (RaggedCohort.Condition c : cohort.degeneracy()) {
            ev.degeneracy(c.name() + label, c.holds(), c.detail());
        }
        // NaN canaries in every padded slot: the dead prefix and the blocks a shorter row never produced.
        RaggedCohort.Inputs canaried = cohort.inputs(SEED, Precision.F32, Double.NaN);
        Tensor out = Cohorts.batched(cohort, canaried, cohort.rowQ0(), backend);
        long bits = 0;
        double worstErr = 0;
        double worstLimit = 0;
        double maxLimit = 0;
        Diff worst = null;
        for (int i = 0; i < cohort.batch(); i++) {
            Tensor alone = Cohorts.alone(cohort, canaried, i, backend);
            bits += Diff.bitsDiffering(Cohorts.row(out, i), Tensors.toArray4(alone));
            RaggedCohort.Row row = canaried.rows().get(i);
            UnionProblem p = new UnionProblem(row.q(), row.k(), row.k(), row.compressed(), canaried.sinks(), null,
                    cohort.window(), cohort.ratio(), 0);
            double[][][][] oracle = UnionAttentionOracle.attend(p);
            Diff diff = Diff.of(oracle, Cohorts.row(out, i));
            double naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(p, Precision.F32)).maxAbs();
            double limit = Tolerance.limit(Precision.F32, naive, diff.oracleMaxAbs());
            maxLimit = Math.max(maxLimit, limit);
            if (worst == null || diff.maxAbs() / limit > worstErr / worstLimit) {
                worstErr = diff.maxAbs();
                worstLimit = limit;
                worst = new Diff(diff.maxAbs(), new io.attnproof.fixtures.evidence.Worst(i, diff.worst().h(),
                        diff.worst().r(), diff.worst().c()), diff.oracleMaxAbs());
            }
        }
        ev.checkBitIdentical("bits_row_vs_row_alone" + label, bits);
        ev.check("max_abs_err" + label, worstErr, worstLimit, worst.worst());

        // Negative control: the scalar path (every row at the batch-wide position) over a zero-filled prefix.
        RaggedCohort.Inputs zeros = cohort.inputs(SEED, Precision.F32, 0.0);
        Tensor scalar = Cohorts.batched(cohort, zeros, null, backend);
        double gap = 0;
        for (int i = 0; i < cohort.batch(); i++) {
            gap = Math.max(gap, Diff.of(Tensors.toArray4(Cohorts.alone(cohort, zeros, i, backend)),
                    Cohorts.row(scalar, i)).maxAbs());
        }
        ev.controlGap("batch_wide_position" + label, gap, maxLimit);

        // The subtle controls a real bug looks like, each the fp64 oracle fed one wrong geometry: the dead-prefix
        // kill one column short (lead - 1: the row sees a zero-filled slot) or one too far (lead + 1: it loses its
        // oldest key), the window one short, the row's compressed threshold one block low or high.
        for (int i = 0; i < cohort.batch(); i++) {
            // The geometry form with the right geometry is the row-alone oracle: the controls' construction holds.
            RaggedCohort.Row row = zeros.rows().get(i);
            double formsGap = Diff.of(rowOracle(cohort, zeros, i, (int) cohort.lead(i), 0, cohort.window()),
                    UnionAttentionOracle.attend(new UnionProblem(row.q(), row.k(), row.k(), row.compressed(),
                            zeros.sinks(), null, cohort.window(), cohort.ratio(), 0))).maxAbs();
            org.junit.jupiter.api.Assertions.assertTrue(formsGap <= 1e-12,
                    "row " + i + ": the geometry oracle misses the row-alone oracle by " + formsGap);
        }
        int[][] wrongGeometries = {{1, 0, 0}, {-1, 0, 0}, {0, 0, -1}, {0, -1, 0}, {0, 1, 0}};
        String[] names = {"lead_minus_one", "lead_plus_one", "window_minus_one", "threshold_minus_one_block",
            "threshold_plus_one_block"};
        for (int g = 0; g < names.length; g++) {
            int[] wrong = wrongGeometries[g];
            if (wrong[1] != 0 && cohort.ratio() == 0 || cohort.window() + wrong[2] < 1) {
                continue;   // no compressed columns at ratio 0
            }
            double controlGap = -1;
            for (int i = 0; i < cohort.batch(); i++) {
                int firstCol = (int) cohort.lead(i) - wrong[0];
                if (firstCol < 0 || cohort.width() - firstCol < cohort.tq()) {
                    continue;   // no slot before the row, or no key of its own left to lose
                }
                double[][][][] answer = rowOracle(cohort, zeros, i, firstCol, wrong[1], cohort.window() + wrong[2]);
                controlGap = Math.max(controlGap, Diff.of(answer, Cohorts.row(out, i)).maxAbs());
            }
            if (controlGap >= 0) {
                ev.controlGap(names[g] + label, controlGap, maxLimit);
            }
        }
    }

    /**
     * Row {@code i} of {@code cohort} as the fp64 oracle sees it through a chosen geometry, over the batched buffers
     * (zero-filled dead prefix and padding blocks, as front_pad_single writes them): raw keys from batch column
     * {@code firstCol} on (the row's own {@code lead} when right), compressed block b admitted iff
     * {@code b < floor((rowQ0[i] + r + 1) / R) + thresholdShift} (an explicit caller mask), window {@code window}.
     * Positions are moved on by {@code 2R + 2} so that the oracle's own compressed rule admits every block the mask
     * leaves; the raw window is a difference and does not move.
     */
    static double[][][][] rowOracle(RaggedCohort cohort, RaggedCohort.Inputs zeros, int i, int firstCol,
            int thresholdShift, int window) {
        int ratio = cohort.ratio();
        int shift = 2 * ratio + 2;
        int n = cohort.width() - firstCol;
        double[][][] k = {java.util.Arrays.copyOfRange(zeros.k()[i], firstCol, cohort.width())};
        int tc = cohort.tc();
        double[][][] compressed = tc == 0 ? null : new double[][][] {zeros.compressed()[i]};
        double[][][] mask = null;
        if (tc > 0) {
            mask = new double[1][cohort.tq()][shift + n + tc];
            long rowQ0 = cohort.rowQ0()[i];
            for (int r = 0; r < cohort.tq(); r++) {
                long threshold = Math.max(0, (rowQ0 + r + 1) / ratio + thresholdShift);
                for (int b = (int) Math.min(threshold, tc); b < tc; b++) {
                    mask[0][r][shift + n + b] = Double.NEGATIVE_INFINITY;
                }
            }
        }
        return UnionAttentionOracle.attend(new UnionProblem(new double[][][][] {zeros.q()[i]}, k, k, compressed,
                zeros.sinks(), mask, window, ratio, shift));
    }

    /**
     * R1 at F16 and BF16: each row of the cohort (inputs rounded to the dtype, a CSA layer) equals itself alone bit for
     * bit, and its error against the fp64 oracle holds both tiers: FlashAttention's compatibility bound and the
     * tighter precision contract (logits and probabilities kept in f32).
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = Precision.class, names = {"F16", "BF16"})
    @Claim("R1")
    void eachRowEqualsItselfAloneAt16Bit(Precision precision, Evidence ev) {
        RaggedCohort cohort = new RaggedCohort(new int[] {37, 50, 10, 44}, 3, 16, 4, 4, 16);
        String label = "[" + precision + "]";
        ev.seed(SEED);
        for (RaggedCohort.Condition c : cohort.degeneracy()) {
            ev.degeneracy(c.name() + label, c.holds(), c.detail());
        }
        io.attnproof.attention.tensor.DType dtype = Tensors.dtype(precision);
        RaggedCohort.Inputs in = cohort.inputs(SEED, precision, Double.NaN);
        Tensor out = Cohorts.batched(cohort, in, cohort.rowQ0(), Backend.cpu(), dtype);
        long bits = 0;
        double worstRatio = -1;
        double worstErr = 0;
        double compat = 0;
        double contract = 0;
        io.attnproof.fixtures.evidence.Worst at = null;
        for (int i = 0; i < cohort.batch(); i++) {
            bits += Diff.bitsDiffering(Cohorts.row(out, i), Tensors.toArray4(Cohorts.alone(cohort, in, i,
                    Backend.cpu(), dtype)));
            RaggedCohort.Row row = in.rows().get(i);
            UnionProblem p = new UnionProblem(row.q(), row.k(), row.k(), row.compressed(), in.sinks(), null,
                    cohort.window(), cohort.ratio(), 0);
            double[][][][] oracle = UnionAttentionOracle.attend(p);
            Diff diff = Diff.of(oracle, Cohorts.row(out, i));
            double naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(p, precision)).maxAbs();
            double limit = Tolerance.limit(precision, naive, diff.oracleMaxAbs());
            double tight = io.attnproof.attention.PrecisionTiers.unionLimit(p, precision, oracle);
            if (diff.maxAbs() / tight > worstRatio) {
                worstRatio = diff.maxAbs() / tight;
                worstErr = diff.maxAbs();
                compat = limit;
                contract = tight;
                at = new io.attnproof.fixtures.evidence.Worst(i, diff.worst().h(), diff.worst().r(), diff.worst().c());
            }
        }
        ev.checkBitIdentical("bits_row_vs_row_alone" + label, bits);
        ev.check("max_abs_err" + label, worstErr, compat, at);
        ev.check("max_abs_err" + label + ":precision_contract", worstErr, contract, at);
        // Negative control: every row at the batch-wide position (zeros in the dead prefix) misses its own answer.
        RaggedCohort.Inputs zeros = cohort.inputs(SEED, precision, 0.0);
        Tensor scalar = Cohorts.batched(cohort, zeros, null, Backend.cpu(), dtype);
        double gap = 0;
        for (int i = 0; i < cohort.batch(); i++) {
            gap = Math.max(gap, Diff.of(Tensors.toArray4(Cohorts.alone(cohort, zeros, i, Backend.cpu(), dtype)),
                    Cohorts.row(scalar, i)).maxAbs());
        }
        ev.controlGap("batch_wide_position" + label, gap, compat);
    }
}
