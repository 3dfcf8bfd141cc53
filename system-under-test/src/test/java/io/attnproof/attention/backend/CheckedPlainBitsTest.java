package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.sinks.MaskNeverDroppedTest;
import io.attnproof.attention.sinks.SinksRun;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.oracles.Precision;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.tolerance.Diff;
import org.junit.jupiter.api.Test;

/**
 * Claim N5: the checked build of each emulated lane (bounds checks, race records) and its plain build
 * ({@code -DATTNPROOF_EMU_PLAIN}: neither) give the same output bits on the claim inputs, for every kernel of both
 * native sources. A checked access is a real {@code T&}, so expressions deduce the device's types in both builds;
 * the inputs are the lanes' claim cases (RaceClaims' set: S1/U8 fused cases, the S7 envelope, S6 packed sequences,
 * the S1/S2 masked unfused path, U8 softmax, B5 split-K decodes) plus GQA of 16/2 and 64/8 heads.
 */
class CheckedPlainBitsTest {

    /** The lane operations the claim inputs go through (a lane's NativeSinks, checked or plain). */
    record Lane(String name, NativeSinks sinks, EmuRunner runner, Device device) {
    }

    static Lane checked(NativeSinks.Dialect dialect) {
        Backend b = dialect == NativeSinks.Dialect.CUDA ? Backend.cudaEmu() : Backend.metalEmu();
        EmuRunner r = NativeFaultsTest.runner(b);
        return new Lane(b.name(), new NativeSinks(b.name(), b.device(), dialect, r), r, b.device());
    }

    static Lane plain(NativeSinks.Dialect dialect) {
        boolean cuda = dialect == NativeSinks.Dialect.CUDA;
        String name = cuda ? "cuda-emu-plain" : "metal-emu-plain";
        EmuRunner r = EmuRunner.load(name, NativeFiles.library(cuda ? "libattnproof_cuda_emu_plain.so"
                : "libattnproof_metal_emu_plain.so"));
        Device d = cuda ? Device.cuda(0) : Device.metal(0);
        return new Lane(name, new NativeSinks(name, d, dialect, r), r, d);
    }

