package io.attnproof.attention.sinks;

import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.engine.FusedSinksKernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Java fused kernel: S3, it refuses every non-null mask at its interface (its whole reason to take one); S1,
 * maskless it tracks the fp64 causal/window reference across tile boundaries, so it is the causal-only arm a mask
 * must never be dropped into.
 */
class FusedSinksKernelTest {

    /** The kernel entry points, each called with {@code mask}. */
    static List<Function<Tensor, Tensor>> entryPoints(Tensor q, Tensor k, Tensor v, Tensor sinks, int window) {
        return List.of(
                mask -> FusedSinksKernel.flashAttnSinks(q, k, v, sinks, mask, window),
                mask -> FusedSinksKernel.flashAttnSinksMetal(q, k, v, sinks, mask, window),
                mask -> FusedSinksKernel.attend(q, k, v, sinks, mask, window));
    }

    @Test
    @Claim("S3")
    void theFusedKernelsRefuseANonNullMask(Evidence ev) {
        long seed = 300;
        ev.seed(seed);
        int tq = 5;
        int tk = 9;
        SinksInputs in = SinksInputs.generate(seed, 1, 4, 2, tq, tk, 64, Precision.F32, 1.0);
        Device cuda = Device.cuda(0);
        Tensor q = SinksRun.tensor(in.q(), DType.F32, cuda);
        Tensor k = SinksRun.tensor(in.k(), DType.F32, cuda);
        Tensor v = SinksRun.tensor(in.v(), DType.F32, cuda);
        Tensor sinks = SinksRun.sinks(in.sinks(), cuda);
        // Masks of every kind, including ones the kernel would honour anyway: the refusal is on presence.
        List<Tensor> masks = List.of(
                Tensor.zeros(DType.F32, cuda, tq, tk),
                Tensor.zeros(DType.F32, cuda, 1, 1, tq, tk),
                GptOssConfig.gptOss(2).layerMask(1, tq, tk, cuda),
                Tensor.zeros(DType.F32, cuda, 1),
                Tensor.zeros(DType.F32, Device.CPU, 7, 3));
        long accepted = 0;
        long unclear = 0;
        for (Function<Tensor, Tensor> entry : entryPoints(q, k, v, sinks, 0)) {
            for (Tensor mask : masks) {
                try {
                    entry.apply(mask);
                    accepted++;
                } catch (IllegalArgumentException e) {
                    unclear += e.getMessage().startsWith("mask = " + mask + ": must be null: ")
                            && e.getMessage().contains("cannot honour a caller mask") ? 0 : 1;
                }
            }
        }
        ev.checkBitIdentical("masks_accepted_by_a_fused_kernel", accepted);
        ev.checkBitIdentical("refusals_without_the_rule_in_the_message", unclear);
        // Control: the same calls with no mask run.
        long ran = 0;
        for (Function<Tensor, Tensor> entry : entryPoints(q, k, v, sinks, 0)) {
            ran += entry.apply(null).numel() == 4 * tq * 64 ? 1 : 0;
        }
        ev.check("maskless_calls_that_did_not_run", 3 - ran, 0, null);
        // And the dispatch never hands a mask to a fused arm, for any device, batch or head dim.
        long fusedWithMask = 0;
        for (Device.Kind kind : Device.Kind.values()) {
            for (int batch = 0; batch <= 3; batch++) {
                for (int d = 1; d <= 600; d++) {
                    for (boolean flash512 : new boolean[] {false, true}) {
                        fusedWithMask += SinksDispatch.choose(kind, batch, d, true, flash512).fused() ? 1 : 0;
                    }
                }
            }
        }
        ev.checkBitIdentical("masked_calls_dispatched_to_a_fused_arm", fusedWithMask);
    }

