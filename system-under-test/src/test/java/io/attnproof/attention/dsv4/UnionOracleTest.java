package io.attnproof.attention.dsv4;

import io.attnproof.attention.UnionRun;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.AdmitRules;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * U5: union output matches the fp64 oracle at W = 128, R in {4, 128}, t_k in {127, 128, 129, 256, 512, 513};
 * controls that drop a block, drop the sink, or widen the window by one disagree.
 */
@Claim("U5")
public class UnionOracleTest {
    public static final int W = 128;

    static List<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (CompressRatio ratio : new CompressRatio[] {CompressRatio.CSA, CompressRatio.HCA}) {
            for (int tk : new int[] {127, 128, 129, 256, 512, 513}) {
                for (int tq : new int[] {1, Math.min(tk, 160)}) {
                    out.add(Arguments.of(ratio, tk, tq, Precision.F32));
                }
            }
            out.add(Arguments.of(ratio, 513, 160, Precision.F16));
            out.add(Arguments.of(ratio, 513, 160, Precision.BF16));
        }
        return out;
    }

    @ParameterizedTest(name = "{0} t_k = {1} t_q = {2} {3}")
    @MethodSource("cases")
    void matchesTheOracleAndEveryControlDisagrees(CompressRatio ratio, int tk, int tq, Precision precision,
            Evidence ev) {
        long seed = 5000L + 7L * tk + tq + ratio.value();
        ev.seed(seed);
        int tc = tk / ratio.value();
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, tq, tk, tc, 32, W, ratio, 0, precision);
        UnionInputs in = spec.inputs(seed);
        double[] sinks = UnionRun.heavySinks(in.sinks(), Math.min(tq + W - 1, tk) + tc);
        UnionRun run = UnionRun.of(spec, in, sinks, null, null);

        long lastThreshold = AdmitRules.compressedThreshold(tk - 1, ratio.value());
        ev.degeneracy("some_block_admitted", lastThreshold > 0 || tc == 0,
                "the last row admits " + lastThreshold + " blocks");
        ev.check("max_abs_err", run.diff().maxAbs(), run.limit(), run.diff().worst());
        if (io.attnproof.attention.PrecisionTiers.tiered(precision)) {
            io.attnproof.attention.PrecisionTiers.check(ev, "max_abs_err", precision, run.diff(),
                    io.attnproof.attention.PrecisionTiers.unionLimit(run.problem(), precision, run.oracle()));
        }
        ev.info("naive_same_precision_err", run.naiveErr());

        double mustExceed = run.limit();
        if (lastThreshold > 0) {
            // Drop block 0 for every row: the oracle with that column masked off.
            UnionProblem dropBlock = withMaskOnBlock(run.problem(), 0);
            ev.controlGap("drop_a_block", Diff.of(UnionAttentionOracle.attend(dropBlock), run.actual()).maxAbs(),
                    mustExceed);
        }
        UnionProblem noSink = new UnionProblem(in.q(), in.k(), in.v(), in.compressed(), null, null, W,
                ratio.value(), 0);
        ev.controlGap("drop_the_sink", Diff.of(UnionAttentionOracle.attend(noSink), run.actual()).maxAbs(),
                mustExceed);
        if (tk > W) {
            UnionProblem wide = new UnionProblem(in.q(), in.k(), in.v(), in.compressed(), sinks, null, W + 1,
                    ratio.value(), 0);
            ev.controlGap("window_plus_one", Diff.of(UnionAttentionOracle.attend(wide), run.actual()).maxAbs(),
                    mustExceed);
        }
        // The subtle controls a real bug looks like: window - 1, compressed threshold -/+ 1 block.
        for (Map.Entry<String, double[][][][]> control : subtleControls(run.problem()).entrySet()) {
            ev.controlGap(control.getKey(), Diff.of(control.getValue(), run.actual()).maxAbs(), mustExceed);
        }
    }

    /**
     * U5 at F16 and BF16 with sharp attention (queries scaled by 8, a power of two, so inputs stay exact in the dtype;
     * logits span tens): the precision contract (logits and probabilities kept in f32) is where a kernel that rounds
     * its scores to the dtype shows; FlashAttention's compatibility bound, which rounds them too, cannot see it.
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(value = Precision.class, names = {"F16", "BF16"})
    void sharpScoresHoldThePrecisionContract(Precision precision, Evidence ev) {
        long seed = 5150L + precision.ordinal();
        ev.seed(seed);
        String label = "[sharp " + precision + "]";
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 64, 256, 64, 32, W, CompressRatio.CSA, 0, precision);
        UnionInputs base = spec.inputs(seed);
        double[][][][] q = base.q();
        for (double[][][] b : q) {
            for (double[][] h : b) {
                for (double[] r : h) {
                    for (int i = 0; i < r.length; i++) {
                        r[i] *= 8;
                    }
                }
            }
        }
        UnionRun run = UnionRun.of(spec, base, base.sinks(), null, null);
        double logitSpread = 0;
        for (double[] logits : new double[][] {UnionAttentionOracle.logits(run.problem(), 0, 0, 63),
                UnionAttentionOracle.logits(run.problem(), 0, 1, 63)}) {
            for (double x : logits) {
                logitSpread = Double.isFinite(x) ? Math.max(logitSpread, Math.abs(x)) : logitSpread;
            }
        }
        ev.degeneracy("largest_logit" + label, logitSpread, io.attnproof.fixtures.evidence.Comparison.GT, 16.0,
                "logits past 16 lose bits when rounded to a 16-bit dtype");
        double contract = io.attnproof.attention.PrecisionTiers.unionLimit(run.problem(), precision, run.oracle());
        ev.check("max_abs_err" + label, run.diff().maxAbs(), run.limit(), run.diff().worst());
        io.attnproof.attention.PrecisionTiers.check(ev, "max_abs_err" + label, precision, run.diff(), contract);
        // Control at the contract's bar: window - 1. (This sharp, the sink and single blocks carry no mass: the
        // other controls of U5 live in the cases above.)
        ev.controlGap("window_minus_one" + label, Diff.of(subtleControls(run.problem()).get("window_minus_one"),
                run.actual()).maxAbs(), contract);
    }

    /**
     * The fp64 oracle fed the subtle wrong geometries a real bug looks like, each where the fixture's geometry lets
     * it differ: {@code window_minus_one} (some row has W keys to lose), {@code threshold_minus_one_block} (some row
     * admits a block: its newest admitted block masked off) and {@code threshold_plus_one_block} (some row's
     * threshold is below t_c: every position moved on by R, which leaves the difference-based raw window alone
     * and admits one more block). {@code p} must carry no caller mask.
     */
    public static Map<String, double[][][][]> subtleControls(UnionProblem p) {
        if (p.callerMask() != null) {
            throw new IllegalArgumentException("p.callerMask() must be null: the controls build their own masks");
        }
        Map<String, double[][][][]> out = new LinkedHashMap<>();
        long q0 = p.q0();
        long lastRow = q0 + p.tq() - 1;
        if (p.window() > 1 && lastRow - (p.window() - 1) >= p.rawPrefix()) {
            out.put("window_minus_one", UnionAttentionOracle.attend(new UnionProblem(p.q(), p.k(), p.v(),
                    p.compressed(), p.sinks(), null, p.window() - 1, p.ratio(), p.rawPrefix())));
        }
        int tc = p.tc();
        if (p.ratio() > 0 && tc > 0) {
            int width = (int) p.tkFull() + tc;
            double[][][] fewer = new double[1][p.tq()][width];
            boolean someAdmitted = false;
            for (int r = 0; r < p.tq(); r++) {
                long threshold = Math.min(tc, AdmitRules.compressedThreshold(q0 + r, p.ratio()));
                if (threshold > 0) {
                    fewer[0][r][(int) p.tkFull() + (int) threshold - 1] = Double.NEGATIVE_INFINITY;
                    someAdmitted = true;
                }
            }
            if (someAdmitted) {
                out.put("threshold_minus_one_block", UnionAttentionOracle.attend(new UnionProblem(p.q(), p.k(),
                        p.v(), p.compressed(), p.sinks(), fewer, p.window(), p.ratio(), p.rawPrefix())));
            }
            if (AdmitRules.compressedThreshold(q0, p.ratio()) < tc) {
                out.put("threshold_plus_one_block", UnionAttentionOracle.attend(new UnionProblem(p.q(), p.k(), p.v(),
                        p.compressed(), p.sinks(), null, p.window(), p.ratio(), p.rawPrefix() + p.ratio())));
            }
        }
        return out;
    }

    /** The same problem with compressed block {@code block} masked off for every row. */
    public static UnionProblem withMaskOnBlock(UnionProblem p, int block) {
        double[][][] mask = new double[1][1][(int) p.tkFull() + p.tc()];
        mask[0][0][(int) p.tkFull() + block] = Double.NEGATIVE_INFINITY;
        return new UnionProblem(p.q(), p.k(), p.v(), p.compressed(), p.sinks(), mask, p.window(), p.ratio(),
                p.rawPrefix());
    }
}
