package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.SinksCase;
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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claim F1 on the Metal worked example, examples/kernels/metal/sinks_decode.metal with its adapter: the kernel lane
 * builds the source unchanged through the MSL front end (checked and plain lanes), dispatches each case as the
 * adapter's host does (one-pass decode, the two-pass decode's partials then reduce, or the prefill, chosen by "when")
 * and judges it through the corpus's own checks; the head dim outside the envelope SKIPs with the reason.
 */
@Timeout(900)
class MetalKernelLaneTest {
    static final Path SOURCE = KernelLaneTest.ROOT.resolve("examples/kernels/metal/sinks_decode.metal");
    static final Path ADAPTER = KernelLaneTest.ROOT.resolve("examples/kernels/metal/sinks_decode.adapter.json");
    static Path corpus;

    @BeforeAll
    static void corpus(@TempDir Path tmp) throws Exception {
        if (KernelLaneTest.corpus == null) {
            KernelLaneTest.corpus(tmp); // the libclang check (a SKIP where the front end cannot run)
        }
        corpus = tmp.resolve("metal-corpus");
        KernelFixtureCorpus.writeMetal(corpus);
    }

    static Cli kernel(Path adapter, Path out, String... more) {
        List<String> a = new ArrayList<>(List.of("kernel", "--adapter", adapter.toString(), "--corpus",
                corpus.toString(), "--out", out.toString(), "--evidence-out", out.resolve("evidence").toString()));
        a.addAll(List.of(more));
        return Cli.run(a.toArray(String[]::new));
    }

    static final List<String> JUDGED = List.of("B1:oracle:M-decode-b2-gqa-F32", "B1:oracle:M-decode-w9-F16",
            "B1:oracle:M-decode-kv1025-BF16", "B1:oracle:M-decode-kv1025-w300-nosinks-F32",
            "S1:oracle:M-prefill-b2-gqa-F16", "S1:oracle:M-prefill-w2-nosinks-F32",
            "B1:control-oracle:M-decode-window1-F32");

    @Test
    @Claim("F1")
    void theMetalWorkedExamplePassesInsideItsEnvelopeAndSkipsTheRestWithTheReason(Evidence ev, @TempDir Path out)
            throws IOException {
        Evidence e = ev.backend("kernel-metal-sinks-decode");
        e.seed(29_101);
        Cli r = kernel(ADAPTER, out);
        System.out.println(r);
        e.checkEqual("exit_code_of_attnproof_kernel", r.exit(), 0);
        JsonNode st = KernelLaneTest.status(out);
        e.checkEqual("cases_run_on_checked_and_plain_lanes", st.path("ran").size(), 7);
        e.checkEqual("cases_faulted", st.path("faults").size(), 0);
        String why = st.path("skipped").path("M-d16-F32").asText();
        e.checkEqual("skip_reason_names_the_head_dim", why.contains("head dim 16 outside the adapter's head dims") ? 1
                : 0, 1);
        Map<String, List<JsonNode>> lines = KernelLaneTest.lines(out);
        long skipJudged = lines.get("B1:oracle:M-d16-F32").stream()
                .filter(n -> !n.path("kind").asText().equals("skip")).count();
        e.checkEqual("judged_lines_of_the_skipped_check", skipJudged, 0);
        for (String id : JUDGED) {
            List<JsonNode> l = lines.get(id);
            long failed = l.stream().filter(n -> n.has("passed") && !n.path("passed").asBoolean()).count();
            long checks = l.stream().filter(n -> List.of("check", "control").contains(n.path("kind").asText())).count();
            e.checkEqual("failed_lines[" + id + "]", failed, 0);
            e.checkAtLeast("judged_lines[" + id + "]", checks, 1);
        }
        // The route each case takes: decode one pass up to 1024 keys, two dispatches (partials, reduce) beyond.
        Adapter a = Adapter.read(ADAPTER);
        for (var want : Map.of("M-decode-b2-gqa-F32", "sinks_decode_{dtype}", "M-decode-kv1025-BF16",
                "sinks_decode_partials_{dtype} sinks_decode_reduce_{dtype}", "M-prefill-b2-gqa-F16",
                "sinks_prefill_{dtype}").entrySet()) {
            SinksCase c = (SinksCase) CaseReader.readAny(corpus.resolve("cases").resolve(want.getKey())
                    .resolve("case.json"));
            String got = String.join(" ", a.entryFor(c).dispatches().stream().map(Adapter.Dispatch::kernel).toList());
            e.checkEqual("route_is_" + want.getValue().replace(' ', '+') + "[" + want.getKey() + "]",
                    got.equals(want.getValue()) ? 1 : 0, 1);
        }
    }