    /** The claim inputs, each a named call whose output is a float array. */
    static Map<String, Function<Lane, float[]>> claimCalls(NativeSinks.Dialect dialect) {
        Map<String, Function<Lane, float[]>> calls = new LinkedHashMap<>();
        int[][] fused = {{1, 40, 0}, {24, 40, 16}, {41, 41, 7}, {17, 50, 32}, {12, 5, 2}, {24, 40, 0}, {24, 40, 3}};
        for (int[] c : fused) {
            SinksInputs in = SinksInputs.generate(310L + 7L * c[0] + c[1] + c[2], 2, 6, 2, c[0], c[1], 64,
                    Precision.F32, 2.0);
            calls.put("fused tq=" + c[0] + " tk=" + c[1] + " w=" + c[2], l -> l.sinks().flashAttnSinks(
                    t(in.q(), l), t(in.k(), l), t(in.v(), l), SinksRun.sinks(in.sinks(), l.device()), null, c[2])
                    .toFloatArray());
            calls.put("unfused tq=" + c[0] + " tk=" + c[1] + " w=" + c[2], l -> l.sinks().sinksAttnUnfused(
                    t(in.q(), l), t(in.k(), l), t(in.v(), l), SinksRun.sinks(in.sinks(), l.device()), null, c[2])
                    .toFloatArray());
        }
        List<Integer> dims = new ArrayList<>(List.of(64, 80, 96, 112, 128, 192, 256));
        if (dialect == NativeSinks.Dialect.CUDA) {
            dims.add(512);
        }
        for (int d : dims) {
            SinksInputs in = SinksInputs.generate(710L + d, 1, 2, 1, 9, 20, d, Precision.F32, 2.0);
            calls.put("envelope D=" + d, l -> l.sinks().flashAttnSinks(t(in.q(), l), t(in.k(), l), t(in.v(), l),
                    SinksRun.sinks(in.sinks(), l.device()), null, 5).toFloatArray());
        }
        int[][] sequences = {{5, 8}, {1, 6}, {7, 7}, {0, 4}, {4, 11}, {9, 40}};
        for (int window : new int[] {0, 3}) {
            calls.put("varlen w=" + window, l -> {
                RaceClaims.Packed p = RaceClaims.Packed.of(600L + window, sequences, 4, 2, 16, l.device());
                return l.sinks().sinksAttnVarlen(p.q(), p.k(), p.v(), p.sinks(), p.cuQ(), p.cuK(), window)
                        .toFloatArray();
            });
        }
        SinksInputs masked = SinksInputs.generate(9103, 2, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        double[][][][] doc = MaskNeverDroppedTest.documentMask(2);
        calls.put("masked unfused", l -> l.sinks().sinksAttnUnfused(t(masked.q(), l), t(masked.k(), l),
                t(masked.v(), l), SinksRun.sinks(masked.sinks(), l.device()), SinksRun.tensor(doc, DType.F32,
                        l.device()), 16).toFloatArray());
        SplittableRandom rng = Streams.named(81, "logits");
        float[] logits = new float[2 * 3 * 4 * 9];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (2 * rng.nextGaussian());
        }
        calls.put("softmax", l -> l.sinks().softmaxWithSinks(Tensor.of(logits, DType.F32, l.device(), 2, 3, 4, 9),
                Tensor.of(new float[] {0.5f, -1.25f, 2f}, DType.F32, l.device(), 3), null).toFloatArray());
        for (int tk : new int[] {1025, 1280}) {
            SinksInputs in = SinksInputs.generate(1500L + tk, 1, 2, 1, 1, tk, 64, Precision.F32, 2.0);
            calls.put("split-K decode tk=" + tk, l -> l.sinks().flashAttnSinks(t(in.q(), l), t(in.k(), l),
                    t(in.v(), l), SinksRun.sinks(in.sinks(), l.device()), null, tk - 300).toFloatArray());
            float[] mask = new float[tk];
            for (int c = 250; c < 262; c++) {
                mask[c] = Float.NEGATIVE_INFINITY;
            }
            calls.put("union decode tk=" + tk, l -> l.sinks().attendMasked(t(in.q(), l), t(in.k(), l), t(in.v(), l),
                    Tensor.of(mask, DType.F32, l.device(), 1, 1, 1, tk), null));
        }
        // GQA: several query heads per KV head, prefill and split-K decode.
        for (int[] g : new int[][] {{16, 2}, {64, 8}}) {
            SinksInputs pre = SinksInputs.generate(2700L + g[0], 1, g[0], g[1], 9, 24, 64, Precision.F32, 2.0);
            calls.put("gqa " + g[0] + "/" + g[1] + " fused", l -> l.sinks().flashAttnSinks(t(pre.q(), l),
                    t(pre.k(), l), t(pre.v(), l), SinksRun.sinks(pre.sinks(), l.device()), null, 0).toFloatArray());
            SinksInputs dec = SinksInputs.generate(2800L + g[0], 1, g[0], g[1], 1, 1030, 64, Precision.F32, 2.0);
            calls.put("gqa " + g[0] + "/" + g[1] + " split-K", l -> l.sinks().flashAttnSinks(t(dec.q(), l),
                    t(dec.k(), l), t(dec.v(), l), SinksRun.sinks(dec.sinks(), l.device()), null, 0).toFloatArray());
        }
        return calls;
    }

    static Tensor t(double[][][][] x, Lane l) {
        return SinksRun.tensor(x, DType.F32, l.device());
    }

    /**
     * Every claim call through the checked lane and the plain library: output bits compared per call (the evidence
     * line sums the differing elements). Control: the plain build's output with one q element moved by one ulp
     * differs from the checked build's (a one-ulp change anywhere in a computation shows in these comparisons).
     */
    static void sameBits(NativeSinks.Dialect dialect, Evidence ev) {
        sameBits(dialect, ev, plain(dialect), "checked_vs_plain");
    }

