package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import org.junit.jupiter.api.Test;

/**
 * The kernel sources and what the lanes load agree with the host: the checked-in PTX (the cuda lane's fallback) has
 * every entry point the CUDA host launches, at a PTX ISA an older driver reads, and is the PTX of the current
 * sinks_attn.cu whenever this build's nvcc (same version) rebuilt it; the MSL has every kernel the Metal host
 * dispatches; both emulation libraries were built.
 */
class KernelSourcesTest {
    static final Path NATIVE = Path.of("..", "native");

    /**
     * The .cu source the emulated CUDA lane was built from: a native mutant's patched copy beside its library (the
     * mutant runner writes it to {@code <attnproof.native.dir>/src}), else the repository's.
     */
    static Path cudaSource() {
        Path built = NativeFiles.dir().resolve("src").resolve("sinks_attn.cu");
        return Files.isRegularFile(built) ? built : NATIVE.resolve("cuda/sinks_attn.cu");
    }

    static Set<String> matches(String text, String regex) {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile(regex, Pattern.MULTILINE).matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    static Set<String> hostKernels(NativeSinks.Dialect d) {
        return new TreeSet<>(List.of(d.fused, d.varlen, d.scores, d.softmax, d.pv, d.splitPartial, d.splitReduce));
    }

    @Test
    void theFallbackPtxHasEveryEntryTheHostLaunches() {
        String ptx = new String(NativeFiles.resource(NativeFiles.FALLBACK_PTX_RESOURCE), StandardCharsets.UTF_8);
        assertEquals(hostKernels(NativeSinks.Dialect.CUDA), matches(ptx, "^\\.visible \\.entry (\\w+)\\("));
        assertTrue(ptx.contains("\n.version 8.0\n"), "PTX ISA 8.0 (a CUDA 12.0 driver reads it)");
        assertTrue(ptx.contains("\n.target sm_75\n"), "sm_75 and later");
    }

    @Test
    void theCudaSourceDeclaresEveryKernelTheHostLaunches() throws IOException {
        String cu = Files.readString(cudaSource());
        assertEquals(hostKernels(NativeSinks.Dialect.CUDA), matches(cu, "^extern \"C\" __global__ void (\\w+)\\("));
    }

    @Test
    void theMetalSourceDeclaresEveryKernelTheHostDispatches() {
        String msl = new String(NativeFiles.resource(NativeFiles.METAL_SOURCE_RESOURCE), StandardCharsets.UTF_8);
        assertEquals(hostKernels(NativeSinks.Dialect.METAL), matches(msl, "^kernel void (\\w+)\\("));
    }

    @Test
    void theBuiltPtxNamesTheSourceItWasBuiltFrom() throws IOException {
        Path built = NativeFiles.dir().resolve(NativeFiles.BUILT_PTX);
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isRegularFile(built),
                "nvcc did not run in this build (no " + built + ")");
        byte[] source = Files.readAllBytes(cudaSource());
        assertEquals(0, bytesDiffering(sha256(source), headerHash(Files.readString(built))),
                built + " names another source hash than sinks_attn.cu's");
    }

    @Test
    @Claim("N3")
    void theFallbackPtxIsCurrentWhereThisBuildRanNvcc(Evidence ev) throws IOException {
        Path built = NativeFiles.dir().resolve(NativeFiles.BUILT_PTX);
        skipUnless(ev, Files.isRegularFile(built), "nvcc did not run in this build (no " + built + ")");
        String fresh = Files.readString(built);
        String fallback = new String(NativeFiles.resource(NativeFiles.FALLBACK_PTX_RESOURCE), StandardCharsets.UTF_8);
        String freshNvcc = fresh.lines().findFirst().orElse("");
        skipUnless(ev, freshNvcc.equals(fallback.lines().findFirst().orElse("")),
                "this nvcc differs from the one that built the fallback: " + freshNvcc);
        ev.checkEqual("fallback_ptx_equals_this_builds_ptx", fallback.equals(fresh) ? 1 : 0, 1);
        assertTrue(fallback.equals(fresh), "native/cuda/sinks_attn.ptx is stale (it differs from " + built
                + "): regenerate it with native/cuda/build-ptx.sh native/cuda/sinks_attn.ptx");
    }

