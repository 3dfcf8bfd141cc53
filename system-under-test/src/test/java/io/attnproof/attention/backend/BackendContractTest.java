package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend package's small contracts: lane lookup and availability, the probe's cached reason (through a fake
 * probe), buffer descriptions, the native file locations, and the emulation library's loader and race report.
 */
class BackendContractTest {
    static final Device CUDA = Device.cuda(0);

    static KernelRunner fakeRunner() {
        return new NativeSinksHostContractTest.FakeRunner();
    }

    // ---- lanes ----

    @Test
    void everyLaneIsFoundByItsOwnNameAndAnUnknownNameIsRefused() {
        for (Backend b : Backend.all()) {
            assertSame(b, Backend.named(b.name()));
            assertEquals(b.name(), b.toString());
        }
        assertSame(Backend.cudaEmu(), Backend.named("cuda-emu"));
        assertEquals("cpu", Backend.cpu().toString());
        assertEquals("cuda-emu", Backend.cudaEmu().toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Backend.named("tpu"));
        assertEquals("backend = tpu: must be one of cpu, cuda-emu, cuda-emu-fma, metal-emu, cuda, metal", e.getMessage());
    }

    @Test
    void onlyTheFmaBuildIsContracted() {
        assertFalse(Backend.cudaEmu().contracted());
        assertTrue(Backend.cudaEmuFma().contracted());
    }

    @Test
    void requireAvailableThrowsExactlyWhenTheProbeGaveAReason() {
        Backend.cpu().requireAvailable(); // the Java lane runs everywhere
        Backend metal = Backend.metal();
        Optional<String> reason = metal.unavailable();
        if (reason.isPresent()) {
            LaneUnavailableException e = assertThrows(LaneUnavailableException.class, metal::requireAvailable);
            assertEquals("metal", e.lane());
            assertEquals(reason.get(), e.reason());
            assertEquals("backend metal is unavailable here: " + reason.get(), e.getMessage());
        } else {
            metal.requireAvailable();
        }
    }

    @Test
    void laneUnavailableCarriesItsLaneAndReason() {
        LaneUnavailableException e = new LaneUnavailableException("cuda", "no driver");
        assertEquals("cuda", e.lane());
        assertEquals("no driver", e.reason());
        assertEquals("backend cuda is unavailable here: no driver", e.getMessage());
    }

