package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.attnproof.attention.backend.MslFrontEnd.Arg;
import io.attnproof.attention.backend.MslFrontEnd.Launch;
import io.attnproof.fixtures.claim.Claim;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Claim N6 for MSL, the front end itself (native/emu/frontend/msl2emu.py): a construct the emulator cannot run
 * faithfully is refused at build time with {@code file:line: refused: <construct> (<why>)} and exit 3, one tiny
 * source per construct; a standard source's rewrites and kernel table are logged with their lines, exactly; and that
 * source (a template over float/half/bfloat instantiated with [[host_name]], dynamic threadgroup memory, simd_sum,
 * simd_max, as_type, fast::exp, unqualified min/max, device-pointer arithmetic, five position attributes), built and
 * launched with the host's choices as data, gives the sums and maxima it computes; a host that binds its
 * threadgroup memory or its buffers wrongly fails the launch naming the parameter. SKIPs with the reason where
 * libclang's Python bindings are missing.
 */
@Timeout(300)
class MslFrontEndTest {
    static final String RESOURCES = "src/test/resources/frontend-msl/";

    static void needsTheFrontEnd() {
        assumeTrue(FrontEnd.unavailableReason() == null, () -> "SKIP: " + FrontEnd.unavailableReason());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "simdgroup_matrix.metal | 4: refused: simdgroup_matrix (8x8 matrix tiles in an undocumented lane layout);"
            + "5: refused: simdgroup_load (simdgroup_matrix);6: refused: simdgroup_store (simdgroup_matrix)",
        "texture.metal          | 3: refused: texture (no texture memory in the emulator)",
        "imageblock.metal       | 4: refused: imageblock (tile memory the emulator does not model)",
        "raster_order_group.metal | 3: refused: raster_order_group (fragment ordering the emulator does not model)",
        "atomic.metal           | 3: refused: atomic (Metal atomics are not supported by the emulator);"
            + "4: refused: atomic_fetch_add_explicit (Metal atomics)",
        "unbound_parameter.metal | 3: refused: kernel parameter scratch without a [[buffer(n)]], [[threadgroup(n)]] or"
            + " position attribute (no binding the emulator knows)",
        "threadgroup_2d.metal   | 4: refused: multi-dimensional threadgroup array tile (msl2emu rewrites one-dimensional"
            + " threadgroup arrays only, so index a flat one)",
    })
    @Claim("N6")
    void aRefusedConstructFailsTheBuildNamingFileLineAndConstruct(String file, String lines, @TempDir Path tmp)
            throws Exception {
        needsTheFrontEnd();
        String source = RESOURCES + "refused/" + file;
        FrontEnd.Result r = MslFrontEnd.translate(Path.of(source), tmp.resolve("out.cpp"));
        StringBuilder expected = new StringBuilder();
        for (String line : lines.split(";")) expected.append(source).append(':').append(line).append('\n');
        assertEquals(3, r.code(), r.output());
        assertEquals(expected.toString(), r.output());
        assertEquals(false, Files.exists(tmp.resolve("out.cpp")), "a refused source writes no output");
    }

    @Test
    @Claim("N6")
    void everyRewriteIsLoggedWithItsLine(@TempDir Path tmp) throws Exception {
        needsTheFrontEnd();
        String source = RESOURCES + "standard.metal";
        FrontEnd.Result r = MslFrontEnd.translate(Path.of(source), tmp.resolve("standard.cpp"));
        assertEquals(0, r.code(), r.output());
        List<String> log = Files.readAllLines(tmp.resolve("standard.cpp.rewrites.txt"));
        String params = " (in buffer(0), out buffer(1), out_bits buffer(2), p buffer(3), partial threadgroup(0),"
                + " tg threadgroup_position_in_grid, tid thread_index_in_threadgroup, lane thread_index_in_simdgroup,"
                + " sg simdgroup_index_in_threadgroup, tpg threads_per_threadgroup)";
        assertEquals(List.of(
                source + ":12: parameter in: device const T * -> ::emu::dptr<const T>",
                source + ":12: parameter out: device float * -> ::emu::dptr<float>",
                source + ":13: parameter out_bits: device uint * -> ::emu::dptr<uint>",
                source + ":14: parameter partial: threadgroup float * -> ::emu::dptr<float>",
                source + ":14: [[threadgroup(n)]] -> [[__msl_tgidx(n)]] (the binding's attribute, not the address space)",
                source + ":18: threadgroup float peak[32] -> ::emu::shared_array<float, 32>",
                source + ":48: template [[host_name(\"block_sum_f32\")]] block_sum<float> -> kernel table entry \"block_sum_f32\"",
                source + ":53: template [[host_name(\"block_sum_f16\")]] block_sum<half> -> kernel table entry \"block_sum_f16\"",
                source + ":54: template [[host_name(\"block_sum_bf16\")]] block_sum<bfloat> -> kernel table entry \"block_sum_bf16\"",
                source + ": kernel table: \"block_sum_f32\" -> &block_sum<float>" + params,
                source + ": kernel table: \"block_sum_f16\" -> &block_sum<half>" + params,
                source + ": kernel table: \"block_sum_bf16\" -> &block_sum<bfloat>" + params),
                log);
        // Every line stays where it was: the source's lines follow the generated file's two header lines.
        List<String> out = Files.readAllLines(tmp.resolve("standard.cpp"));
        List<String> in = Files.readAllLines(Path.of(source));
        assertEquals("#line 1 \"" + Path.of(source).toAbsolutePath() + "\"", out.get(2));
        assertEquals(in.get(20), out.get(3 + 20), "line 21 (untouched) is at the same line");
    }

    static final int GROUPS = 3;
    static final int N = 200;
    static final int THREADS = 128;

    /** The inputs: small integers, exact in half and bfloat, whose sums are exact in float whatever the order. */
    static int[] inputs() {
        SplittableRandom r = new SplittableRandom(27);
        int[] x = new int[GROUPS * N];
        for (int i = 0; i < x.length; i++) x[i] = r.nextInt(-8, 9);
        return x;
    }

    static MemorySegment encode(Arena a, String type, int[] x) {
        MemorySegment s = a.allocate((type.equals("f32") ? 4L : 2L) * x.length, 4);
        for (int i = 0; i < x.length; i++) {
            switch (type) {
                case "f32" -> s.setAtIndex(ValueLayout.JAVA_FLOAT, i, x[i]);
                case "f16" -> s.setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(x[i]));
                default -> s.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) (Float.floatToRawIntBits(x[i]) >>> 16));
            }
        }
        return s;
    }

    static MslFrontEnd.Lib lib() throws Exception {
        return new MslFrontEnd.Lib(MslFrontEnd.build(Path.of(RESOURCES + "standard.metal").toAbsolutePath(), "msl_standard"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"f32", "f16", "bf16"})
    @Claim("N6")
    void aHostNameInstantiationRunsWithDynamicThreadgroupMemory(String type) throws Exception {
        needsTheFrontEnd();
        MslFrontEnd.Lib lib = lib();
        int[] x = inputs();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment in = encode(a, type, x);
            MemorySegment out = a.allocate(4L * 2 * GROUPS, 4);
            MemorySegment bits = a.allocate(4L * GROUPS, 4);
            MemorySegment p = a.allocate(8, 4);
            p.set(ValueLayout.JAVA_INT, 0, N);
            p.set(ValueLayout.JAVA_FLOAT, 4, 0.5f);
            Launch l = lib.run("block_sum_" + type, new int[] {GROUPS, 1, 1}, THREADS, List.of(
                    type.equals("f32") ? Arg.floats(in) : Arg.bytes(in), Arg.floats(out), Arg.ints(bits), Arg.bytes(p),
                    Arg.threadgroup(0, 16)));
            assertEquals(MslFrontEnd.LAUNCH_OK, l.code(), l.message());
            for (int g = 0; g < GROUPS; g++) {
                int sum = 0;
                int max = Integer.MIN_VALUE;
                for (int i = 0; i < N; i++) {
                    sum += x[g * N + i];
                    max = Math.max(max, x[g * N + i]);
                }
                float s = out.getAtIndex(ValueLayout.JAVA_FLOAT, 2L * g);
                assertEquals(sum * 0.5f, s, "threadgroup " + g + " sum");
                assertEquals((float) max, out.getAtIndex(ValueLayout.JAVA_FLOAT, 2L * g + 1), "threadgroup " + g + " max");
                assertEquals(Float.floatToRawIntBits(s), bits.getAtIndex(ValueLayout.JAVA_INT, g), "as_type<uint>");
            }
        }
    }

    @Test
    @Claim("N6")
    void aHostThatBindsWronglyFailsTheLaunchNamingTheParameter() throws Exception {
        needsTheFrontEnd();
        MslFrontEnd.Lib lib = lib();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment in = encode(a, "f32", inputs());
            MemorySegment out = a.allocate(4L * 2 * GROUPS, 4);
            MemorySegment bits = a.allocate(4L * GROUPS, 4);
            MemorySegment p = a.allocate(8, 4);
            p.set(ValueLayout.JAVA_INT, 0, N);
            p.set(ValueLayout.JAVA_FLOAT, 4, 1f);
            int[] grid = {GROUPS, 1, 1};
            List<Arg> buffers = List.of(Arg.floats(in), Arg.floats(out), Arg.ints(bits), Arg.bytes(p));
            // Control: the same launch bound rightly succeeds.
            Launch ok = lib.run("block_sum_f32", grid, THREADS, concat(buffers, Arg.threadgroup(0, 16)));
            assertEquals(MslFrontEnd.LAUNCH_OK, ok.code(), ok.message());

            Launch none = lib.run("block_sum_f32", grid, THREADS, buffers);
            assertEquals(MslFrontEnd.LAUNCH_BAD_SIGNATURE, none.code(), none.message());
            assertEquals("block_sum_f32 parameter partial [[threadgroup(0)]]: the host set no threadgroup memory length"
                    + " at index 0", none.message());
            Launch odd = lib.run("block_sum_f32", grid, THREADS, concat(buffers, Arg.threadgroup(0, 8)));
            assertEquals(MslFrontEnd.LAUNCH_BAD_SIGNATURE, odd.code(), odd.message());
            assertTrue(odd.message().contains("threadgroup memory length 8 (Metal takes a multiple of 16 bytes"), odd.message());
            // 256 threads are 8 SIMD groups: partial[4] lies past the 16 bytes the host gave.
            Launch small = lib.run("block_sum_f32", grid, 256, concat(buffers, Arg.threadgroup(0, 16)));
            assertEquals(MslFrontEnd.LAUNCH_FAULT, small.code(), small.message());
            assertTrue(small.message().startsWith("out-of-bounds access partial[4] (length 4) in kernel block_sum_f32"),
                    small.message());
            // The params block bound as a float buffer, and a missing buffer index.
            Launch swapped = lib.run("block_sum_f32", grid, THREADS,
                    List.of(Arg.floats(in), Arg.floats(out), Arg.ints(bits), Arg.floats(out), Arg.threadgroup(0, 16)));
            assertEquals(MslFrontEnd.LAUNCH_BAD_SIGNATURE, swapped.code(), swapped.message());
            assertEquals("block_sum_f32 argument 3: expected 8 bytes (setBytes) for parameter p [[buffer(3)]], got"
                    + " argument kind 2 of length 6", swapped.message());
            Launch wrongType = lib.run("block_sum_f32", grid, THREADS,
                    List.of(Arg.ints(in), Arg.floats(out), Arg.ints(bits), Arg.bytes(p), Arg.threadgroup(0, 16)));
            assertEquals("block_sum_f32 argument 0: expected float buffer for parameter in [[buffer(0)]], got argument"
                    + " kind 3 of length 600", wrongType.message());
            Launch shortList = lib.run("block_sum_f32", grid, THREADS,
                    List.of(Arg.floats(in), Arg.floats(out), Arg.ints(bits), Arg.threadgroup(0, 16)));
            assertEquals("block_sum_f32 parameter p [[buffer(3)]]: the host bound nothing at buffer index 3",
                    shortList.message());
            // The template's own name is no kernel: only its [[host_name]] instantiations are.
            Launch template = lib.run("block_sum", grid, THREADS, concat(buffers, Arg.threadgroup(0, 16)));
            assertEquals(10, template.code(), template.message());
        }
    }

    static List<Arg> concat(List<Arg> a, Arg b) {
        var out = new java.util.ArrayList<>(a);
        out.add(b);
        return out;
    }
}
