package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * Bad input on the native lanes: a deliberately bad launch on an emulated lane (a buffer shorter than the kernel is
 * told, a block the kernel was not written for, an impossible block, an unknown kernel, a wrong argument list) fails
 * loudly with a named error and leaves the JVM and the lane working; the device lanes that cannot run here fail
 * with their probe's reason, never a crash.
 */
class NativeFaultsTest {

    static Stream<Backend> emulated() {
        return Stream.of(Backend.cudaEmu(), Backend.metalEmu());
    }

    static EmuRunner runner(Backend lane) {
        return (EmuRunner) switch (lane) {
            case CudaEmu c -> c.runner();
            case MetalEmu m -> m.runner();
            default -> throw new IllegalArgumentException(lane + " is not emulated");
        };
    }

    /** The fused kernel's launch on this lane for B=1, Hq=2, Hkv=1, tq=9, tk=20, D=64, with {@code block} threads. */
    record Fused(KernelLaunch launch, DeviceBuffer k, DeviceBuffer status) {
        static Fused of(Backend lane, int threads) {
            int tq = 9;
            int tk = 20;
            int d = 64;
            DeviceBuffer q = DeviceBuffer.input("q", ramp(2 * tq * d));
            DeviceBuffer k = DeviceBuffer.input("k", ramp(tk * d));
            DeviceBuffer v = DeviceBuffer.input("v", ramp(tk * d));
            DeviceBuffer sinks = DeviceBuffer.input("sinks", new float[] {0.5f, -0.5f});
            DeviceBuffer out = DeviceBuffer.output("out", 2 * tq * d);
            DeviceBuffer status = DeviceBuffer.status();
            List<KernelArg> args = new ArrayList<>(List.of(KernelArg.of(q), KernelArg.of(k), KernelArg.of(v),
                    KernelArg.of(sinks)));
            boolean cuda = lane instanceof CudaEmu;
            args.add(cuda ? new KernelArg.Null() : KernelArg.of(DeviceBuffer.input("mask", new float[1])));
            args.add(KernelArg.of(out));
            args.add(KernelArg.of(status));
            float scale = NativeSinks.scale(d);
            if (cuda) {
                args.addAll(List.of(KernelArg.i32(1), KernelArg.i32(2), KernelArg.i32(1), KernelArg.i32(tq),
                        KernelArg.i32(tk), KernelArg.i32(d), KernelArg.i32(0), KernelArg.f32(scale)));
            } else {
                args.add(new KernelArg.Params(new NativeSinks.Params(1, 2, 1, tq, tk, d, 0, false, 0, 0, 1, 1, 1,
                        false, scale).words()));
            }
            String kernel = cuda ? "flash_attn_sinks" : "flash_attn_sinks_metal";
            return new Fused(new KernelLaunch(kernel, new int[] {2, 2, 1}, new int[] {threads, 1, 1}, args), k,
                    status);
        }
    }

