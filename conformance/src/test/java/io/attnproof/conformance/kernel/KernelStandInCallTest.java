package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.SinksCase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host side of a kernel call ({@link KernelLibrary#call}, {@link MetalLibrary#call}) and of the lanes' builds
 * ({@link KernelLibrary#build}, {@link MetalLibrary#build}), through stand-in libraries: a throw-away repository root
 * whose front-end scripts compile a C source with the system C compiler (a fraction of a second, no libclang), the
 * source standing in for the emulator's runtime (cudaMalloc, cudaMemcpy, ... or attnproof_emu_launch) and for the
 * user's launchers, which write what they were passed into the output. Each lane is built once per class. A lane is
 * named by its build (checked, or plain with {@code -DATTNPROOF_EMU_PLAIN}, its library {@code lib<name>_plain.so});
 * every argument reaches the launcher as the adapter says (scalars from the case, the scale 1/sqrt(D), sinks as NULL
 * only when none is live and the adapter passes none as null, cu_seqlens q and k); the output is read back in the
 * case's output shape (a padded output whole, a packed one padded) and starts as NaN; an error the launcher returns,
 * a sticky error of the synchronize or of cudaGetLastError, or a Metal dispatch that does not return LAUNCH_OK is the
 * call's fault, named; a library without a symbol the host needs is refused naming the lane and the symbol.
 */
class KernelStandInCallTest {
    /**
     * The stand-in CUDA runtime and launchers. Like the checked emulator, it refuses an access past an allocation
     * (cudaMemcpy returns an error; a launcher writes no further than its output's allocation), so a host that sizes a
     * buffer wrong fails the call instead of corrupting the test's process.
     */
    static final String CUDA = """
            #include <stdint.h>
            #include <stdlib.h>
            #include <string.h>
            static int sync_rc, last_rc;
            static const char *message;
            static void *ptrs[256];
            static int64_t sizes[256];
            static int64_t size_of(const void *p) {
                for (int i = 0; i < 256; i++) if (ptrs[i] == p) return sizes[i];
                return -1;
            }
            int cudaMalloc(void **p, int64_t n) {
                *p = malloc((size_t) n);
                for (int i = 0; i < 256; i++) if (!ptrs[i]) { ptrs[i] = *p; sizes[i] = n; return 0; }
                return 2;
            }
            int cudaFree(void *p) {
                for (int i = 0; i < 256; i++) if (ptrs[i] == p) ptrs[i] = 0;
                free(p);
                return 0;
            }
            int cudaMemcpy(void *d, const void *s, int64_t n, int kind) {
                if (n > size_of(kind == 1 ? d : s)) { message = "stand-in: cudaMemcpy past the allocation"; return 1; }
                memcpy(d, s, (size_t) n);
                return 0;
            }
            int cudaDeviceSynchronize(void) { int r = sync_rc; sync_rc = 0; return r; }
            int cudaGetLastError(void) { int r = last_rc; last_rc = 0; return r; }
            #ifndef NO_MESSAGE
            const char *attnproof_cuda_last_message(void) { return message; }
            #endif
            /* Writes what it was passed into out[0..13] (as far as out's allocation goes); leaves the rest. */
            int record_f32(const float *q, const float *k, const float *v, const float *sinks, float *out, int batch,
                    int q_heads, int kv_heads, int q_len, int kv_len, int head_dim, int window, float scale,
                    int64_t kv_len64, void *stream) {
                float w[] = {batch, q_heads, kv_heads, q_len, kv_len, head_dim, window, scale, (float) kv_len64,
                        sinks == 0, sinks ? sinks[0] : 0, q[0], k[0], v[0]};
                int64_t n = size_of(out);
                memcpy(out, w, (size_t) (n < (int64_t) sizeof w ? n : (int64_t) sizeof w));
                return 0;
            }
            int refuse_f32(const float *q, const float *k, float *out) {
                message = "stand-in: launch refused";
                return 7;
            }
            int sticky_f32(const float *q, const float *k, float *out) {
                message = "stand-in: sticky fault";
                sync_rc = 5;
                last_rc = 9;
                return 0;
            }
            int last_f32(const float *q, const float *k, float *out) {
                message = 0;
                last_rc = 9;
                return 0;
            }
            /* out[i] = i over the padded output [sequences, q_heads, max_q, head_dim], within out's allocation. */
            int fill_f32(const float *q, const float *k, const int *cu_q, const int *cu_k, float *out, int sequences,
                    int q_heads, int max_q, int head_dim) {
                int64_t n = size_of(out) / 4;
                for (int64_t i = 0; i < sequences * q_heads * max_q * head_dim && i < n; i++) out[i] = i;
                return 0;
            }
            """;

    /** The stand-in metal-emu C API: "record_*" writes its bindings into buffer 0, "fill_*" counts through it. */
    static final String METAL = """
            #include <stdint.h>
            #include <stdio.h>
            #include <string.h>
            #ifndef NO_LAUNCH
            int attnproof_emu_launch(const char *kernel, const int64_t *dims, int n, const int *kinds,
                    const int64_t *values, const int64_t *lengths, char *err, int64_t errlen) {
                for (int i = 0; i < n; i++) {
                    if (kinds[i] == 5 && values[i] == 0) {
                        snprintf(err, (size_t) errlen, "stand-in: buffer %d bound to no memory", i);
                        return 4;
                    }
                }
                float *out = (float *) (intptr_t) values[0];
                if (strncmp(kernel, "fault", 5) == 0) {
                    snprintf(err, (size_t) errlen, "stand-in: out-of-bounds read at thread 3");
                    return 2;
                }
                if (strncmp(kernel, "fill", 4) == 0) {
                    for (int64_t i = 0; i < lengths[0] / 4; i++) out[i] = (float) i;
                    return 0;
                }
                if (lengths[0] < 4 * (7 + 5 * (n - 1))) {
                    snprintf(err, (size_t) errlen, "stand-in: buffer 0 too small");
                    return 3;
                }
                out[0] = n;
                for (int i = 0; i < 6; i++) out[1 + i] = (float) dims[i];
                for (int i = 1; i < n; i++) {
                    float *o = out + 7 + 5 * (i - 1);
                    o[0] = kinds[i];
                    o[1] = (float) lengths[i];
                    o[2] = o[3] = o[4] = 0;
                    if (kinds[i] == 5 && lengths[i] >= 4) {
                        const char *p = (const char *) (intptr_t) values[i];
                        float f;
                        int32_t a, z;
                        memcpy(&f, p, 4);
                        memcpy(&a, p, 4);
                        memcpy(&z, p + lengths[i] - 4, 4);
                        o[2] = f;
                        o[3] = (float) a;
                        o[4] = (float) z;
                    }
                }
                return 0;
            }
            #endif
            """;

    /** emu_host.h's binding kinds as the Metal host passes them. */
    static final int ARG_NULL = 4;
    static final int ARG_BYTES = 5;
    static final int ARG_THREADGROUP = 6;

    static Path root;
    static Path out;
    static Adapter cuda;
    static Adapter metal;
    static KernelLibrary checked;
    static KernelLibrary plain;
    static MetalLibrary metalChecked;

    /** A repository root whose front-end scripts compile their source as C with the system compiler. */
    static Path standInRoot(Path tmp) throws IOException {
        Path r = tmp.resolve("root");
        for (String d : List.of("native/emu/frontend", "native/emu/metal")) {
            Files.createDirectories(r.resolve(d));
        }
        for (String script : List.of("build-cu.sh", "build-metal.sh")) {
            Files.writeString(r.resolve("native/emu/frontend").resolve(script),
                    "exec cc -shared -fPIC -O0 -o \"$2/lib$3.so\" -x c \"$1\" \"${@:4}\"\n");
        }
        return r;
    }

    static Adapter.Arg tensor(String what, String layout, String noSinks) {
        return new Adapter.Arg("tensor", what, what.equals("sinks") || what.equals("out") ? "f32" : "input", layout,
                noSinks);
    }

    static Adapter.Arg scalar(String what, String type) {
        return new Adapter.Arg("scalar", what, type, null, null);
    }

    static Adapter.Arg cu(String what) {
        return new Adapter.Arg("cu_seqlens", what, "i32", null, null);
    }

    static Adapter.Entry cudaEntry(String cases, String symbol, String returns, Adapter.Arg... args) {
        return new Adapter.Entry(cases, symbol, returns, List.of(args), null, List.of(), Map.of(), List.of());
    }

    static Adapter cudaAdapter(Path source, String name) {
        return new Adapter(source.resolveSibling(name + ".adapter.json"), name, "cuda", List.of(source),
                Map.of("F32", "f32"), List.of(4, 16), -1, "none", "the host", List.of());
    }

    @BeforeAll
    static void build(@TempDir Path tmp) throws Exception {
        Process p = new ProcessBuilder("cc", "--version").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assumeTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "SKIP: no C compiler (cc) on the PATH");
        root = standInRoot(tmp);
        out = tmp.resolve("build");
        Path cu = Files.writeString(tmp.resolve("standin.cu"), CUDA);
        cuda = cudaAdapter(cu, "stand-in.v1");
        checked = KernelLibrary.build(root, cuda, out, false);
        plain = KernelLibrary.build(root, cuda, out, true);
        Path m = Files.writeString(tmp.resolve("standin.metal"), METAL);
        metal = new Adapter(tmp.resolve("m.adapter.json"), "metal-stand-in", "metal", List.of(m), Map.of("F32", "f32"),
                List.of(16), 0, "none", "the host", List.of());
        metalChecked = MetalLibrary.build(root, metal, out, false);
    }

    /** The libraries a build folder holds. */
    static List<String> libraries(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".so")).sorted().toList();
        }
    }

    @Test
    void eachLaneIsNamedByItsBuildAndItsLibraryByTheAdapterAndTheLane(@TempDir Path tmp) throws IOException {
        assertEquals("checked", checked.lane());
        assertEquals("plain", plain.lane());
        assertEquals("checked", metalChecked.lane());
        // A plain build alone, in a fresh folder: lib<name>_plain.so (the name's other characters as _), no other.
        KernelLibrary cudaPlain = KernelLibrary.build(root, cuda, tmp, true);
        assertEquals("plain", cudaPlain.lane());
        assertEquals(List.of("libstand_in_v1_plain.so"), libraries(tmp.resolve(KernelLibrary.digest(
                cuda.sources().getFirst()))));
        assertEquals("plain", MetalLibrary.build(root, metal, tmp, true).lane());
        assertEquals(List.of("libmetal_stand_in_plain.so"), libraries(tmp.resolve("metal-" + KernelLibrary.digest(
                metal.sources().getFirst()))));
        // The checked builds of the shared folder: lib<name>.so beside it.
        assertTrue(libraries(out.resolve(KernelLibrary.digest(cuda.sources().getFirst()))).contains(
                "libstand_in_v1.so"), "the checked library, by name");
        assertTrue(libraries(out.resolve("metal-" + KernelLibrary.digest(metal.sources().getFirst()))).contains(
                "libmetal_stand_in.so"), "the checked Metal library, by name");
    }

    @Test
    void aSourceThatDoesNotCompileNamesTheSourceTheLaneAndTheCompilersError(@TempDir Path tmp) throws IOException {
        Path bad = Files.writeString(tmp.resolve("broken.cu"), "int broken(void) { return undeclared_name; }\n");
        Path badMetal = Files.writeString(tmp.resolve("broken.metal"), "int broken(void) { return undeclared_name; }\n");
        // The CUDA source's plain build, the Metal source's checked build: each names its lane.
        KernelBuildException e = assertThrows(KernelBuildException.class,
                () -> KernelLibrary.build(root, cudaAdapter(bad, "broken"), tmp.resolve("out"), true));
        assertTrue(e.getMessage().startsWith(bad + ": the plain build failed (exit "), e.getMessage());
        assertTrue(e.getMessage().contains("undeclared_name"), e.getMessage());
        Adapter m = new Adapter(tmp.resolve("m.json"), "broken", "metal", List.of(badMetal), Map.of("F32", "f32"),
                List.of(16), 0, "none", "the host", List.of());
        KernelBuildException me = assertThrows(KernelBuildException.class,
                () -> MetalLibrary.build(root, m, tmp.resolve("out"), false));
        assertTrue(me.getMessage().startsWith(badMetal + ": the checked Metal build failed (exit "), me.getMessage());
        assertTrue(me.getMessage().contains("undeclared_name"), me.getMessage());
    }

    @Test
    void aLibraryWithoutASymbolTheHostNeedsIsRefusedNamingTheLaneAndTheSymbol(@TempDir Path tmp) throws IOException {
        Path cu = Files.writeString(tmp.resolve("nomessage.cu"), "#define NO_MESSAGE\n" + CUDA);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> KernelLibrary.build(root, cudaAdapter(cu, "nomessage"), tmp.resolve("out"), true));
        assertEquals("the plain library has no symbol attnproof_cuda_last_message", e.getMessage());
        Path m = Files.writeString(tmp.resolve("nolaunch.metal"), "#define NO_LAUNCH\n" + METAL);
        Adapter a = new Adapter(tmp.resolve("m.json"), "nolaunch", "metal", List.of(m), Map.of("F32", "f32"),
                List.of(16), 0, "none", "the host", List.of());
        IllegalStateException me = assertThrows(IllegalStateException.class,
                () -> MetalLibrary.build(root, a, tmp.resolve("out"), false));
        assertTrue(me.getMessage().startsWith("the checked library ") && me.getMessage().endsWith(
                " has no symbol attnproof_emu_launch"), me.getMessage());

        // A launcher the adapter names but the source lacks.
        Adapter.Entry absent = cudaEntry("dense", "absent_{dtype}", "cudaError_t", tensor("q", "dense", null),
                tensor("k", "dense", null), tensor("out", "dense", null));
        SinksCase c = KernelHostRulesTest.dense(1, 2, 1, 2, 3, 4, DType.F32, null, false,
                KernelHostRulesTest.noSinks(2));
        IllegalStateException s = assertThrows(IllegalStateException.class, () -> checked.call(cuda, absent, c));
        assertTrue(s.getMessage().startsWith("the checked build of " + cuda.sources().getFirst() + " has no symbol"
                + " absent_f32 ") && s.getMessage().contains("dtype F32") && s.getMessage().contains("extern \"C\""),
                s.getMessage());
    }

    static SinksCase withValues(SinksCase c, float q0, float k0, float v0) {
        Tensor q = c.q().copy();
        Tensor k = c.k().copy();
        Tensor v = c.v().copy();
        q.setFlat(0, q0);
        k.setFlat(0, k0);
        v.setFlat(0, v0);
        return new SinksCase(null, q, k, v, c.sinks(), c.mask(), 3, null, null, c.dtype());
    }

    @Test
    void everyArgumentReachesTheLauncherAsTheAdapterSaysAndTheUnwrittenOutputIsNaN() {
        Adapter.Arg[] args = {tensor("q", "dense", null), tensor("k", "dense", null), tensor("v", "dense", null),
            tensor("sinks", "heads", "null"), tensor("out", "dense", null), scalar("batch", "i32"),
            scalar("q_heads", "i32"), scalar("kv_heads", "i32"), scalar("q_len", "i32"), scalar("kv_len", "i32"),
            scalar("head_dim", "i32"), scalar("window", "i32"), scalar("scale", "f32"), scalar("kv_len", "i64"),
            new Adapter.Arg("stream", "null", null, null, null)};
        int b = 1, hq = 2, hkv = 1, tq = 2, tk = 3, d = 4;
        for (String returns : List.of("cudaError_t", "void")) {
            Adapter.Entry e = cudaEntry("dense", "record_{dtype}", returns, args);
            for (float[] sinks : List.of(KernelHostRulesTest.noSinks(hq), new float[] {0.25f,
                Float.NEGATIVE_INFINITY})) {
                SinksCase c = withValues(KernelHostRulesTest.dense(b, hq, hkv, tq, tk, d, DType.F32, null, true,
                        sinks), 1.5f, 2.5f, 3.5f);
                KernelLibrary.Call got = checked.call(cuda, e, c);
                assertNull(got.fault(), got.fault());
                boolean none = Float.isInfinite(sinks[0]);
                double[] want = {b, hq, hkv, tq, tk, d, 3, 1 / Math.sqrt(d), tk, none ? 1 : 0, none ? 0 : sinks[0],
                    1.5, 2.5, 3.5};
                assertEquals(b * hq * tq * d, got.output().length, "the output is the case's [B, Hq, tq, D]");
                assertEquals(Arrays.toString(want), Arrays.toString(Arrays.copyOf(got.output(), want.length)),
                        "batch, q_heads, kv_heads, q_len, kv_len, head_dim, window, scale, kv_len (i64), sinks NULL,"
                                + " sinks[0], q[0], k[0], v[0] (" + returns + ")");
                for (int i = want.length; i < got.output().length; i++) {
                    assertTrue(Double.isNaN(got.output()[i]), "element " + i + " never written stays NaN");
                }
            }
        }
    }

    @Test
    void anErrorTheLauncherReturnsOrASynchronizeOrLastErrorReportsIsTheCallsFault() {
        SinksCase c = KernelHostRulesTest.dense(1, 2, 1, 2, 3, 4, DType.F32, null, false,
                KernelHostRulesTest.noSinks(2));
        Adapter.Arg[] args = {tensor("q", "dense", null), tensor("k", "dense", null), tensor("out", "dense", null)};
        KernelLibrary.Call refused = checked.call(cuda, cudaEntry("dense", "refuse_{dtype}", "cudaError_t", args), c);
        assertNull(refused.output());
        assertEquals("refuse_f32 returned cudaError 7: stand-in: launch refused", refused.fault());
        KernelLibrary.Call sticky = checked.call(cuda, cudaEntry("dense", "sticky_{dtype}", "cudaError_t", args), c);
        assertEquals("sticky_f32 returned cudaError 5: stand-in: sticky fault", sticky.fault(),
                "the synchronize's error first");
        KernelLibrary.Call last = checked.call(cuda, cudaEntry("dense", "last_{dtype}", "cudaError_t", args), c);
        assertEquals("last_f32 returned cudaError 9: (no message)", last.fault(),
                "cudaGetLastError's error, without a message");
    }

    @Test
    void aPaddedVarlenOutputIsReadWhole() {
        int[] cuQ = {0, 2, 3, 7};
        int[] cuK = {0, 5, 6, 9};
        int hq = 2, d = 4;
        SinksCase c = KernelHostRulesTest.varlen(cuQ, cuK, hq, 1, d, 0);
        Adapter.Entry e = cudaEntry("varlen", "fill_{dtype}", "cudaError_t", tensor("q", "packed", null),
                tensor("k", "packed", null), cu("q"), cu("k"), tensor("out", "padded", null), scalar("sequences", "i32"),
                scalar("q_heads", "i32"), scalar("max_q", "i32"), scalar("head_dim", "i32"));
        KernelLibrary.Call got = checked.call(cuda, e, c);
        int n = 3 * hq * 4 * d; // 3 sequences, the longest of 4 query rows
        assertEquals(n, got.output().length, "[sequences, Hq, max_q, D]");
        for (int i = 0; i < n; i++) {
            assertEquals(i, got.output()[i], "element " + i);
        }
    }

    // --- Metal ---

    static Adapter.Entry metalEntry(String cases, String kernel, List<Adapter.Arg> buffers) {
        List<Adapter.Arg> tensors = buffers.stream().filter(a -> a.role().equals("tensor")).toList();
        var dispatch = new Adapter.Dispatch(kernel, List.of(KernelHostRulesTest.JSON.valueToTree("q_heads"),
                KernelHostRulesTest.JSON.valueToTree(2), KernelHostRulesTest.JSON.valueToTree(3)),
                List.of(KernelHostRulesTest.JSON.valueToTree(32), KernelHostRulesTest.JSON.valueToTree(1),
                        KernelHostRulesTest.JSON.valueToTree("head_dim")),
                List.of(KernelHostRulesTest.JSON.valueToTree(64)), buffers);
        return new Adapter.Entry(cases, kernel, "void", tensors, null, List.of(), Map.of(), List.of(dispatch));
    }

    /** Binding {@code i} (1-based past the output) as the record kernel wrote it: kind, length, f32, i32, last i32. */
    static double[] binding(double[] got, int i) {
        return Arrays.copyOfRange(got, 7 + 5 * (i - 1), 7 + 5 * i);
    }

    @Test
    void everyMetalBindingReachesTheDispatchAsTheAdapterSays() {
        int hq = 2, d = 16;
        int[] cuQ = {0, 2, 3, 7};
        int[] cuK = {0, 5, 6, 9};
        List<Adapter.Arg> buffers = List.of(tensor("out", "padded", null), tensor("q", "packed", null),
                tensor("sinks", "heads", "null"), cu("q"), cu("k"), scalar("sequences", "i32"),
                scalar("total_k", "i64"), scalar("scale", "f32"));
        Adapter.Entry e = metalEntry("varlen", "record_{dtype}", buffers);
        for (boolean live : List.of(false, true)) {
            SinksCase v = KernelHostRulesTest.varlen(cuQ, cuK, hq, 1, d, 0);
            if (live) {
                v = new SinksCase(null, v.q(), v.k(), v.v(), KernelHostRulesTest.sinks(0.75f, Float.NEGATIVE_INFINITY),
                        null, 0, cuQ, cuK, DType.F32);
            }
            KernelLibrary.Call call = metalChecked.call(metal, e, v);
            assertNull(call.fault(), call.fault());
            assertEquals(3 * hq * 4 * d, call.output().length, "[sequences, Hq, max_q, D]");
            double[] got = call.output();
            assertEquals(buffers.size() + 1, got[0], "the buffers, then one [[threadgroup(0)]] length");
            assertEquals("[2.0, 2.0, 3.0, 32.0, 1.0, 16.0]", Arrays.toString(Arrays.copyOfRange(got, 1, 7)),
                    "threadgroups [q_heads, 2, 3], threads [32, 1, head_dim]");
            assertEquals(live ? ARG_BYTES : ARG_NULL, binding(got, 2)[0], "sinks: NULL when none is live");
            if (live) {
                assertEquals(4.0 * hq, binding(got, 2)[1], "the sinks' bytes");
                assertEquals(0.75, binding(got, 2)[2], "sinks[0]");
            }
            assertEquals("[5.0, 16.0, 0.0, 0.0, 7.0]", Arrays.toString(binding(got, 3)),
                    "cu_seqlens_q: 4 ints, the last total_q 7");
            assertEquals("[5.0, 16.0, 0.0, 0.0, 9.0]", Arrays.toString(binding(got, 4)),
                    "cu_seqlens_k: 4 ints, the last total_k 9");
            assertEquals(3.0, binding(got, 5)[3], "sequences (i32)");
            assertEquals(4.0, binding(got, 5)[1], "an i32 scalar's 4 bytes");
            assertEquals(9.0, binding(got, 6)[3], "total_k (i64), low word");
            assertEquals(8.0, binding(got, 6)[1], "an i64 scalar's 8 bytes");
            assertEquals(1 / Math.sqrt(d), binding(got, 7)[2], "scale 1/sqrt(D) as f32");
            assertEquals("[6.0, 64.0, 0.0, 0.0, 0.0]", Arrays.toString(binding(got, 8)),
                    "threadgroup memory 0: 64 bytes");
        }
        // no_sinks "neg-inf": none is passed as a buffer of -inf.
        List<Adapter.Arg> negInf = new ArrayList<>(buffers);
        negInf.set(2, tensor("sinks", "heads", "neg-inf"));
        double[] got = metalChecked.call(metal, metalEntry("varlen", "record_{dtype}", negInf),
                KernelHostRulesTest.varlen(cuQ, cuK, hq, 1, d, 0)).output();
        assertEquals(ARG_BYTES, binding(got, 2)[0]);
        assertEquals(Double.NEGATIVE_INFINITY, binding(got, 2)[2]);
    }

    @Test
    void aMetalOutputIsReadInTheCaseShapeAndAFailedDispatchIsTheCallsFault() {
        int hq = 2, d = 16;
        int[] cuQ = {0, 2, 3, 7};
        int[] cuK = {0, 5, 6, 9};
        int sequences = cuQ.length - 1, maxQ = 4;
        SinksCase v = KernelHostRulesTest.varlen(cuQ, cuK, hq, 1, d, 0);
        int n = sequences * hq * maxQ * d;
        for (String layout : List.of("padded", "packed")) {
            List<Adapter.Arg> buffers = List.of(tensor("out", layout, null), tensor("q", "packed", null), cu("q"),
                    cu("k"));
            // The fill kernel writes i at element i of the output buffer, whatever its layout.
            KernelLibrary.Call filled = metalChecked.call(metal, metalEntry("varlen", "fill_{dtype}", buffers), v);
            assertEquals(n, filled.output().length, layout + ": read back as [sequences, Hq, max_q, D]");
            for (int s = 0; s < sequences; s++) {
                for (int y = 0; y < hq; y++) {
                    for (int r = 0; r < maxQ; r++) {
                        for (int j = 0; j < d; j++) {
                            int at = ((s * hq + y) * maxQ + r) * d + j;
                            // Packed rows are [total_q, Hq, D]; rows past a sequence's q_len are zero.
                            double want = layout.equals("padded") ? at : r < cuQ[s + 1] - cuQ[s]
                                    ? ((cuQ[s] + r) * hq + y) * d + j : 0;
                            assertEquals(want, filled.output()[at], layout + " element " + at);
                        }
                    }
                }
            }
            KernelLibrary.Call fault = metalChecked.call(metal, metalEntry("varlen", "fault_{dtype}", buffers), v);
            assertNull(fault.output());
            assertEquals("fault_f32 (threadgroups " + hq + "x2x3, threads 32x1x" + d + ") launch result 2: stand-in:"
                    + " out-of-bounds read at thread 3", fault.fault());
        }
    }
}
