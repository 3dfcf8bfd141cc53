package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.attnproof.conformance.cli.Cli;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fa2 family's curated native mutants (mutants/catalog/84-87) through the kernel lane, each applied to a copy of
 * the source and judged with the worked example's adapter on the fixture corpus (claim F1): the checks whose cases
 * the bug reaches fail, as the fault class or the wrong numbers the bug causes, and the others still pass. Each is
 * then shrunk (claim F3) to a case of at most 2 query heads and 16 keys that still fails the same way, written with
 * its reproducing command, which fails again when run.
 */
@Timeout(900)
class KernelMutantsTest {
    @BeforeAll
    static void corpus(@TempDir Path tmp) throws Exception {
        KernelLaneTest.corpus(tmp);
    }

    static Path mutate(Path tmp, String patch) throws IOException, InterruptedException {
        Path tree = tmp.resolve("tree");
        Path dir = Files.createDirectories(tree.resolve("examples/kernels/cuda"));
        Files.copy(KernelLaneTest.SOURCE, dir.resolve("fa2_sinks.cu"));
        Files.copy(KernelLaneTest.ADAPTER, dir.resolve("fa2_sinks.adapter.json"));
        Process p = new ProcessBuilder("patch", "-p1", "-d", tree.toString(), "-i",
                KernelLaneTest.ROOT.resolve("mutants/catalog").resolve(patch).toString()).redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(p.waitFor(60, TimeUnit.SECONDS), "patch timed out");
        assertEquals(0, p.exitValue(), "patch " + patch + ": " + out);
        return dir.resolve("fa2_sinks.adapter.json");
    }

    /** Files under a or b (by relative path) that the other lacks or holds with other bytes; REPRODUCE names paths. */
    static long differing(Path a, Path b) throws IOException {
        Set<Path> rel = new TreeSet<>();
        for (Path root : List.of(a, b)) {
            try (var w = Files.walk(root)) {
                w.filter(Files::isRegularFile).forEach(p -> rel.add(root.relativize(p)));
            }
        }
        long n = 0;
        for (Path r : rel) {
            if (r.getFileName().toString().equals("REPRODUCE")) {
                continue;
            }
            Path x = a.resolve(r), y = b.resolve(r);
            if (!Files.isRegularFile(x) || !Files.isRegularFile(y)
                    || !java.util.Arrays.equals(Files.readAllBytes(x), Files.readAllBytes(y))) {
                n++;
            }
        }
        return n;
    }