    @Test
    void theJavaLaneTakesTheMetalKernelOnlyForAMetalLabelledCall() {
        Tensor mq = Tensor.zeros(DType.F32, Device.metal(0), 1, 1, 1, 4);
        Tensor mk = Tensor.zeros(DType.F32, Device.metal(0), 1, 1, 2, 4);
        IllegalArgumentException metal = assertThrows(IllegalArgumentException.class,
                () -> Backend.cpu().flashAttnSinks(mq, mk, mk, Tensor.zeros(DType.F32, Device.metal(0), 1), null, 0));
        assertEquals("head_dim = 4: must be in flash_attn_sinks_metal's envelope [64, 80, 96, 112, 128, 192, 256]",
                metal.getMessage());
        Tensor q = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 1, 4);
        Tensor k = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 2, 4);
        IllegalArgumentException cpu = assertThrows(IllegalArgumentException.class,
                () -> Backend.cpu().flashAttnSinks(q, k, k, Tensor.zeros(DType.F32, Device.CPU, 1), null, 0));
        assertEquals("head_dim = 4: must be in flash_attn_sinks's envelope [64, 80, 96, 112, 128, 192, 256] or 512",
                cpu.getMessage());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> Backend.cpu().flashAttnSinks(null, k, k, Tensor.zeros(DType.F32, Device.CPU, 1), null, 0));
        assertEquals("q = null: must be present", none.getMessage());
    }

    // ---- buffers ----

    @Test
    void buffersSayWhetherTheyAreReadBackAndDescribeThemselves() {
        assertFalse(DeviceBuffer.input("q", new float[3]).readBack());
        assertFalse(DeviceBuffer.input("cu", new int[2]).readBack());
        assertFalse(DeviceBuffer.scratch("scores", 4).readBack());
        assertTrue(DeviceBuffer.output("out", 5).readBack());
        assertTrue(DeviceBuffer.status().readBack());
        assertEquals("q[3 f32]", DeviceBuffer.input("q", new float[3]).toString());
        assertEquals("status[1 i32]", DeviceBuffer.status().toString());
    }

    // ---- the probe ----

    static NativeLane lane(Supplier<KernelRunner> probe) {
        return new NativeLane("fake", CUDA, NativeSinks.Dialect.CUDA, probe);
    }

    static String reasonOf(Throwable t) {
        return lane(() -> {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw (Error) t;
        }).unavailable().orElseThrow();
    }

    @Test
    void aFreshLaneProbesOnceAndHandsOutItsRunner() {
        int[] probes = {0};
        KernelRunner runner = fakeRunner();
        NativeLane lane = lane(() -> {
            probes[0]++;
            return runner;
        });
        assertEquals(Optional.empty(), lane.unavailable());
        assertNotNull(lane.sinks());
        assertSame(runner, lane.runner());
        assertEquals(1, probes[0]);
        assertEquals("fake", lane.name());
        assertEquals(CUDA, lane.device());
        assertEquals(Device.Kind.CUDA, lane.dispatchKind());
    }

    @Test
    void aFailedProbeBecomesItsOneLineReason() {
        assertEquals("no driver", reasonOf(new LaneUnavailableException("fake", "no driver")));
        assertEquals("first line", reasonOf(new IllegalStateException("first line\nsecond line")));
        assertEquals("IllegalStateException: null", reasonOf(new IllegalStateException()));
        assertEquals("UnsatisfiedLinkError: no jcuda in java.library.path",
                reasonOf(new UnsatisfiedLinkError("no jcuda in java.library.path")));
        String exactly400 = "x".repeat(400);
        assertEquals(exactly400, reasonOf(new IllegalStateException(exactly400)));
        assertEquals("y".repeat(400) + "...", reasonOf(new IllegalStateException("y".repeat(401))));
        NativeLane down = lane(() -> {
            throw new IllegalStateException("library missing");
        });
        LaneUnavailableException e = assertThrows(LaneUnavailableException.class, down::sinks);
        assertEquals("backend fake is unavailable here: library missing", e.getMessage());
    }

    // ---- native files ----

    static <T> T withDir(String dir, Supplier<T> body) {
        String before = System.getProperty(NativeFiles.DIR_PROPERTY);
        try {
            System.setProperty(NativeFiles.DIR_PROPERTY, dir);
            return body.get();
        } finally {
            if (before == null) {
                System.clearProperty(NativeFiles.DIR_PROPERTY);
            } else {
                System.setProperty(NativeFiles.DIR_PROPERTY, before);
            }
        }
    }

    @Test
    void theNativeDirectoryIsThePropertyUnlessBlank(@TempDir Path tmp) {
        assertEquals(tmp, withDir(tmp.toString(), NativeFiles::dir));
        Path fallback = withDir(" ", NativeFiles::dir);
        assertTrue(fallback.equals(Path.of("target", "native"))
                || fallback.equals(Path.of("system-under-test", "target", "native")), fallback.toString());
    }

    @Test
    void thePtxIsTheBuiltOneWhenPresentElseTheCheckedInFallback(@TempDir Path tmp) throws IOException {
        Path built = tmp.resolve(NativeFiles.BUILT_PTX);
        Files.createDirectories(built.getParent());
        Files.writeString(built, "// built ptx", StandardCharsets.UTF_8);
        NativeFiles.Ptx ptx = withDir(tmp.toString(), NativeFiles::ptx);
        assertEquals(built.toString(), ptx.source());
        assertArrayEquals("// built ptx".getBytes(StandardCharsets.UTF_8), ptx.text());
        Path empty = Files.createDirectory(tmp.resolve("empty"));
        NativeFiles.Ptx fallback = withDir(empty.toString(), NativeFiles::ptx);
        assertEquals("classpath:/native/cuda/sinks_attn.ptx", fallback.source());
        assertTrue(fallback.text().length > 0);
    }

    // ---- the emulation library ----

    static Path cudaEmuLibrary() {
        Path lib = NativeFiles.library(NativeFiles.CUDA_EMU_LIBRARY);
        Assumptions.assumeTrue(Files.isRegularFile(lib), () -> "cuda-emu skipped: " + lib + " is not built here");
        return lib;
    }

    @Test
    void theLoaderRefusesAMissingOrForeignLibraryByName(@TempDir Path tmp) {
        Path missing = tmp.resolve("libnone.so");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> EmuRunner.load("cuda-emu", missing));
        assertEquals("the cuda-emu library " + missing + " does not exist (the Maven build compiles it with g++ through"
                + " native/emu/build.sh)", e.getMessage());
        // A real shared library that is not an emulation library: the JDK's own libjava.
        Path foreign = Path.of(System.getProperty("java.home"), "lib", System.mapLibraryName("java"));
        Assumptions.assumeTrue(Files.isRegularFile(foreign), () -> "no " + foreign + " in this JDK");
        IllegalStateException notEmu = assertThrows(IllegalStateException.class,
                () -> EmuRunner.load("cuda-emu", foreign));
        assertEquals(foreign + " has no attnproof_emu_launch: not an attnproof emulation library", notEmu.getMessage());
        Path lib = cudaEmuLibrary();
        IllegalStateException wrong = assertThrows(IllegalStateException.class, () -> EmuRunner.load("metal-emu", lib));
        assertEquals(lib + " is the cuda-emu library, not metal-emu's", wrong.getMessage());
    }

    @Test
    void aLoadedLibraryServesItsLaneWithTwoGridStrideBlocksUnlessToldOtherwise() {
        EmuRunner runner = EmuRunner.load("cuda-emu", cudaEmuLibrary());
        assertEquals("cuda-emu", runner.lane());
        assertEquals(2, runner.gridStrideBlocks());
        assertEquals(1, runner.withGridStrideBlocks(1).gridStrideBlocks());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> runner.withGridStrideBlocks(0));
        assertEquals("blocks = 0: must be >= 1", e.getMessage());
    }

    @Test
    void theRaceReportOfARacyLaunchNamesTheKernel() {
        EmuRunner runner = EmuRunner.load("cuda-emu", cudaEmuLibrary());
        assertEquals("", runner.races("no_such_kernel").firstReport());
        DeviceBuffer out = DeviceBuffer.input("out", new int[64]);
        assertThrows(NativeKernelException.class, () -> runner.run(List.of(new KernelLaunch("attnproof_race_probe",
                new int[] {1, 1, 1}, new int[] {64, 1, 1}, List.of(KernelArg.of(out), KernelArg.i32(0))))));
        EmuRunner.RaceStats stats = runner.races("attnproof_race_probe");
        assertTrue(stats.races() >= 1, stats.toString());
        assertTrue(stats.firstReport().contains("attnproof_race_probe"), stats.toString());
    }
}
