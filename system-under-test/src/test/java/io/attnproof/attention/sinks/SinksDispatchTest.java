package io.attnproof.attention.sinks;

import io.attnproof.attention.dispatch.SinksArm;
import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.engine.FusedSinksKernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.mask.VarlenCausalMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** S5: an explicit mask keeps a call off the varlen path. S7: the fused arms' head-dim envelopes. */
class SinksDispatchTest {
    /** The envelopes written out again from docs/system.md §8, independently of {@link SinksDispatch}. */
    static final Set<Integer> ENVELOPE = Set.of(64, 80, 96, 112, 128, 192, 256);

    static System.Logger quiet;

    @BeforeAll
    static void silenceTheOnceWarning() {
        quiet = SinksAttention.useLogger(new CapturingLogger());
    }

    @AfterAll
    static void restoreTheLogger() {
        SinksAttention.useLogger(quiet);
    }

    /** The arm docs/system.md §8 names for a B = 1 call without a mask. */
    static SinksArm expected(Device.Kind kind, int headDim, boolean flash512) {
        return switch (kind) {
            case CUDA -> ENVELOPE.contains(headDim) || (headDim == 512 && flash512) ? SinksArm.CUDA_FUSED
                    : SinksArm.UNFUSED;
            case METAL -> ENVELOPE.contains(headDim) ? SinksArm.METAL_FUSED : SinksArm.UNFUSED;
            case CPU -> SinksArm.UNFUSED;
        };
    }

    @Test
    @Claim("S7")
    void headDimEnvelopes(Evidence ev) {
        long wrong = 0;
        long fused = 0;
        java.util.Map<Device.Kind, long[]> perKind = new java.util.EnumMap<>(Device.Kind.class);
        long switchMoves = 0;
        for (Device.Kind kind : Device.Kind.values()) {
            long[] counts = perKind.computeIfAbsent(kind, k -> new long[2]);
            for (int d = 1; d <= 1024; d++) {
                switchMoves += SinksDispatch.choose(kind, 1, d, false, true) != SinksDispatch.choose(kind, 1, d, false,
                        false) ? 1 : 0;
                for (boolean flash512 : new boolean[] {true, false}) {
                    SinksArm arm = SinksDispatch.choose(kind, 1, d, false, flash512);
                    fused += arm.fused() ? 1 : 0;
                    counts[arm.fused() ? 0 : 1]++;
                    if (arm != expected(kind, d, flash512)) {
                        wrong++;
                        System.err.println(kind + " head_dim " + d + " flash512 " + flash512 + " went " + arm);
                    }
                }
            }
        }
        // Measured on the system's decisions: each GPU kind goes both fused and unfused over the grid, and the
        // 512 switch moves at least one decision (otherwise the grid could not show a widened or narrowed envelope).
        for (Device.Kind kind : new Device.Kind[] {Device.Kind.CUDA, Device.Kind.METAL}) {
            long[] counts = perKind.get(kind);
            ev.degeneracy("fused_and_unfused_decisions_" + kind, Math.min(counts[0], counts[1]), Comparison.GE, 1,
                    counts[0] + " fused, " + counts[1] + " unfused");
        }
        ev.degeneracy("decisions_the_512_switch_moves", switchMoves, Comparison.GE, 1, switchMoves + " head dims");
        ev.checkBitIdentical("head_dim_decisions_off_the_spec", wrong);
        // CUDA: 7 dims twice plus 512 with the switch on; Metal: 7 dims twice.
        ev.check("fused_decisions_off_by", Math.abs(fused - (2 * 7 + 1 + 2 * 7)), 0, null);
        // The named points, one by one.
        assertEquals(SinksArm.CUDA_FUSED, SinksDispatch.choose(Device.Kind.CUDA, 1, 512, false, true));
        assertEquals(SinksArm.UNFUSED, SinksDispatch.choose(Device.Kind.CUDA, 1, 512, false, false));
        assertEquals(SinksArm.UNFUSED, SinksDispatch.choose(Device.Kind.METAL, 1, 512, false, true));
        for (int d : new int[] {32, 48, 63, 65, 72, 160, 200, 384, 511, 513, 576}) {
            assertEquals(SinksArm.UNFUSED, SinksDispatch.choose(Device.Kind.CUDA, 1, d, false, true), "cuda " + d);
            assertEquals(SinksArm.UNFUSED, SinksDispatch.choose(Device.Kind.METAL, 1, d, false, true), "metal " + d);
        }
    }

    @Test
    @Claim("S7")
    void arcFlash512IsReadFromTheSwitchValues(Evidence ev) {
        long wrong = 0;
        for (String off : new String[] {"0", "false", "off", "no", "FALSE", "Off", " no ", "No"}) {
            wrong += SinksDispatch.flash512Enabled(off) ? 1 : 0;
        }
        for (String on : new String[] {null, "1", "true", "on", "yes", "", "2", "disabled"}) {
            wrong += SinksDispatch.flash512Enabled(on) ? 0 : 1;
        }
        ev.checkBitIdentical("switch_values_misread", wrong);
        String env = System.getenv(SinksDispatch.ARC_FLASH_512);
        assertEquals(SinksDispatch.flash512Enabled(env), SinksDispatch.flash512FromEnvironment(),
                "the default reads the environment (ARC_FLASH_512 = " + env + ")");
    }

