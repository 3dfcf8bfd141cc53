package io.attnproof.attention.backend;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.ragged.Cohorts;
import io.attnproof.attention.sinks.MaskNeverDroppedTest;
import io.attnproof.attention.sinks.SinksRun;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.ragged.RaggedCohort;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * X1: the same problems on every lane that can run here, each lane against the same fp64 oracle, then every pair of
 * lanes against each other. A pair must agree within the problem's tolerance limit (each lane alone is only held
 * to that limit against the oracle, so this is the stricter check); a negative control shows the pairwise check
 * would catch a lane whose kernel were off by one in its window or dropped the mask. The CUDA source runs twice,
 * built with FMA contraction off ({@code cuda-emu}) and on ({@code cuda-emu-fma}, as nvcc compiles it by default):
 * the limits hold for both, and a degeneracy line shows the contracted build really gives other bits. Lines for a lane carry its
 * name; lines for a pair carry {@code "<a>-vs-<b>"}; an unavailable lane writes one {@code "skipped"} line (a
 * required one fails instead).
 */
@Claim("X1")
class CrossLaneTest {

    /** One problem: how a lane computes it, its fp64 answer, and the tolerance limit for its precision. */
    record Problem(String name, Function<Backend, double[][][][]> run, double[][][][] oracle, double naiveErr) {
        double limit() {
            double largest = 0;
            for (double[][][] b : oracle) {
                for (double[][] h : b) {
                    for (double[] r : h) {
                        for (double x : r) {
                            largest = Math.max(largest, Math.abs(x));
                        }
                    }
                }
            }
            return Tolerance.limit(Precision.F32, naiveErr, largest);
        }
    }

    static Tensor on(double[][][][] x, Backend lane) {
        return SinksRun.tensor(x, DType.F32, lane.device());
    }

