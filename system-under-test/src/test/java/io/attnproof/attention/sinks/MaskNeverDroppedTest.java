package io.attnproof.attention.sinks;

import io.attnproof.attention.dispatch.SinksArm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.attention.Tensors;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.attention.backend.Backend;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * S1: a caller mask is never dropped — on every arm that can receive the call (the CPU's unfused path; CUDA- and
 * Metal-labelled calls, which the mask must move off their fused kernels) masked sinks attention matches the masked
 * fp64 reference and misses the causal-only reference by the mask's whole effect. S2: a padding-column mask is
 * honoured, and dropping it changes the output by more than 1e-2.
 */
public class MaskNeverDroppedTest {
    static final int HQ = 8;
    static final int HKV = 2;
    static final int TQ = 24;
    static final int TK = 40;
    static final int D = 64;
    static final double SIGNAL = 1e-2;

    static System.Logger quiet;

    @BeforeAll
    static void silenceTheOnceWarning() {
        quiet = SinksAttention.useLogger(new CapturingLogger());
    }

    @AfterAll
    static void restoreTheLogger() {
        SinksAttention.useLogger(quiet);
    }

    static List<Arguments> arms() {
        List<Arguments> out = new ArrayList<>();
        for (Device device : new Device[] {Device.CPU, Device.cuda(0), Device.metal(0)}) {
            for (int batch : new int[] {1, 2}) {
                for (int window : new int[] {0, 16}) {
                    out.add(Arguments.of(device, batch, window));
                }
            }
        }
        return out;
    }

    /**
     * A document mask {@code [B,1,tq,tk]}: the keys fall into three packed documents per batch row (boundaries move
     * with the row) and a query sees only its own document's keys — a rule no (kv_offset, window) pair expresses.
     */
    public static double[][][][] documentMask(int batch) {
        double[][][][] m = new double[batch][1][TQ][TK];
        for (int b = 0; b < batch; b++) {
            int[] starts = {0, 13 + 3 * b, 29 - 2 * b};
            for (int r = 0; r < TQ; r++) {
                int p = r + TK - TQ;
                int doc = p >= starts[2] ? 2 : p >= starts[1] ? 1 : 0;
                for (int j = 0; j < TK; j++) {
                    int docJ = j >= starts[2] ? 2 : j >= starts[1] ? 1 : 0;
                    m[b][0][r][j] = docJ == doc ? 0 : Double.NEGATIVE_INFINITY;
                }
            }
        }
        return m;
    }

    @ParameterizedTest(name = "{0} B = {1} window = {2}")
    @MethodSource("arms")
    @Claim("S1")
    void aCallerMaskIsNeverDropped(Device device, int batch, int window, Evidence ev) {
        callerMaskNeverDropped(Backend.cpu(), device, batch, window, ev);
    }

    /** S1 for one (device, batch, window) with {@code sinks_attn} on {@code backend}. */
    public static void callerMaskNeverDropped(Backend backend, Device device, int batch, int window, Evidence ev) {
        long seed = 1100L + 10L * batch + window + device.kind().ordinal() * 100L;
        ev.seed(seed);
        String label = "[" + device + " B=" + batch + " W=" + window + "]";
        SinksInputs in = SinksInputs.generate(seed, batch, HQ, HKV, TQ, TK, D, Precision.F32, 2.0);
        double[][][][] mask = documentMask(batch);
        SinksProblem masked = SinksRun.problem(in, mask, window);
        SinksProblem causalOnly = masked.withMask(null);
        double[][][][] refMasked = SinksAttentionOracle.attend(masked);
        double[][][][] refCausal = SinksAttentionOracle.attend(causalOnly);

        // Degeneracy first: the mask has an effect worth detecting, and the call is one a fused arm would take.
        double signal = SinksRun.maxAbsDiff(refMasked, refCausal);
        ev.degeneracy("masked_vs_maskless_signal" + label, signal, Comparison.GT, SIGNAL, "the mask must matter");
        Tensor q = SinksRun.tensor(in.q(), DType.F32, device);
        SinksArm maskless = SinksAttention.armFor(q, null, true);
        SinksArm withMask = SinksAttention.armFor(q, SinksRun.tensor(mask, DType.F32, device), true);
        SinksArm expectedMaskless = batch > 1 ? SinksArm.VARLEN
                : device.kind() == Device.Kind.CUDA ? SinksArm.CUDA_FUSED
                : device.kind() == Device.Kind.METAL ? SinksArm.METAL_FUSED : SinksArm.UNFUSED;
        ev.degeneracy("maskless_call_takes_the_arm_under_test" + label, maskless == expectedMaskless,
                "maskless arm " + maskless + ", expected " + expectedMaskless);

        // With the guard in place: the masked call matches the masked reference, on the unfused arm.
        SinksRun guarded = SinksRun.of(masked, SinksRun.sinksAttn(backend, in, DType.F32, device, mask, window),
                Precision.F32);
        ev.check("max_abs_err_vs_masked_reference" + label, guarded.diff().maxAbs(), guarded.limit(),
                guarded.diff().worst());
        ev.check("masked_call_not_on_fused_or_varlen_arm" + label, withMask == SinksArm.UNFUSED ? 0 : 1, 0, null);
        // The maskless call (the arm the mask moved us off) tracks the causal-only reference ...
        Tensor unmasked = SinksRun.sinksAttn(backend, in, DType.F32, device, null, window);
        SinksRun fusedRun = SinksRun.of(causalOnly, unmasked, Precision.F32);
        ev.check("max_abs_err_maskless_vs_causal_reference" + label, fusedRun.diff().maxAbs(), fusedRun.limit(),
                fusedRun.diff().worst());
        // ... and misses the masked one by the mask's whole effect: what dropping the mask would cost.
        ev.controlGap("mask_dropped_vs_masked_reference" + label,
                SinksRun.maxAbsDiff(refMasked, Tensors.toArray4(unmasked)), guarded.limit());
    }