    /** A skip with its reason: the evidence line first, then JUnit's skip. */
    static void skipUnless(Evidence ev, boolean holds, String reason) {
        if (!holds) {
            ev.skipped("cuda", reason);
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(holds, reason);
    }

    /** The SHA-256 of {@code bytes}. */
    static byte[] sha256(byte[] bytes) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Bytes in which {@code a} and {@code b} differ (all 32 when {@code b} is absent). */
    static long bytesDiffering(byte[] a, byte[] b) {
        if (b == null || b.length != a.length) {
            return a.length;
        }
        long n = 0;
        for (int i = 0; i < a.length; i++) {
            n += a[i] == b[i] ? 0 : 1;
        }
        return n;
    }

    /** The source hash the PTX header names ({@code // attnproof: source sha256 <hex>}), or null. */
    static byte[] headerHash(String ptx) {
        Set<String> found = matches(ptx, "^// attnproof: source sha256 ([0-9a-f]{64})$");
        return found.size() == 1 ? java.util.HexFormat.of().parseHex(found.iterator().next()) : null;
    }

    @Test
    @io.attnproof.fixtures.claim.Claim("N3")
    void theCheckedInPtxNamesTheHashOfTheCurrentSource(io.attnproof.fixtures.evidence.Evidence ev) throws IOException {
        ev.seed(0);
        byte[] source = Files.readAllBytes(cudaSource());
        String ptx = new String(NativeFiles.resource(NativeFiles.FALLBACK_PTX_RESOURCE), StandardCharsets.UTF_8);
        byte[] header = headerHash(ptx);
        ev.degeneracy("ptx_header_names_one_source_hash", header != null,
                "one '// attnproof: source sha256 <hex>' line in the checked-in PTX");
        ev.degeneracy("source_bytes", source.length, io.attnproof.fixtures.evidence.Comparison.GT, 0,
                "native/cuda/sinks_attn.cu");
        ev.checkBitIdentical("ptx_header_hash_bytes_differing_from_sha256(sinks_attn.cu) (regenerate with"
                + " native/cuda/build-ptx.sh native/cuda/sinks_attn.ptx)", bytesDiffering(sha256(source), header));
        // Control: a one-character edit of the source (one more newline) no longer matches the header.
        byte[] edited = java.util.Arrays.copyOf(source, source.length + 1);
        edited[source.length] = '\n';
        ev.controlAtLeast("hash_bytes_changed_by_a_one_character_edit", bytesDiffering(sha256(edited), header), 1);
    }

    /**
     * Claim N6 on the project's own CUDA source: it is standard CUDA (no emulator dialect), and the cuda-emu lanes were
     * built from the front end's rewrite of it: the rewrite log names each __shared__ array and each kernel's pointer
     * parameters at their lines (the checked and race-recorded forms). Control: the log of that rewrite is not empty.
     */
    @Test
    @Claim("N6")
    void theCudaSourceIsStandardCudaBuiltThroughTheFrontEnd(Evidence ev) throws IOException {
        Path cu = cudaSource();
        String text = Files.readString(cu);
        Matcher dialect = Pattern.compile("SHARED_ARRAY|\\bdptr\\s*<|ATTNPROOF_EMU").matcher(text);
        ev.checkEqual("emulator_dialect_tokens_in_sinks_attn.cu", dialect.results().count(), 0L);
        Path log = NativeFiles.dir().resolve("gen").resolve("sinks_attn.emu.cpp.rewrites.txt");
        assertTrue(Files.isRegularFile(log),
                log + " is missing: build.sh did not build the cuda lanes through cuda2emu.py");
        List<String> rewrites = Files.readAllLines(log, StandardCharsets.UTF_8);
        ev.controlAtLeast("front_end_rewrites_logged", rewrites.size(), 1);
        long sharedDecls = Pattern.compile("(?m)^\\s*__shared__ float \\w+\\[").matcher(text).results().count();
        long sharedRewrites = rewrites.stream()
                .filter(l -> l.matches(".*: __shared__ float \\w+\\[.*\\] -> ::emu::shared_array<.*")).count();
        assertTrue(sharedDecls > 0, "the source declares its tiles as __shared__ arrays");
        ev.checkEqual("shared_arrays_not_rewritten_to_checked_arrays", sharedDecls - sharedRewrites, 0L);
        long params = rewrites.stream().filter(l -> l.contains(": parameter ") && l.contains("-> ::emu::dptr<")).count();
        long pointerParams = Pattern.compile("\\* __restrict__ \\w+").matcher(text).results().count();
        ev.checkEqual("pointer_parameters_not_rewritten_to_checked_pointers", pointerParams - params, 0L);
    }

    @Test
    void bothEmulationLibrariesWereBuilt() {
        for (String lib : List.of(NativeFiles.CUDA_EMU_LIBRARY, NativeFiles.METAL_EMU_LIBRARY)) {
            assertTrue(Files.isRegularFile(NativeFiles.library(lib)), NativeFiles.library(lib) + " is missing");
        }
    }
}