    static float[] ramp(int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) Math.sin(i * 0.37);
        }
        return x;
    }

    @ParameterizedTest
    @MethodSource("emulated")
    void aBufferShorterThanTheKernelReadsIsAnOutOfBoundsFault(Backend lane) {
        Fused f = Fused.of(lane, 128);
        NativeKernelException x = assertThrows(NativeKernelException.class,
                () -> runner(lane).runWithLengths(f.launch(), Map.of(f.k(), f.k().length() - 64)));
        assertEquals("EMU_OUT_OF_BOUNDS", x.errorName(), x.getMessage());
        // Which thread faults first is a race; every candidate reads k past the length the kernel was given.
        assertTrue(x.getMessage().contains("out-of-bounds access k["), x.getMessage());
        assertTrue(x.getMessage().contains("(length " + (f.k().length() - 64) + ")"), x.getMessage());
        assertTrue(x.getMessage().startsWith(lane.name() + ": " + f.launch().kernel()), x.getMessage());
        // The same launch with honest lengths runs, and the lane still works afterwards.
        runner(lane).runWithLengths(f.launch(), Map.of());
        assertEquals(0, f.status().ints()[0]);
    }

    @ParameterizedTest
    @MethodSource("emulated")
    void aBlockTheKernelWasNotWrittenForIsRefusedByTheKernel(Backend lane) {
        Fused f = Fused.of(lane, 64);
        runner(lane).run(List.of(f.launch()));
        assertEquals(NativeSinks.STATUS_LAUNCH_CONFIG, f.status().ints()[0], "the kernel's launch-config guard");
    }

    @ParameterizedTest
    @MethodSource("emulated")
    void anImpossibleLaunchUnknownKernelOrWrongArgumentsFailByName(Backend lane) {
        Fused big = Fused.of(lane, 2048);
        NativeKernelException tooBig = assertThrows(NativeKernelException.class,
                () -> runner(lane).run(List.of(big.launch())));
        assertEquals("EMU_INVALID_LAUNCH_CONFIG", tooBig.errorName(), tooBig.getMessage());
        NativeKernelException unknown = assertThrows(NativeKernelException.class,
                () -> runner(lane).run(List.of(new KernelLaunch("no_such_kernel", new int[] {1, 1, 1},
                        new int[] {1, 1, 1}, List.of()))));
        assertEquals("EMU_UNKNOWN_KERNEL", unknown.errorName(), unknown.getMessage());
        Fused f = Fused.of(lane, 128);
        List<KernelArg> fewer = f.launch().args().subList(0, f.launch().args().size() - 1);
        NativeKernelException signature = assertThrows(NativeKernelException.class, () -> runner(lane).run(List.of(
                new KernelLaunch(f.launch().kernel(), f.launch().grid(), f.launch().block(), fewer))));
        assertEquals("EMU_BAD_SIGNATURE", signature.errorName(), signature.getMessage());
        List<KernelArg> swapped = new ArrayList<>(f.launch().args());
        swapped.set(0, KernelArg.i32(7));
        NativeKernelException kind = assertThrows(NativeKernelException.class, () -> runner(lane).run(List.of(
                new KernelLaunch(f.launch().kernel(), f.launch().grid(), f.launch().block(), swapped))));
        assertTrue(kind.getMessage().contains("argument 0: expected float buffer"), kind.getMessage());
    }

    @Test
    void theDeviceLanesThatCannotRunHereSayWhyAndNeverCrash() {
        for (Backend lane : List.of(Backend.cuda(), Backend.metal())) {
            if (lane.unavailable().isEmpty()) {
                continue;
            }
            String reason = lane.unavailable().get();
            Tensor q = Tensor.zeros(DType.F32, lane.device(), 1, 2, 3, 64);
            Tensor k = Tensor.zeros(DType.F32, lane.device(), 1, 1, 3, 64);
            Tensor sinks = Tensor.zeros(DType.F32, lane.device(), 2);
            LaneUnavailableException x = assertThrows(LaneUnavailableException.class,
                    () -> lane.flashAttnSinks(q, k, k, sinks, null, 0));
            assertEquals("backend " + lane.name() + " is unavailable here: " + reason, x.getMessage());
            assertEquals(reason, lane.unavailable().get(), "the probe's reason is cached");
        }
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("mac")) {
            assertTrue(Backend.metal().unavailable().orElse("").startsWith("not macOS"),
                    Backend.metal().unavailable().toString());
        }
    }

    @Test
    void aNativeLaneRefusesTensorsOfAnotherDeviceFamily() {
        Tensor q = Tensor.zeros(DType.F32, Device.CPU, 1, 2, 3, 64);
        Tensor k = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 3, 64);
        Tensor sinks = Tensor.zeros(DType.F32, Device.CPU, 2);
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> Backend.cudaEmu().flashAttnSinks(q, k, k, sinks, null, 0));
        assertTrue(x.getMessage().startsWith("q.device = cpu: must be a cuda device for the cuda-emu backend"),
                x.getMessage());
    }
}