    /**
     * @param failing the checks that must fail, each as {@code check id=class} (class: oracle, race, deadlock,
     *                out-of-bounds); every other judged check must pass
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        // maxKeys: the most keys a shrunk case may keep: 16, or 33 where the bug needs a second K/V tile
        // (KEY_TILE 32 in fa2_sinks.cu: a barrier skipped inside the tile loop deadlocks only on the next tile).
        // No barrier after the tile load: the warps read slots other threads still write (a race on every tile).
        "84-fa2-barrier-removed.patch; 16; S1:oracle:K-prefill-b2-gqa-F32=race S6:oracle:K-varlen-w12-F16=race"
            + " B1:oracle:K-decode-b2-nosinks-BF16=race S1:control-oracle:K-prefill-window1-F32=race",
        // The last key of every block's last tile is never loaded: wrong numbers, no fault.
        "85-fa2-tile-bound-off-by-one.patch; 16; S1:oracle:K-prefill-b2-gqa-F32=oracle S6:oracle:K-varlen-w12-F16=oracle"
            + " B1:oracle:K-decode-b2-nosinks-BF16=oracle",
        // sinks[b * Hq + h] in the dense kernel: batch 1 reads past the sinks; the varlen kernel is untouched and the
        // no-sinks decode passes a null sinks pointer, which the kernel never indexes.
        "86-fa2-sink-indexed-by-batch-head.patch; 16; S1:oracle:K-prefill-b2-gqa-F32=out-of-bounds"
            + " S1:control-oracle:K-prefill-window1-F32=out-of-bounds",
        // The end-of-tile barrier inside the live branch: blocks with warps past q_len deadlock.
        "87-fa2-barrier-moved-into-live-branch.patch; 33; S1:oracle:K-prefill-b2-gqa-F32=deadlock"
            + " S6:oracle:K-varlen-w12-F16=deadlock B1:oracle:K-decode-b2-nosinks-BF16=deadlock"
            + " S1:control-oracle:K-prefill-window1-F32=deadlock",
    })
    @Claim("F1")
    // its shrink lines are claim F3's (Evidence.claim)
    void eachMutantFailsExactlyTheChecksItsBugReachesAndIsShrunk(String patch, int maxKeys, String failing, Evidence ev,
            @TempDir Path tmp) throws Exception {
        assumeTrue(Boolean.getBoolean("attnproof.kernel.mutants"), "SKIP: the kernel lane's mutant campaign runs with"
                + " -Dattnproof.kernel.mutants=true (the campaigns workflow; about a minute per mutant here)");
        Evidence e = ev.backend("kernel-fa2-sinks");
        e.seed(29_001);
        Path adapter = mutate(tmp, patch);
        Path out = tmp.resolve("out");
        Cli r = KernelLaneTest.kernel(adapter, out, "--no-plain", "--shrink");
        System.out.println(patch + ":\n" + r);
        e.checkEqual("exit_code[" + patch + "]", r.exit(), 1);
        JsonNode st = KernelLaneTest.status(out);
        Map<String, List<JsonNode>> lines = KernelLaneTest.lines(out);
        Set<String> expected = new TreeSet<>(List.of(failing.strip().split("\\s+")));
        Set<String> got = new TreeSet<>();
        for (var l : lines.entrySet()) {
            boolean failed = l.getValue().stream().anyMatch(n -> n.has("passed") && !n.path("passed").asBoolean());
            if (!failed) {
                continue;
            }
            // The case a fault is charged to, in the checker's order: the check's own case, then the one it is
            // held against (a control of the prefill case reads the prefill case's oracle).
            String caseId = l.getKey().substring(l.getKey().lastIndexOf(':') + 1);
            String fault = st.path("faults").path(caseId).asText("");
            if (fault.isEmpty() && l.getKey().contains("control")) {
                fault = st.path("faults").path("K-prefill-b2-gqa-F32").asText("");
            }
            got.add(l.getKey() + "=" + (fault.isEmpty() ? "oracle" : Shrinker.faultClass(fault)));
        }
        e.checkEqual("failing_checks_as_expected[" + patch + "] (got " + got + ")", got.equals(expected) ? 1 : 0, 1);
        shrunkCasesFailAgain(e.claim("F3"), patch, maxKeys, adapter, out, tmp);
    }

    /**
     * Claim F3 in every build: mutant 86 (the sink read at {@code batch * heads + head}, an out-of-bounds read on
     * batch 1) through the lane with {@code --shrink} on the fixture corpus; its failures shrink, deterministically, to
     * cases of at most 2 query heads and 16 keys whose reproducing command fails again. The gated test above does the
     * same for every mutant of the family.
     */
    @Test
    @Claim("F3")
    void aMutantsFailureShrinksToASmallCaseThatFailsAgain(Evidence ev, @TempDir Path tmp) throws Exception {
        String patch = "86-fa2-sink-indexed-by-batch-head.patch";
        Evidence f3 = ev.backend("kernel-fa2-sinks");
        f3.seed(29_002);
        Path adapter = mutate(tmp, patch);
        Path out = tmp.resolve("out");
        Cli r = KernelLaneTest.kernel(adapter, out, "--no-plain", "--shrink");
        f3.checkEqual("exit_code[" + patch + "]", r.exit(), 1);
        shrunkCasesFailAgain(f3, patch, 16, adapter, out, tmp);
    }

    /** F3's lines on the shrunk cases of one failing run in {@code out}. */
    static void shrunkCasesFailAgain(Evidence f3, String patch, int maxKeys, Path adapter, Path out, Path tmp)
            throws Exception {
        // F3: the shrink is deterministic (a second run gives the same bytes), every failing case is shrunk, at most 2 query heads and 16 keys, and its command fails again.
        List<Path> shrunk;
        try (var s = Files.list(out.resolve("shrunk"))) {
            shrunk = s.sorted().toList();
        }
        Path out2 = tmp.resolve("out2");
        KernelLaneTest.kernel(adapter, out2, "--no-plain", "--shrink");
        f3.checkEqual("files_differing_between_two_shrinks[" + patch + "]", differing(out.resolve("shrunk"),
                out2.resolve("shrunk")), 0);
        f3.checkAtLeast("shrunk_cases[" + patch + "]", shrunk.size(), 1);
        for (Path d : shrunk) {
            JsonNode m = KernelLaneTest.JSON.readTree(d.resolve("manifest.json").toFile());
            JsonNode shape = m.path("cases").get(0).path("output_shape");
            String c = d.getFileName().toString();
            f3.check("query_heads_of_shrunk[" + c + "]", shape.get(1).asInt(), 2, null);
            JsonNode k = KernelLaneTest.JSON.readTree(d.resolve("cases").resolve(m.path("cases").get(0).path("id")
                    .asText()).resolve("case.json").toFile());
            int[] ks = io.attnproof.conformance.npy.Npy.readWide(d.resolve("cases").resolve(m.path("cases").get(0)
                    .path("id").asText()).resolve(k.path("k").asText())).array().shape();
            int keys = ks.length == 4 ? ks[2] : ks[0]; // dense: keys per batch entry; varlen: all sequences' keys
            f3.check("keys_of_shrunk[" + c + "]", keys, maxKeys, null);
            String cmd = Files.readAllLines(d.resolve("REPRODUCE")).getLast();
            String[] args = cmd.substring("./attnproof ".length()).split(" ");
            String[] withEv = java.util.Arrays.copyOf(args, args.length + 3);
            withEv[args.length] = "--evidence-out";
            withEv[args.length + 1] = d.resolve("run-evidence").toString();
            withEv[args.length + 2] = "--no-plain";
            Cli again = Cli.run(withEv);
            f3.checkEqual("exit_code_of_the_reproducing_command[" + c + "]", again.exit(), 1);
        }
    }

