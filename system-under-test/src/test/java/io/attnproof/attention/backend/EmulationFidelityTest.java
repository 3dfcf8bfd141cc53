package io.attnproof.attention.backend;

import io.attnproof.attention.sinks.MaskNeverDroppedTest;
import io.attnproof.attention.sinks.SinksRun;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * N2: the emulation fails where hardware would. The Metal host's argument order against the kernels'
 * {@code [[buffer(n)]]} attributes (which the metal-emu lane binds by, as Metal does); CUDA's and Metal's launch
 * limits (threads per block, grid extents, static shared memory) refused with an error naming the limit; and the
 * grid-stride kernels giving the same bits on the grid the real lanes launch (up to 1024 blocks) as on the emulated
 * lanes' reduced grid. The FMA-contraction build (cuda-emu-fma) is a lane of X1 ({@link CrossLaneTest}).
 */
class EmulationFidelityTest {

    /** Every launch a {@link NativeSinks} describes, recorded instead of run (outputs stay zero, status 0). */
    static final class Recorder implements KernelRunner {
        final List<KernelLaunch> launches = new ArrayList<>();

        @Override
        public String lane() {
            return "recorder";
        }

        @Override
        public int gridStrideBlocks() {
            return 2;
        }

        @Override
        public void run(List<KernelLaunch> l) {
            launches.addAll(l);
        }
    }

    /** Per Metal kernel, the parameter bound to each buffer index, parsed from the MSL source. */
    static Map<String, Map<Integer, String>> metalBindings(String msl) {
        Map<String, Map<Integer, String>> out = new LinkedHashMap<>();
        Matcher k = Pattern.compile("^kernel\\s+void\\s+(\\w+)\\s*\\((.*?)\\)\\s*\\{", Pattern.MULTILINE
                | Pattern.DOTALL).matcher(msl);
        while (k.find()) {
            Map<Integer, String> params = new LinkedHashMap<>();
            Matcher b = Pattern.compile("(\\w+)\\s*\\[\\[\\s*buffer\\s*\\(\\s*(\\d+)\\s*\\)\\s*\\]\\]").matcher(k.group(2));
            while (b.find()) {
                params.put(Integer.parseInt(b.group(2)), b.group(1));
            }
            out.put(k.group(1), params);
        }
        return out;
    }

    /** The kernel parameter a host argument is meant for: its buffer's name (the params block is {@code p}). */
    static String hostName(KernelArg a) {
        return switch (a) {
            case KernelArg.Buffer(DeviceBuffer b) -> switch (b.name()) {
                case "cu_seqlens_q" -> "cu_q";
                case "cu_seqlens_k" -> "cu_k";
                default -> b.name();
            };
            case KernelArg.Params p -> "p";
            default -> "(scalar " + a + ")";
        };
    }

    /**
     * Every Metal launch the host makes: fused, varlen, the unfused triple (masked and not), softmax alone, and the
     * split-K pair of a long decode.
     */
    static List<KernelLaunch> metalHostLaunches() {
        Recorder r = new Recorder();
        NativeSinks sinks = new NativeSinks("recorder", Device.metal(0), NativeSinks.Dialect.METAL, r);
        Device dev = Device.metal(0);
        SinksInputs in = SinksInputs.generate(1, 2, 4, 2, 5, 9, 64, Precision.F32, 1.0);
        Tensor q = SinksRun.tensor(in.q(), DType.F32, dev);
        Tensor k = SinksRun.tensor(in.k(), DType.F32, dev);
        Tensor s = SinksRun.sinks(in.sinks(), dev);
        sinks.flashAttnSinks(q, k, k, s, null, 0);
        sinks.sinksAttnUnfused(q, k, k, s, Tensor.zeros(DType.F32, dev, 5, 9), 3);
        sinks.softmaxWithSinks(Tensor.zeros(DType.F32, dev, 1, 4, 2, 3), s, null);
        Tensor pq = Tensor.zeros(DType.F32, dev, 6, 4, 64);
        Tensor pk = Tensor.zeros(DType.F32, dev, 9, 2, 64);
        sinks.sinksAttnVarlen(pq, pk, pk, s, new int[] {0, 2, 6}, new int[] {0, 4, 9}, 0);
        SinksInputs longKv = SinksInputs.generate(2, 1, 4, 2, 1, 1024, 64, Precision.F32, 1.0);
        Tensor lk = SinksRun.tensor(longKv.k(), DType.F32, dev);
        sinks.flashAttnSinks(SinksRun.tensor(longKv.q(), DType.F32, dev), lk, lk, s, null, 0);
        return r.launches;
    }