    /** {@link #sameBits(NativeSinks.Dialect, Evidence)} against any other build {@code plain} of the same source. */
    static void sameBits(NativeSinks.Dialect dialect, Evidence ev, Lane plain, String what) {
        Lane checked = checked(dialect);
        Evidence e = ev.backend(checked.name());
        e.seed(310);
        NativeSinks.Dialect d = dialect;
        List<String> kernels = List.of(d.fused, d.varlen, d.scores, d.softmax, d.pv, d.splitPartial, d.splitReduce);
        Map<String, Long> before = new LinkedHashMap<>();
        for (String k : kernels) {
            before.put(k, plain.runner().races(k).launches());
        }
        long differing = 0;
        long compared = 0;
        String first = "";
        for (Map.Entry<String, Function<Lane, float[]>> call : claimCalls(dialect).entrySet()) {
            float[] a = call.getValue().apply(checked);
            float[] b = call.getValue().apply(plain);
            assertEquals(a.length, b.length, call.getKey());
            long n = Diff.bitsDiffering(a, b);
            if (n > 0 && first.isEmpty()) {
                first = " first: " + call.getKey();
            }
            differing += n;
            compared += a.length;
        }
        e.degeneracy("outputs_compared", compared, Comparison.GT, 100_000, compared + " output elements");
        for (String k : kernels) {
            long launched = plain.runner().races(k).launches() - before.get(k);
            e.degeneracy("plain_launches[" + k + "]", launched, Comparison.GT, 0, launched + " launches");
        }
        e.checkBitIdentical("bits_differing_" + what + first, differing);
        SinksInputs in = SinksInputs.generate(334, 2, 6, 2, 24, 40, 64, Precision.F32, 2.0);
        float[] ref = checked.sinks().flashAttnSinks(t(in.q(), checked), t(in.k(), checked), t(in.v(), checked),
                SinksRun.sinks(in.sinks(), checked.device()), null, 0).toFloatArray();
        Tensor nudged = t(in.q(), plain);
        nudged.set(Math.nextUp(nudged.get(0, 0, 5, 3)), 0, 0, 5, 3);
        float[] moved = plain.sinks().flashAttnSinks(nudged, t(in.k(), plain), t(in.v(), plain),
                SinksRun.sinks(in.sinks(), plain.device()), null, 0).toFloatArray();
        e.controlAtLeast("bits_differing_with_one_q_element_one_ulp_up", Diff.bitsDiffering(ref, moved), 1);
    }

    @Test
    @Claim("N5")
    void cudaCheckedAndPlainBuildsGiveTheSameBitsOnTheClaimInputs(Evidence ev) {
        sameBits(NativeSinks.Dialect.CUDA, ev);
    }

    @Test
    @Claim("N5")
    void metalCheckedAndPlainBuildsGiveTheSameBitsOnTheClaimInputs(Evidence ev) {
        sameBits(NativeSinks.Dialect.METAL, ev);
    }

    /**
     * The E2 pitfall at unit level: {@code (lane < n) ? partial[lane] : 0} on a shared float holding 2.75 is a float
     * on the device (2.75, never the int 2); {@code auto b = partial[lane]} is a float copy; {@code max(partial[lane],
     * 0.f)} and a read through {@code &partial[lane]} give the element (fidelity.cu / fidelity.metal, checked_types).
     */
    @Test
    @Claim("N5")
    void aCheckedSharedElementHasTheDeviceTypeInBothDialects(Evidence ev) {
        for (EmuRunner runner : List.of(WarpSemanticsTest.cuda(), WarpSemanticsTest.metal())) {
            Evidence e = ev.backend(runner.lane().startsWith("cuda") ? "cuda-emu" : "metal-emu");
            e.seed(20);
            DeviceBuffer out = DeviceBuffer.output("out", 32 * 4);
            runner.run(List.of(new KernelLaunch("checked_types", new int[] {1, 1, 1}, new int[] {32, 1, 1},
                    List.of(KernelArg.of(out), KernelArg.i32(20)))));
            float[] got = out.floats();
            String[] forms = {"ternary_with_int_zero", "auto_copy_plus_half", "max_with_float_zero", "address_of"};
            for (int k = 0; k < 4; k++) {
                float[] want = new float[32];
                float[] form = new float[32];
                for (int lane = 0; lane < 32; lane++) {
                    want[lane] = k == 0 ? (lane < 20 ? 2.75f : 0f) : k == 1 ? 3.25f : 2.75f;
                    form[lane] = got[lane * 4 + k];
                }
                e.checkBitIdentical("bits_differing_from_the_device_type[" + forms[k] + "]",
                        Diff.bitsDiffering(want, form));
            }
            // Control: what the int conversion of the old proxy gave (2, not 2.75) is what this comparison rejects.
            float[] truncated = new float[32];
            float[] ternary = new float[32];
            for (int lane = 0; lane < 32; lane++) {
                truncated[lane] = lane < 20 ? 2f : 0f;
                ternary[lane] = got[lane * 4];
            }
            e.controlAtLeast("bits_differing_from_the_int_truncation", Diff.bitsDiffering(truncated, ternary), 1);
        }
    }
}
