package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Claim N6, the front end itself (native/emu/frontend/cuda2emu.py): a construct the emulator cannot run faithfully is
 * refused at build time with {@code file:line: refused: <construct> (<why>)} and exit 3, one tiny source per
 * construct; a standard source's rewrites are logged with their lines, exactly; and that source, built and launched
 * through the prelude's runtime (cudaMalloc, a deduced template launch, extern __shared__ sized by the launch), gives
 * the sum it computes. SKIPs with the reason where libclang's Python bindings are missing.
 */
@Timeout(300)
class FrontEndTest {
    static final String RESOURCES = "src/test/resources/frontend/";

    void needsTheFrontEnd() {
        assumeTrue(FrontEnd.unavailableReason() == null, () -> "SKIP: " + FrontEnd.unavailableReason());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "inline_asm.cu | 3: refused: inline asm (PTX the emulator does not execute)",
        "wmma.cu       | 4: refused: wmma (tensor-core matrix fragments are not emulated);"
            + "5: refused: wmma (tensor-core matrix fragments are not emulated)",
        "cp_async.cu   | 4: refused: cp.async (asynchronous global-to-shared copies and their pipeline stages are not emulated);"
            + "5: refused: cp.async (asynchronous global-to-shared copies and their pipeline stages are not emulated);"
            + "6: refused: cp.async (asynchronous global-to-shared copies and their pipeline stages are not emulated)",
        "grid_sync.cu  | 4: refused: cooperative groups beyond a warp (grid-wide synchronisation: the emulator runs one block at a time)",
        "texture.cu    | 2: refused: texture fetch (textures and their sampling hardware are not emulated)",
        "surface.cu    | 2: refused: surface access (surfaces are not emulated)",
        "tiled_partition.cu | 4: refused: cooperative groups beyond a warp (thread-block groups are not emulated, use"
            + " __syncthreads);4: refused: cooperative groups beyond a warp (thread-block tiles are not emulated, use"
            + " __shfl_*_sync with a width)",
    })
    void aRefusedConstructFailsTheBuildNamingFileLineAndConstruct(String file, String lines, @TempDir Path tmp)
            throws Exception {
        needsTheFrontEnd();
        String source = RESOURCES + "refused/" + file;
        FrontEnd.Result r = FrontEnd.translate(Path.of(source), tmp.resolve("out.cpp"));
        StringBuilder expected = new StringBuilder();
        for (String line : lines.split(";")) expected.append(source).append(':').append(line).append('\n');
        assertEquals(3, r.code(), r.output());
        assertEquals(expected.toString(), r.output());
        assertEquals(false, Files.exists(tmp.resolve("out.cpp")), "a refused source writes no output");
    }

    @Test
    void everyRewriteIsLoggedWithItsLine(@TempDir Path tmp) throws Exception {
        needsTheFrontEnd();
        String source = RESOURCES + "standard.cu";
        FrontEnd.Result r = FrontEnd.translate(Path.of(source), tmp.resolve("standard.cpp"));
        assertEquals(0, r.code(), r.output());
        List<String> log = Files.readAllLines(tmp.resolve("standard.cpp.rewrites.txt"));
        assertEquals(List.of(
                source + ":5: __shared__ float file_tile[64] -> ::emu::shared_array<float, 64> (file scope: not counted against the limit)",
                source + ":8: parameter in: const T *__restrict -> ::emu::dptr<const T>",
                source + ":8: parameter out: T * -> ::emu::dptr<T>",
                source + ":9: __shared__ float partial[64] -> ::emu::shared_array<float, 64>",
                source + ":10: extern __shared__ float staged[] -> ::emu::dyn_shared_array<float> (sized by the launch)",
                source + ":23: launch block_sum<float><<<1, 64, 64 * sizeof(float), nullptr>>> -> ::emu::cuda_launch"),
                log);
        // The rewrite keeps every line where it was: the output is the prelude's 3 lines plus the source's lines.
        long sourceLines = Files.readAllLines(Path.of(source)).size();
        assertEquals(sourceLines + 4, Files.readAllLines(tmp.resolve("standard.cpp")).size());
    }

    @Test
    @Claim("N6")
    void aStandardSourceRunsWithADeducedLaunchAndDynamicSharedMemory(Evidence ev) throws Throwable {
        needsTheFrontEnd();
        Evidence e = ev.backend("cuda-emu");
        Path lib = FrontEnd.build(Path.of(RESOURCES + "standard.cu").toAbsolutePath(), "frontend_standard");
        Linker linker = Linker.nativeLinker();
        SymbolLookup l = SymbolLookup.libraryLookup(lib, Arena.global());
        var a = ValueLayout.ADDRESS;
        var i = ValueLayout.JAVA_INT;
        MethodHandle malloc = linker.downcallHandle(l.find("cudaMalloc").orElseThrow(),
                FunctionDescriptor.of(i, a, ValueLayout.JAVA_LONG));
        MethodHandle run = linker.downcallHandle(l.find("run_block_sum").orElseThrow(), FunctionDescriptor.of(i, a, a, i));
        for (int n : new int[] {50, 64, 1}) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment slot = arena.allocate(a);
                assertEquals(0, (int) malloc.invokeExact(slot, 4L * n));
                MemorySegment in = slot.get(a, 0).reinterpret(4L * n);
                assertEquals(0, (int) malloc.invokeExact(slot, 4L));
                MemorySegment out = slot.get(a, 0).reinterpret(4L);
                double expected = 0;
                for (int t = 0; t < n; t++) {
                    in.setAtIndex(ValueLayout.JAVA_FLOAT, t, t + 1);
                    expected += t + 1;
                }
                int rc = (int) run.invokeExact(in, out, n);
                e.checkEqual("cudaError[n=" + n + "]", rc, 0);
                e.checkEqual("sum_of_1.." + n, out.get(ValueLayout.JAVA_FLOAT, 0), expected);
            }
        }
    }

    /**
     * The same FA2 source nvcc compiles, unchanged (N6: no dialect): every kernel instantiation of the three dtypes
     * and seven head dims is a PTX entry. SKIPs where nvcc is absent (it runs regardless of libclang).
     */
    @Test
    @Claim("N6")
    void theFa2SourceCompilesUnchangedWithNvcc(Evidence ev, @TempDir Path tmp) throws Exception {
        Evidence e = ev.backend("cuda-emu");
        FrontEnd.Result which;
        try {
            which = FrontEnd.run(List.of("nvcc", "--version"), null);
        } catch (java.io.IOException notFound) {
            which = new FrontEnd.Result(127, notFound.getMessage());
        }
        if (which.code() != 0) {
            e.skipped("nvcc", "nvcc is not on PATH here: " + which.output().strip());
            org.junit.jupiter.api.Assumptions.abort("nvcc is not on PATH here");
        }
        Path ptx = tmp.resolve("fa2_sinks.ptx");
        FrontEnd.Result r = FrontEnd.run(List.of("nvcc", "-ptx", "-arch=sm_80", "-o", ptx.toString(),
                Fa2SinksEmuTest.SOURCE.toString()), null);
        e.checkEqual("nvcc_exit_code[fa2_sinks.cu -ptx -arch=sm_80]", r.code(), 0);
        long entries = Files.readAllLines(ptx).stream().filter(l -> l.contains(".entry ")).count();
        // 2 kernels x 3 dtypes x 7 head dims.
        e.checkEqual("ptx_entries[fa2_sinks.cu]", entries, 42);
    }
}