    @Test
    @Claim("S7")
    void callsLandOnTheArmTheEnvelopeNames(Evidence ev) {
        long seed = 700;
        ev.seed(seed);
        // head_dim 512 on a CUDA-labelled call: fused with the switch on, unfused with it off; 48: always unfused.
        for (int d : new int[] {512, 48, 64}) {
            SinksInputs in = SinksInputs.generate(seed + d, 1, 4, 2, 13, 21, d, Precision.F32, 2.0);
            Device cuda = Device.cuda(0);
            Tensor q = SinksRun.tensor(in.q(), DType.F32, cuda);
            Tensor k = SinksRun.tensor(in.k(), DType.F32, cuda);
            Tensor v = SinksRun.tensor(in.v(), DType.F32, cuda);
            Tensor sinks = SinksRun.sinks(in.sinks(), cuda);
            float[] fusedBits = FusedSinksKernel.attend(q, k, v, sinks, null, 5).toFloatArray();
            float[] unfusedBits = SinksAttention.sinksAttnCpu(q, k, v, sinks, null, 5).toFloatArray();
            long armsDiffer = Diff.bitsDiffering(fusedBits, unfusedBits);
            ev.degeneracy("fused_and_unfused_bits_differ_d" + d, armsDiffer > 0, armsDiffer + " elements");
            for (boolean flash512 : new boolean[] {true, false}) {
                float[] got = SinksAttention.sinksAttn(q, k, v, sinks, null, 5, flash512).toFloatArray();
                boolean goesFused = SinksDispatch.cudaEnvelope(d, flash512);
                String metric = "bits_off_the_" + (goesFused ? "fused" : "unfused") + "_arm_d" + d + "_flash512_"
                        + flash512;
                ev.checkBitIdentical(metric, Diff.bitsDiffering(got, goesFused ? fusedBits : unfusedBits));
            }
            if (d == 48) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> FusedSinksKernel.flashAttnSinks(q, k, v, sinks, null, 5));
                assertTrue(e.getMessage().startsWith("head_dim = 48: must be in flash_attn_sinks's envelope"),
                        e.getMessage());
            }
            if (d == 512) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> FusedSinksKernel.flashAttnSinksMetal(q, k, v, sinks, null, 5));
                assertTrue(e.getMessage().startsWith("head_dim = 512: must be in flash_attn_sinks_metal's envelope"),
                        e.getMessage());
            }
        }
    }

    @Test
    @Claim("S5")
    void anExplicitMaskKeepsTheCallOffVarlen(Evidence ev) {
        long seed = 500;
        ev.seed(seed);
        int batch = 3;
        int tq = 6;
        int tk = 11;
        long varlenWithMask = 0;
        for (Device.Kind kind : Device.Kind.values()) {
            for (int b = 2; b <= 5; b++) {
                for (int d : new int[] {16, 64, 512}) {
                    varlenWithMask += SinksDispatch.choose(kind, b, d, true, true) == SinksArm.VARLEN ? 1 : 0;
                    assertEquals(SinksArm.VARLEN, SinksDispatch.choose(kind, b, d, false, true), "B > 1, no mask");
                }
            }
            assertFalse(SinksDispatch.choose(kind, 1, 16, false, true) == SinksArm.VARLEN, "B = 1 never goes varlen");
        }
        ev.checkBitIdentical("masked_b_gt_1_decisions_on_varlen", varlenWithMask);

        // Through real calls, observed through the varlen memo (only the varlen path touches it).
        VarlenCausalMask.Memo memo = VarlenCausalMask.Memo.current();
        SinksInputs in = SinksInputs.generate(seed, batch, 4, 2, tq, tk, 16, Precision.F32, 2.0);
        double[][][][] pad = new double[batch][1][1][tk];
        for (int b = 0; b < batch; b++) {
            java.util.Arrays.fill(pad[b][0][0], 0, 2 + b, Double.NEGATIVE_INFINITY);
        }
        for (Device device : new Device[] {Device.CPU, Device.cuda(0), Device.metal(0)}) {
            for (double[][][][] mask : new double[][][][][] {pad, new double[1][1][tq][tk]}) {
                String label = "[" + device + (mask == pad ? " padding" : " all-zero") + " mask]";
                memo.clear();
                Tensor got = SinksRun.sinksAttn(in, DType.F32, device, mask, 4);
                ev.check("varlen_memo_lookups_for_a_masked_b3_call" + label, memo.builds() + memo.hits(), 0,
                        null);
                Tensor unfused = SinksAttention.sinksAttnCpu(SinksRun.tensor(in.q(), DType.F32, device),
                        SinksRun.tensor(in.k(), DType.F32, device), SinksRun.tensor(in.v(), DType.F32, device),
                        SinksRun.sinks(in.sinks(), device), SinksRun.tensor(mask, DType.F32, device), 4);
                ev.checkBitIdentical("bits_off_the_unfused_arm" + label,
                        Diff.bitsDiffering(got.toFloatArray(), unfused.toFloatArray()));
            }
            // Control: the same call without a mask goes varlen (one build, then hits for the equal rows) ...
            memo.clear();
            Tensor varlen = SinksRun.sinksAttn(in, DType.F32, device, null, 4);
            // One varlen mask lookup per packed row: B = 3 rows.
            ev.controlAtLeast("varlen_memo_lookups_for_an_unmasked_b3_call[" + device + "]", memo.builds() + memo.hits(),
                    batch);
            ev.check("varlen_memo_builds_minus_one[" + device + "]", Math.abs(memo.builds() - 1), 0, null);
            // ... where the padding mask would have been lost.
            Tensor padded = SinksRun.sinksAttn(in, DType.F32, device, pad, 4);
            double lost = Diff.of(Tensors.toArray4(varlen), Tensors.toArray4(padded)).maxAbs();
            // Bar: the tolerance limit of the masked output against its oracle (and no less than a 1e-2 signal).
            double limit = SinksRun.of(SinksRun.problem(in, pad, 4), padded, Precision.F32).limit();
            ev.controlGap("mask_lost_on_varlen[" + device + "]", lost, Math.max(1e-2, limit));
        }
        memo.clear();
    }
}