    static List<Problem> problems() {
        List<Problem> out = new ArrayList<>();
        // The fused kernel, maskless, across tile boundaries with a window.
        SinksInputs fused = SinksInputs.generate(9101, 1, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        SinksProblem fusedProblem = SinksRun.problem(fused, null, 16);
        out.add(sinksProblem("fused_flash_attn_sinks", fusedProblem, lane -> Tensors.toArray4(lane.flashAttnSinks(
                on(fused.q(), lane), on(fused.k(), lane), on(fused.v(), lane), SinksRun.sinks(fused.sinks(),
                        lane.device()), null, 16))));
        // sinks_attn, B = 3 without a mask: the varlen arm.
        SinksInputs varlen = SinksInputs.generate(9102, 3, 4, 2, 6, 9, 64, Precision.F32, 2.0);
        out.add(sinksProblem("varlen_sinks_attn", SinksRun.problem(varlen, null, 3),
                lane -> Tensors.toArray4(SinksRun.sinksAttn(lane, varlen, DType.F32, lane.device(), null, 3))));
        // sinks_attn with a document mask: the unfused masked arm.
        SinksInputs masked = SinksInputs.generate(9103, 2, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        double[][][][] doc = MaskNeverDroppedTest.documentMask(2);
        out.add(sinksProblem("unfused_masked_sinks_attn", SinksRun.problem(masked, doc, 16),
                lane -> Tensors.toArray4(SinksRun.sinksAttn(lane, masked, DType.F32, lane.device(), doc, 16))));
        // dsv4_attention, CSA, one window past W.
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 33, 129, 32, 32, 128, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs union = spec.inputs(9104);
        UnionProblem up = new UnionProblem(union.q(), union.k(), union.v(), union.compressed(), union.sinks(), null,
                spec.window(), spec.ratio().value(), 0);
        double[][][][] unionOracle = UnionAttentionOracle.attend(up);
        out.add(new Problem("union_dsv4_attention", lane -> Tensors.toArray4(UnionRun.run(spec, union, union.sinks(),
                null, lane)), unionOracle, Diff.of(unionOracle, UnionAttentionOracle.attendNaive(up, Precision.F32))
                .maxAbs()));
        // A ragged cohort, row 1 of the batched call.
        RaggedCohort cohort = new RaggedCohort(new int[] {37, 50, 10, 44}, 3, 16, 4, 4, 16);
        RaggedCohort.Inputs rin = cohort.inputs(9105, Precision.F32, Double.NaN);
        RaggedCohort.Row row = rin.rows().get(2);
        UnionProblem rp = new UnionProblem(row.q(), row.k(), row.k(), row.compressed(), rin.sinks(), null,
                cohort.window(), cohort.ratio(), 0);
        double[][][][] rowOracle = UnionAttentionOracle.attend(rp);
        out.add(new Problem("ragged_row_2", lane -> Cohorts.row(Cohorts.batched(cohort, rin, cohort.rowQ0(), lane), 2),
                rowOracle, Diff.of(rowOracle, UnionAttentionOracle.attendNaive(rp, Precision.F32)).maxAbs()));
        return out;
    }

    static Problem sinksProblem(String name, SinksProblem p, Function<Backend, double[][][][]> run) {
        double[][][][] oracle = SinksAttentionOracle.attend(p);
        return new Problem(name, run, oracle, Diff.of(oracle, SinksAttentionOracle.attendNaive(p, Precision.F32))
                .maxAbs());
    }

    static float[] flat(double[][][][] x) {
        List<Float> out = new ArrayList<>();
        for (double[][][] a : x) {
            for (double[][] b : a) {
                for (double[] c : b) {
                    for (double d : c) {
                        out.add((float) d);
                    }
                }
            }
        }
        float[] f = new float[out.size()];
        for (int i = 0; i < f.length; i++) {
            f[i] = out.get(i);
        }
        return f;
    }

    @Test
    void everyLaneMatchesTheOracleAndEveryPairAgrees(Evidence ev) {
        ev.seed(9101);
        List<Backend> running = new ArrayList<>();
        List<String> missingRequired = new ArrayList<>();
        for (Backend lane : Backend.all()) {
            var reason = lane.unavailable();
            if (reason.isEmpty()) {
                running.add(lane);
            } else if (Lanes.required(lane)) {
                Lanes.recordUnavailable(ev.backend(lane.name()), reason.get());
                missingRequired.add(lane.name() + ": " + reason.get());
            } else {
                ev.skipped(lane.name(), reason.get());
            }
        }
        ev.degeneracy("at_least_two_lanes_run", running.size() >= 2, "lanes " + running);
        long fmaBits = 0;
        boolean fmaCompared = false;
        for (Problem p : problems()) {
            double limit = p.limit();
            Map<Backend, double[][][][]> outputs = new LinkedHashMap<>();
            for (Backend lane : running) {
                double[][][][] got = p.run().apply(lane);
                outputs.put(lane, got);
                Diff diff = Diff.of(p.oracle(), got);
                ev.backend(lane.name()).check("max_abs_err_vs_oracle[" + p.name() + "]", diff.maxAbs(), limit,
                        diff.worst());
            }
            if (outputs.containsKey(Backend.cudaEmu()) && outputs.containsKey(Backend.cudaEmuFma())) {
                fmaBits += Diff.bitsDiffering(flat(outputs.get(Backend.cudaEmu())),
                        flat(outputs.get(Backend.cudaEmuFma())));
                fmaCompared = true;
            }
            for (int i = 0; i < running.size(); i++) {
                for (int j = i + 1; j < running.size(); j++) {
                    Backend a = running.get(i);
                    Backend b = running.get(j);
                    Evidence pair = ev.backend(a.name() + "-vs-" + b.name());
                    Diff gap = Diff.of(outputs.get(a), outputs.get(b));
                    pair.check("max_abs_gap[" + p.name() + "]", gap.maxAbs(), limit, gap.worst());
                }
            }
        }
        if (fmaCompared) {
            // The FMA build must really contract (else its lines would repeat cuda-emu's): some output bits differ.
            ev.backend("cuda-emu-vs-cuda-emu-fma").degeneracy("fma_contraction_changes_bits", fmaBits,
                    io.attnproof.fixtures.evidence.Comparison.GT, 0, fmaBits + " output elements differ in bits");
        }
        // Negative controls: a lane off by one in its window, or dropping the mask, lands far from the cpu lane.
        SinksInputs in = SinksInputs.generate(9101, 1, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        SinksInputs masked = SinksInputs.generate(9103, 2, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        double[][][][] doc = MaskNeverDroppedTest.documentMask(2);
        List<Problem> ps = problems();
        double fusedLimit = ps.get(0).limit();
        double maskedLimit = ps.get(2).limit();
        double[][][][] cpuFused = ps.get(0).run().apply(Backend.cpu());
        double[][][][] cpuMasked = ps.get(2).run().apply(Backend.cpu());
        for (Backend lane : running) {
            if (lane instanceof Cpu) {
                continue;
            }
            Evidence pair = ev.backend("cpu-vs-" + lane.name());
            double[][][][] wide = Tensors.toArray4(lane.flashAttnSinks(on(in.q(), lane), on(in.k(), lane),
                    on(in.v(), lane), SinksRun.sinks(in.sinks(), lane.device()), null, 17));
            pair.controlGap("window_plus_one_on_" + lane.name(), Diff.of(cpuFused, wide).maxAbs(), fusedLimit);
            double[][][][] dropped = Tensors.toArray4(SinksRun.sinksAttn(lane, masked, DType.F32, lane.device(), null,
                    16));
            pair.controlGap("mask_dropped_on_" + lane.name(), Diff.of(cpuMasked, dropped).maxAbs(), maskedLimit);
        }
        if (!missingRequired.isEmpty()) {
            throw new AssertionError("required lanes cannot run: " + missingRequired);
        }
    }
}