    @ParameterizedTest(name = "t_q = {0}, t_k = {1}, window = {2}, {3}")
    @CsvSource({"1,40,0,F32", "24,40,0,F32", "40,130,0,F32", "24,150,70,F32", "24,40,3,F32", "24,40,16,F32", "41,41,0,F32", "41,41,7,F32",
        "17,50,32,F32", "12,5,0,F32", "12,5,2,F32", "24,40,16,BF16", "24,40,0,F16"})
    @Claim("S1")
    void theFusedKernelTracksTheCausalReference(int tq, int tk, int window, Precision precision, Evidence ev) {
        long seed = 310L + 7L * tq + tk + window;
        ev.seed(seed);
        String label = "[fused t_q=" + tq + " t_k=" + tk + " W=" + window + " " + precision + "]";
        SinksInputs in = SinksInputs.generate(seed, 2, 6, 2, tq, tk, 16, precision, 2.0).heavySinks(Math.min(tk,
                window == 0 ? tk : window));
        DType dt = Tensors.dtype(precision);
        // The causal (and window) rule must matter: it keeps keys from some rows (a decode: it admits several).
        List<Integer> admitted = new java.util.ArrayList<>();
        for (int r = 0; r < tq; r++) {
            int pos = tk - tq + r;
            int lo = window == 0 ? 0 : Math.max(0, pos - window + 1);
            admitted.add(Math.max(0, Math.min(pos, tk - 1) - lo + 1));
        }
        if (tq == 1) {
            ev.degeneracy("decode_admits_several_keys" + label, admitted.getFirst(),
                    io.attnproof.fixtures.evidence.Comparison.GT, 1, "admitted keys " + admitted);
        } else {
            ev.degeneracy("rows_the_rule_keeps_keys_from" + label, admitted.stream().filter(n -> n < tk).count(),
                    io.attnproof.fixtures.evidence.Comparison.GT, 0, "per-row admitted keys " + admitted);
        }
        Tensor out = FusedSinksKernel.attend(SinksRun.tensor(in.q(), dt, Device.CPU),
                SinksRun.tensor(in.k(), dt, Device.CPU), SinksRun.tensor(in.v(), dt, Device.CPU),
                SinksRun.sinks(in.sinks(), Device.CPU), null, window);
        SinksProblem problem = SinksRun.problem(in, null, window);
        SinksRun run = SinksRun.of(problem, out, precision);
        ev.check("max_abs_err_fused_vs_causal_reference" + label, run.diff().maxAbs(), run.limit(), run.diff().worst());
        if (io.attnproof.attention.PrecisionTiers.tiered(precision)) {
            io.attnproof.attention.PrecisionTiers.check(ev, "max_abs_err_fused_vs_causal_reference" + label,
                    precision, run.diff(), io.attnproof.attention.PrecisionTiers.sinksLimit(problem, precision,
                            run.oracle()));
        }
        // Controls: no causality, window + 1 (when it cuts), no sink — each lands far from the kernel.
        if (tq > 1) {
            // (A decode row is the last row: it sees every key with or without causality.)
            ev.controlGap("non_causal" + label, SinksRun.maxAbsDiff(SinksAttentionOracle.attend(problem.withRule(0,
                    false)), run.actual()), run.limit());
        }
        if (window > 0 && window < tk) {
            ev.controlGap("window_plus_one" + label, SinksRun.maxAbsDiff(SinksAttentionOracle.attend(
                    problem.withRule(window + 1, true)), run.actual()), run.limit());
        }
        ev.controlGap("no_sink" + label, SinksRun.maxAbsDiff(SinksAttentionOracle.attend(problem.withSinks(null)),
                run.actual()), run.limit());
        // The fused kernel and the unfused path agree up to rounding (they order the sums differently).
        Tensor unfused = SinksAttention.sinksAttnCpu(SinksRun.tensor(in.q(), dt, Device.CPU),
                SinksRun.tensor(in.k(), dt, Device.CPU), SinksRun.tensor(in.v(), dt, Device.CPU),
                SinksRun.sinks(in.sinks(), Device.CPU), null, window);
        ev.check("max_abs_fused_vs_unfused" + label, SinksRun.maxAbsDiff(run.actual(), Tensors.toArray4(unfused)),
                run.limit(), null);
        if (tq > tk) {
            // Rows before the first key (r < t_q - t_k) see nothing: exactly zeros.
            long nonZero = 0;
            for (int b = 0; b < 2; b++) {
                for (int h = 0; h < 6; h++) {
                    for (int r = 0; r < tq - tk; r++) {
                        for (int e = 0; e < 16; e++) {
                            nonZero += Float.floatToRawIntBits(out.get(b, h, r, e)) == 0 ? 0 : 1;
                        }
                    }
                }
            }
            ev.checkBitIdentical("nonzero_in_rows_that_see_no_key" + label, nonZero);
        }
    }

    @Test
    @Claim("S1")
    void keysOutsideEveryRowsSpanAreNeverRead(Evidence ev) {
        long seed = 330;
        ev.seed(seed);
        int tq = 9;
        int tk = 60;
        int window = 4;
        SinksInputs in = SinksInputs.generate(seed, 1, 2, 1, tq, tk, 64, Precision.F32, 1.0);
        Tensor before = FusedSinksKernel.flashAttnSinks(SinksRun.tensor(in.q(), DType.F32, Device.cuda(0)),
                SinksRun.tensor(in.k(), DType.F32, Device.cuda(0)), SinksRun.tensor(in.v(), DType.F32, Device.cuda(0)),
                SinksRun.sinks(in.sinks(), Device.cuda(0)), null, window);
        // Row 0 sees keys 48..51 and row 8 sees 56..59: keys 0..47 belong to no row (whole tiles are skipped).
        int firstSeen = tk - tq - window + 1;
        ev.degeneracy("keys_no_row_admits", firstSeen, io.attnproof.fixtures.evidence.Comparison.GE, 32,
                "first seen " + firstSeen);
        for (double[][] head : in.k()[0]) {
            for (int j = 0; j < firstSeen; j++) {
                java.util.Arrays.fill(head[j], Double.NaN);
            }
        }
        for (double[][] head : in.v()[0]) {
            for (int j = 0; j < firstSeen; j++) {
                java.util.Arrays.fill(head[j], Double.NaN);
            }
        }
        Tensor after = FusedSinksKernel.flashAttnSinks(SinksRun.tensor(in.q(), DType.F32, Device.cuda(0)),
                SinksRun.tensor(in.k(), DType.F32, Device.cuda(0)), SinksRun.tensor(in.v(), DType.F32, Device.cuda(0)),
                SinksRun.sinks(in.sinks(), Device.cuda(0)), null, window);
        ev.checkBitIdentical("bits_with_nan_canaries_outside_every_window",
                Diff.bitsDiffering(before.toFloatArray(), after.toFloatArray()));
        assertEquals(Device.cuda(0), after.device(), "the output lives on q's device");
    }
}