    /**
     * The Metal family's curated mutants (mutants/catalog/100-105 but 103) through the Metal lane on the Metal fixture
     * corpus: the checks whose cases the bug reaches fail, as the fault class or the wrong numbers, the others pass.
     * 103 (a keyless row without sinks written as NaN) is not here: a corpus case has q_len <= kv_len, so every row
     * admits at least its own key and no case reaches that guard.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        // sinks[b * Hq + h]: batch 1 of every batched case with live sinks reads past the Hq sinks.
        "100-metal-decode-sink-indexed-by-batch-head.patch; B1:oracle:M-decode-b2-gqa-F32=out-of-bounds"
            + " S1:oracle:M-prefill-b2-gqa-F16=out-of-bounds B1:control-oracle:M-decode-window1-F32=out-of-bounds",
        // The one-pass decode attends to every key: the windowed decode is wrong, and the window-1 control now
        // matches the unwindowed oracle it must miss.
        "101-metal-decode-ignores-window.patch; B1:oracle:M-decode-w9-F16=oracle"
            + " B1:control-oracle:M-decode-window1-F32=oracle",
        // No sinks as a zero-logit sink: every case without sinks.
        "102-metal-no-sinks-as-zero-logits.patch; B1:oracle:M-decode-kv1025-w300-nosinks-F32=oracle"
            + " S1:oracle:M-prefill-w2-nosinks-F32=oracle",
        // No barrier between the tile load and its reads: a threadgroup-memory race in every prefill.
        "104-metal-prefill-barrier-removed.patch; S1:oracle:M-prefill-b2-gqa-F16=race"
            + " S1:oracle:M-prefill-w2-nosinks-F32=race",
        // The reduce combines the chunks with each lane's own max: both two-pass (kv 1025) decodes are wrong.
        "105-metal-two-pass-reduce-wrong-max.patch; B1:oracle:M-decode-kv1025-BF16=oracle"
            + " B1:oracle:M-decode-kv1025-w300-nosinks-F32=oracle",
    })
    @Claim("F1")
    void eachMetalMutantFailsExactlyTheChecksItsBugReaches(String patch, String failing, Evidence ev, @TempDir Path tmp)
            throws Exception {
        assumeTrue(Boolean.getBoolean("attnproof.kernel.mutants"), "SKIP: the kernel lane's mutant campaign runs with"
                + " -Dattnproof.kernel.mutants=true (the campaigns workflow)");
        MetalKernelLaneTest.corpus(tmp.resolve("corpus"));
        Evidence e = ev.backend("kernel-metal-sinks-decode");
        e.seed(29_101);
        Path tree = tmp.resolve("tree");
        Path dir = Files.createDirectories(tree.resolve("examples/kernels/metal"));
        Files.copy(MetalKernelLaneTest.SOURCE, dir.resolve("sinks_decode.metal"));
        Files.copy(MetalKernelLaneTest.ADAPTER, dir.resolve("sinks_decode.adapter.json"));
        Process p = new ProcessBuilder("patch", "-p1", "-d", tree.toString(), "-i",
                KernelLaneTest.ROOT.resolve("mutants/catalog").resolve(patch).toString()).redirectErrorStream(true)
                .start();
        String patched = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(p.waitFor(60, TimeUnit.SECONDS), "patch timed out");
        assertEquals(0, p.exitValue(), "patch " + patch + ": " + patched);
        Path out = tmp.resolve("out");
        Cli r = MetalKernelLaneTest.kernel(dir.resolve("sinks_decode.adapter.json"), out, "--no-plain");
        System.out.println(patch + ":\n" + r);
        e.checkEqual("exit_code[" + patch + "]", r.exit(), 1);
        JsonNode st = KernelLaneTest.status(out);
        Map<String, List<JsonNode>> lines = KernelLaneTest.lines(out);
        Set<String> expected = new TreeSet<>(List.of(failing.strip().split("\\s+")));
        Set<String> got = new TreeSet<>();
        for (var l : lines.entrySet()) {
            if (l.getValue().stream().noneMatch(n -> n.has("passed") && !n.path("passed").asBoolean())) {
                continue;
            }
            // A fault is charged to the check's own case, else (a control) to the case it is held against.
            String caseId = l.getKey().substring(l.getKey().lastIndexOf(':') + 1);
            String fault = st.path("faults").path(caseId).asText("");
            if (fault.isEmpty() && l.getKey().contains("control")) {
                fault = st.path("faults").path("M-decode-b2-gqa-F32").asText("");
            }
            got.add(l.getKey() + "=" + (fault.isEmpty() ? "oracle" : Shrinker.faultClass(fault)));
        }
        e.checkEqual("failing_checks_as_expected[" + patch + "] (got " + got + ")", got.equals(expected) ? 1 : 0, 1);
    }
}