    /** Host arguments at an index whose [[buffer(n)]] parameter has another name (or no parameter at all). */
    static long misbound(KernelLaunch l, Map<Integer, String> bindings) {
        long bad = 0;
        for (int i = 0; i < l.args().size(); i++) {
            String host = hostName(l.args().get(i));
            String param = bindings.get(i);
            // The unfused sequence hands its scores buffer to softmax_with_sinks_metal as the logits.
            boolean alias = "logits".equals(param) && "scores".equals(host);
            bad += host.equals(param) || alias ? 0 : 1;
        }
        return bad + Math.max(0, bindings.size() - l.args().size());
    }

    @Test
    @Claim("N2")
    void theMetalHostBindsEveryArgumentAtItsBufferIndex(Evidence ev) {
        ev.seed(1);
        String msl = new String(NativeFiles.resource(NativeFiles.METAL_SOURCE_RESOURCE), StandardCharsets.UTF_8);
        Map<String, Map<Integer, String>> bindings = metalBindings(msl);
        List<KernelLaunch> launches = metalHostLaunches();
        ev.degeneracy("kernels_with_buffer_attributes", bindings.values().stream().filter(m -> !m.isEmpty()).count(),
                Comparison.EQ, 7, "kernels " + bindings.keySet());
        ev.degeneracy("host_launches_recorded", launches.size(), Comparison.GE, 6, launches.toString());
        long launchedKernels = launches.stream().map(KernelLaunch::kernel).distinct().count();
        ev.degeneracy("kernels_launched_by_the_host", launchedKernels, Comparison.EQ, 7, "every Metal kernel");
        long misbound = 0;
        long swappedMisbound = 0;
        for (KernelLaunch l : launches) {
            Map<Integer, String> b = bindings.getOrDefault(l.kernel(), Map.of());
            misbound += misbound(l, b);
            // Control: the same launch with its first two arguments swapped (the bug a positional binder hides).
            List<KernelArg> swapped = new ArrayList<>(l.args());
            swapped.set(0, l.args().get(1));
            swapped.set(1, l.args().get(0));
            swappedMisbound += misbound(new KernelLaunch(l.kernel(), l.grid(), l.block(), swapped), b);
        }
        ev.checkBitIdentical("host_arguments_at_another_parameters_buffer_index", misbound);
        ev.controlAtLeast("arguments_misbound_when_the_host_swaps_two", swappedMisbound, 1);
    }

    static Stream<Backend> emulated() {
        return Stream.of(Backend.cudaEmu(), Backend.metalEmu());
    }