    static List<Arguments> padding() {
        List<Arguments> out = new ArrayList<>();
        for (Device device : new Device[] {Device.CPU, Device.cuda(0), Device.metal(0)}) {
            out.add(Arguments.of(device, new int[] {7}));
            out.add(Arguments.of(device, new int[] {5, 11}));
        }
        return out;
    }

    /** Left padding {@code [B,1,1,tk]}: row b's first {@code pads[b]} key columns are padding, for every query. */
    static double[][][][] paddingMask(int[] pads) {
        double[][][][] m = new double[pads.length][1][1][TK];
        for (int b = 0; b < pads.length; b++) {
            Arrays.fill(m[b][0][0], 0, pads[b], Double.NEGATIVE_INFINITY);
        }
        return m;
    }

    @ParameterizedTest(name = "{0} pads {1}")
    @MethodSource("padding")
    @Claim("S2")
    void aPaddingColumnMaskIsHonoured(Device device, int[] pads, Evidence ev) {
        paddingMaskHonoured(Backend.cpu(), device, pads, ev);
    }

    /** S2 for one (device, padding) with {@code sinks_attn} on {@code backend}. */
    public static void paddingMaskHonoured(Backend backend, Device device, int[] pads, Evidence ev) {
        int batch = pads.length;
        long seed = 1200L + 31L * batch + device.kind().ordinal();
        ev.seed(seed);
        String label = "[" + device + " pads=" + Arrays.toString(pads) + "]";
        int window = 0;
        SinksInputs in = SinksInputs.generate(seed, batch, HQ, HKV, TQ, TK, D, Precision.F32, 2.0);
        double[][][][] mask = paddingMask(pads);
        SinksProblem masked = SinksRun.problem(in, mask, window);
        double oracleSignal = SinksRun.maxAbsDiff(SinksAttentionOracle.attend(masked),
                SinksAttentionOracle.attend(masked.withMask(null)));
        ev.degeneracy("padding_changes_the_reference" + label, oracleSignal > SIGNAL, "signal " + oracleSignal);

        Tensor honoured = SinksRun.sinksAttn(backend, in, DType.F32, device, mask, window);
        SinksRun run = SinksRun.of(masked, honoured, Precision.F32);
        ev.check("max_abs_err_vs_masked_reference" + label, run.diff().maxAbs(), run.limit(), run.diff().worst());
        double dropped = SinksRun.maxAbsDiff(Tensors.toArray4(honoured),
                Tensors.toArray4(SinksRun.sinksAttn(backend, in, DType.F32, device, null, window)));
        ev.controlGap("dropping_the_padding_mask" + label, dropped, Math.max(SIGNAL, run.limit()));

        // NaN canaries in the padded K/V slots: a padded column must never be read.
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < HKV; h++) {
                for (int j = 0; j < pads[b]; j++) {
                    Arrays.fill(in.k()[b][h][j], Double.NaN);
                    Arrays.fill(in.v()[b][h][j], Double.NaN);
                }
            }
        }
        Tensor canaried = SinksRun.sinksAttn(backend, in, DType.F32, device, mask, window);
        ev.checkBitIdentical("bits_with_nan_canaries_in_padding" + label,
                Diff.bitsDiffering(honoured.toFloatArray(), canaried.toFloatArray()));
        assertEquals(Arrays.asList(batch, HQ, TQ, D), Arrays.stream(honoured.shape()).boxed().toList());
    }
}