    @Test
    void badMetalAdaptersAreOneLineNamingTheFieldTheValueAndTheRule(@TempDir Path tmp) throws IOException {
        String good = Files.readString(ADAPTER, StandardCharsets.UTF_8);
        Files.copy(SOURCE, tmp.resolve("sinks_decode.metal"));
        Map<String, String[]> bad = new java.util.LinkedHashMap<>();
        bad.put("\"grid\": [\"q_heads\", \"batch\", 1]", new String[] {"\"grid\": [\"q_heads\", \"heads\", 1]",
            "\"entry_points[0].dispatches[0].grid[1]\": \"heads\": an expression is a non-negative integer, an integer"
                + " scalar name, or {\"ceil_div\"|\"mul\"|\"add\": [a, b]}"});
        bad.put("{\"intermediate\": \"part\"},\n            {\"params\": true}", new String[] {
            "{\"intermediate\": \"parts\"},\n            {\"params\": true}",
            "\"entry_points[1].dispatches[0].buffers[3].intermediate\": \"parts\": not one of the entry's"
                + " intermediates [part]"});
        bad.put("\"when\": {\"eq\": [\"q_len\", 1]}", new String[] {"\"when\": {\"is\": [\"q_len\", 1]}",
            "\"entry_points[1].when\": {\"is\":[\"q_len\",1]}: a condition is {\"eq\"|\"ne\"|\"lt\"|\"le\"|\"gt\"|\"ge\":"
                + " [a, b]} over expressions, or {\"all\": [conditions]}"});
        bad.put("\"kernel\": \"sinks_prefill_{dtype}\"", new String[] {"\"kernel\": \"sinks_prefill\"",
            "\"entry_points[2].dispatches[0].kernel\": \"sinks_prefill\": must contain {dtype} when the adapter names 3"
                + " dtypes (one kernel each)"});
        int i = 0;
        for (var b : bad.entrySet()) {
            assertTrue(good.contains(b.getKey()), b.getKey());
            Path a = tmp.resolve("bad" + (i++) + ".json");
            Files.writeString(a, good.replaceFirst(java.util.regex.Pattern.quote(b.getKey()),
                    java.util.regex.Matcher.quoteReplacement(b.getValue()[0])), StandardCharsets.UTF_8);
            Cli r = Cli.run("kernel", "--adapter", a.toString(), "--out", tmp.resolve("out").toString(), "--corpus",
                    tmp.toString());
            assertEquals(2, r.exit(), r.toString());
            assertEquals("attnproof kernel: " + a + ": " + b.getValue()[1], r.err().strip());
        }
        // A dense entry without "when" before another dense entry: the later one could never run.
        Path dead = tmp.resolve("dead.json");
        Files.writeString(dead, good.replace("\"when\": {\"eq\": [\"q_len\", 1]},", ""), StandardCharsets.UTF_8);
        Cli r = Cli.run("kernel", "--adapter", dead.toString(), "--out", tmp.resolve("out").toString());
        assertEquals(2, r.exit(), r.toString());
        assertEquals("attnproof kernel: " + dead + ": \"entry_points[2].cases\": \"dense\": an earlier entry without"
                + " \"when\" serves every dense case: this one would never run (one entry per layout, or a \"when\" on"
                + " each but the last)", r.err().strip());
    }
}
