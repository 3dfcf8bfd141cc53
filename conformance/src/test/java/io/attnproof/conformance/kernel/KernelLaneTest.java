package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.attnproof.conformance.cli.Cli;
import io.attnproof.conformance.corpus.KernelFixtureCorpus;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claims F1 and F3 on the worked example, examples/kernels/cuda/fa2_sinks.cu with its adapter: the kernel lane judges
 * it through the corpus's own checks (cases outside the envelope SKIP with the reason, never PASS), and each curated
 * native mutant of the family (mutants/catalog/84-87, 92-94; KernelMutantsTest) fails exactly the checks its bug reaches, as the fault or the
 * wrong numbers it causes, and is shrunk to a case of at most 2 heads and 16 keys that still fails the same way.
 */
@Timeout(900)
class KernelLaneTest {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path SOURCE = ROOT.resolve("examples/kernels/cuda/fa2_sinks.cu");
    static final Path ADAPTER = ROOT.resolve("examples/kernels/cuda/fa2_sinks.adapter.json");
    static final ObjectMapper JSON = new ObjectMapper();
    static Path corpus;

    @BeforeAll
    static void corpus(@TempDir Path tmp) throws Exception {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", "import clang.cindex as c; c.Index.create()")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean ok = p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        assumeTrue(ok, () -> "SKIP: libclang's Python bindings are not usable by /usr/bin/python3"
                + " (bin/install-frontend.sh installs them): " + out.strip());
        corpus = tmp.resolve("corpus");
        KernelFixtureCorpus.write(corpus);
    }

    static Cli kernel(Path adapter, Path out, String... more) {
        return kernelOn(corpus, adapter, out, more);
    }

    /** {@code attnproof kernel} on the corpus in {@code dir}, its evidence into OUT/evidence. */
    static Cli kernelOn(Path dir, Path adapter, Path out, String... more) {
        List<String> a = new ArrayList<>(List.of("kernel", "--adapter", adapter.toString(), "--corpus",
                dir.toString(), "--out", out.toString(), "--evidence-out", out.resolve("evidence").toString()));
        a.addAll(List.of(more));
        return Cli.run(a.toArray(String[]::new));
    }

    /** The kernel lane's evidence lines, by check id (the evidence "test" field ends in the check id). */
    static Map<String, List<JsonNode>> lines(Path out) throws IOException {
        Map<String, List<JsonNode>> m = new TreeMap<>();
        for (String l : Files.readAllLines(out.resolve("evidence/CorpusChecker.jsonl"), StandardCharsets.UTF_8)) {
            JsonNode n = JSON.readTree(l);
            String test = n.path("test").asText();
            m.computeIfAbsent(test.substring(test.indexOf('#') + 1), k -> new ArrayList<>()).add(n);
        }
        return m;
    }

    static JsonNode status(Path out) throws IOException {
        return JSON.readTree(out.resolve("outputs/kernel-run-1-of-1.json").toFile());
    }

    @Test
    @Claim("F1")
    void theWorkedExamplePassesInsideItsEnvelopeAndSkipsTheRestWithTheReason(Evidence ev, @TempDir Path out)
            throws IOException {
        Evidence e = ev.backend("kernel-fa2-sinks");
        e.seed(29_001);
        Cli r = kernel(ADAPTER, out);
        System.out.println(r);
        e.checkEqual("exit_code_of_attnproof_kernel", r.exit(), 0);
        JsonNode st = status(out);
        e.checkEqual("cases_run_on_checked_and_plain_lanes", st.path("ran").size(), 4);
        e.checkEqual("cases_faulted", st.path("faults").size(), 0);
        String why = st.path("skipped").path("K-d16-F32").asText();
        e.checkEqual("skip_reason_names_the_head_dim", why.contains("head dim 16 outside the adapter's head dims") ? 1
                : 0, 1);
        // The skipped check is one SKIP line with the reason and no judged line: never a PASS.
        List<JsonNode> skipLines = lines(out).get("B1:oracle:K-d16-F32");
        long judged = skipLines.stream().filter(n -> !n.path("kind").asText().equals("skip")).count();
        long skips = skipLines.stream().filter(n -> n.path("kind").asText().equals("skip")
                && n.path("skipped").asText().contains("head dim 16")).count();
        e.checkEqual("judged_lines_of_the_skipped_check", judged, 0);
        e.checkEqual("skip_lines_of_the_skipped_check_with_the_reason", skips, 1);
        // The judged checks are the corpus's own lines, all passing, the negative control included.
        for (String id : List.of("S1:oracle:K-prefill-b2-gqa-F32", "S6:oracle:K-varlen-w12-F16",
                "B1:oracle:K-decode-b2-nosinks-BF16", "S1:control-oracle:K-prefill-window1-F32")) {
            List<JsonNode> l = lines(out).get(id);
            long failed = l.stream().filter(n -> n.has("passed") && !n.path("passed").asBoolean()).count();
            long checks = l.stream().filter(n -> List.of("check", "control").contains(n.path("kind").asText())).count();
            e.checkEqual("failed_lines[" + id + "]", failed, 0);
            e.checkAtLeast("judged_lines[" + id + "]", checks, 1);
        }
    }

    @Test
    void badAdaptersAreOneLineNamingTheFieldTheValueAndTheRule(@TempDir Path tmp) throws IOException {
        String good = Files.readString(ADAPTER, StandardCharsets.UTF_8);
        Files.copy(SOURCE, tmp.resolve("fa2_sinks.cu"));
        Map<String, String[]> bad = new java.util.LinkedHashMap<>();
        bad.put("\"head_dims\": [64, 80, 96, 112, 128, 192, 256]", new String[] {"\"head_dims\": [64, -1]",
            "\"head_dims[1]\": -1: must be an integer in [1, 4096]"});
        bad.put("\"policy\": \"none\", \"route\": \"the host's reference path (the kernel has no mask parameter)\"",
            new String[] {"\"policy\": \"none\"", "\"mask.route\": missing: a kernel that has no mask parameter must"
                + " say where the host routes masked calls (the SKIP reason of every masked case)"});
        bad.put("{\"tensor\": \"q\", \"dtype\": \"input\", \"layout\": \"dense\"}", new String[] {
            "{\"tensor\": \"q\", \"dtype\": \"input\", \"layout\": \"packed\"}",
            "\"entry_points[0].args[0].layout\": \"packed\": must be one of [dense]"});
        bad.put("\"format\": \"attnproof-kernel-adapter/1\"", new String[] {"\"format\": \"v2\"",
            "\"format\": \"v2\": must be one of [attnproof-kernel-adapter/1]"});
        bad.put("\"F16\": \"f16\"", new String[] {"\"F8\": \"f8\"",
            "\"dtypes.F8\": \"f8\": the dtype must be one of [F32, F16, BF16]"});
        bad.put("{\"scalar\": \"batch\", \"type\": \"i32\"}", new String[] {"{\"scalar\": \"max_q\", \"type\": \"i32\"}",
            "\"entry_points[0].args[5].scalar\": \"max_q\": a dense entry has no max_q"});
        bad.put("{\"stream\": \"null\"}", new String[] {"{\"stream\": \"null\", \"tensor\": \"q\"}",
            "\"entry_points[0].args[12]\": {\"stream\":\"null\",\"tensor\":\"q\"}: must name exactly one of tensor,"
                + " cu_seqlens, scalar, stream"});
        bad.put("\"sources\": [\"fa2_sinks.cu\"]", new String[] {"\"sources\": [\"missing.cu\"]",
            "\"sources[0]\": \"missing.cu\": no such file"});
        int i = 0;
        for (var b : bad.entrySet()) {
            assertTrue(good.contains(b.getKey()), b.getKey());
            Path a = tmp.resolve("bad" + (i++) + ".json");
            Files.writeString(a, good.replaceFirst(java.util.regex.Pattern.quote(b.getKey()),
                    java.util.regex.Matcher.quoteReplacement(b.getValue()[0])), StandardCharsets.UTF_8);
            Cli r = Cli.run("kernel", "--adapter", a.toString(), "--out", tmp.resolve("out").toString(), "--corpus",
                    tmp.toString());
            assertEquals(2, r.exit(), r.toString());
            assertTrue(r.err().startsWith("attnproof kernel: " + a + ": " + b.getValue()[1]), r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
        Path dup = tmp.resolve("dup.json");
        Files.writeString(dup, good.replaceFirst("\"name\": \"fa2-sinks\",", "\"name\": \"a\", \"name\": \"b\","),
                StandardCharsets.UTF_8);
        Cli r = Cli.run("kernel", "--adapter", dup.toString(), "--out", tmp.resolve("out").toString());
        assertEquals(2, r.exit(), r.toString());
        assertTrue(r.err().contains("malformed JSON: Duplicate field 'name'"), r.err());
    }
    @Test
    @Claim("F1")
    void shardsMergeIntoOneColumnAndAMissingShardFailsTheMerge(Evidence ev, @TempDir Path tmp) throws IOException {
        Evidence e = ev.backend("kernel-fa2-sinks");
        e.seed(29_001);
        for (int k = 1; k <= 2; k++) {
            Cli r = kernel(ADAPTER, tmp.resolve("s" + k), "--shard", k + "/2", "--no-plain");
            e.checkEqual("exit_code_of_shard_" + k + "_of_2", r.exit(), 0);
        }
        Cli merged = kernel(ADAPTER, tmp.resolve("m"), "--merge", tmp.resolve("s1/outputs") + ","
                + tmp.resolve("s2/outputs"));
        System.out.println(merged);
        e.checkEqual("exit_code_of_the_merge", merged.exit(), 0);
        JsonNode st = status(tmp.resolve("m"));
        e.checkEqual("merged_cases_run", st.path("ran").size(), 4);
        e.checkEqual("merged_cases_skipped", st.path("skipped").size(), 1);
        Cli missing = kernel(ADAPTER, tmp.resolve("m2"), "--merge", tmp.resolve("s1/outputs").toString());
        e.checkEqual("exit_code_of_a_merge_missing_a_shard", missing.exit(), 2);
        assertEquals("attnproof kernel: --merge: shards [2] of 2 are missing: a failed, cancelled or skipped shard fails"
                + " the merge", missing.err().strip());
    }
}