    @ParameterizedTest
    @MethodSource("emulated")
    @Claim("N2")
    void launchLimitsAreRefusedNamingTheLimit(Backend lane, Evidence ev) {
        Lanes.assumeAvailable(lane);
        Evidence e = ev.backend(lane.name());
        e.seed(2);
        EmuRunner runner = NativeFaultsTest.runner(lane);
        boolean cuda = lane instanceof CudaEmu;
        String api = cuda ? "CUDA" : "Metal";
        List<String> missing = new ArrayList<>();
        // Threads per block: 1025.
        expectLimit(runner, probe(new int[] {1, 1, 1}, new int[] {1025, 1, 1}, 0),
                api + "'s limit of 1024 threads per block", missing);
        // Static shared memory: 49 KiB.
        expectLimit(runner, probe(new int[] {1, 1, 1}, new int[] {32, 1, 1}, 1),
                api + "'s limit of " + (cuda ? 48 : 32) * 1024 + " bytes", missing);
        if (cuda) {
            // grid.y and grid.z: 65536 blocks (a Hq or B too large for the fused grid).
            expectLimit(runner, probe(new int[] {1, 65536, 1}, new int[] {32, 1, 1}, 0),
                    "grid.y = 65536 exceeds CUDA's limit of 65535", missing);
            expectLimit(runner, probe(new int[] {1, 1, 65536}, new int[] {32, 1, 1}, 0),
                    "grid.z = 65536 exceeds CUDA's limit of 65535", missing);
        }
        e.checkEqual("launch_limits_not_refused_by_name " + missing, missing.size(), 0);
        // Control: the same probes inside the limits run.
        long ran = 0;
        for (KernelLaunch ok : List.of(probe(new int[] {1, 1, 1}, new int[] {1024, 1, 1}, 0),
                probe(new int[] {2, 3, 2}, new int[] {32, 1, 1}, 0))) {
            runner.run(List.of(ok));
            ran++;
        }
        e.controlAtLeast("launches_at_the_limits_that_ran", ran, 2);
    }

    static KernelLaunch probe(int[] grid, int[] block, int bigShared) {
        return new KernelLaunch("attnproof_shared_probe", grid, block,
                List.of(KernelArg.of(DeviceBuffer.input("out", new int[1])), KernelArg.i32(bigShared)));
    }

    static void expectLimit(EmuRunner runner, KernelLaunch l, String words, List<String> missing) {
        try {
            runner.run(List.of(l));
            missing.add(l + " ran");
        } catch (NativeKernelException x) {
            if (!x.errorName().equals("EMU_INVALID_LAUNCH_CONFIG") || !x.getMessage().contains(words)) {
                missing.add(l + ": " + x.getMessage());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("emulated")
    @Claim("N2")
    void gridStrideKernelsGiveTheSameBitsOnTheRealGrid(Backend lane, Evidence ev) {
        Lanes.assumeAvailable(lane);
        Evidence e = ev.backend(lane.name());
        e.seed(9103);
        EmuRunner reduced = NativeFaultsTest.runner(lane);
        EmuRunner real = reduced.withGridStrideBlocks(1024);
        NativeSinks.Dialect d = lane instanceof MetalEmu ? NativeSinks.Dialect.METAL : NativeSinks.Dialect.CUDA;
        NativeSinks small = new NativeSinks(lane.name(), lane.device(), d, reduced);
        NativeSinks full = new NativeSinks(lane.name(), lane.device(), d, real);
        SinksInputs in = SinksInputs.generate(9103, 2, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        Tensor q = SinksRun.tensor(in.q(), DType.F32, lane.device());
        Tensor k = SinksRun.tensor(in.k(), DType.F32, lane.device());
        Tensor v = SinksRun.tensor(in.v(), DType.F32, lane.device());
        Tensor s = SinksRun.sinks(in.sinks(), lane.device());
        Tensor mask = SinksRun.tensor(MaskNeverDroppedTest.documentMask(2), DType.F32, lane.device());
        long scores = 2L * 8 * 24 * 40;
        e.degeneracy("real_grid_blocks_over_reduced", Math.min(1024, (scores + 127) / 128), Comparison.GT, 2,
                "the scores kernel's real grid");
        float[] a = small.sinksAttnUnfused(q, k, v, s, mask, 16).toFloatArray();
        float[] b = full.sinksAttnUnfused(q, k, v, s, mask, 16).toFloatArray();
        e.checkBitIdentical("bits_reduced_vs_real_grid[unfused scores+softmax+pv]", Diff.bitsDiffering(a, b));
        // Control: another window on the real grid changes bits (the comparison sees the kernels' work).
        float[] c = full.sinksAttnUnfused(q, k, v, s, mask, 3).toFloatArray();
        e.controlAtLeast("bits_changed_by_window_3_instead_of_16", Diff.bitsDiffering(b, c), 1);
    }
}
