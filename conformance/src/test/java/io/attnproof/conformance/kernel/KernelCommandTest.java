package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.attnproof.conformance.cases.SinksCase;
import io.attnproof.conformance.cli.Cli;
import io.attnproof.conformance.corpus.CorpusChecker;
import io.attnproof.conformance.corpus.CorpusGenerator;
import io.attnproof.conformance.corpus.KernelFixtureCorpus;
import io.attnproof.conformance.corpus.Manifest;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attnproof kernel}'s command line: bad options are exit 2 naming the option, the value and the rule; a run
 * prints its lanes, shard and build time, then the report (one row per claim, the SKIP reasons, at most 40 failing
 * checks, the verdict, where the evidence went), every number derived from the corpus, the run's status file and the
 * checker's own outcomes, and flushed before the command returns.
 */
@Timeout(900)
class KernelCommandTest {
    static final Path ADAPTER = KernelLaneTest.ADAPTER;
    static final String ENGINE = "kernel-" + Adapter.read(ADAPTER).name();

    @BeforeAll
    static void corpus(@TempDir Path tmp) throws Exception {
        KernelLaneTest.corpus(tmp);
    }

    /** {@code attnproof kernel --adapter ADAPTER --corpus DIR --out OUT MORE...}, stdout flushed only when told. */
    static Cli kernel(Path dir, Path out, String... more) {
        List<String> a = new ArrayList<>(List.of("kernel", "--adapter", ADAPTER.toString(), "--corpus", dir.toString(),
                "--out", out.toString()));
        a.addAll(List.of(more));
        return Cli.runBuffered(a.toArray(String[]::new));
    }

    static Map<String, String> map(JsonNode o) {
        Map<String, String> m = new LinkedHashMap<>();
        o.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }

    /**
     * The report the command must print for the checker's outcomes {@code r} and the run's SKIP reasons: the header,
     * per claim (in the claims' order) checks, pass, fail, skip, controls judged and the smallest margin of a judged
     * check, then the SKIP reasons with their case counts, the first 40 failing checks and how many more, the verdict
     * and the evidence file.
     */
    static List<String> report(CorpusChecker.Result r, Map<String, String> skipped, String engine) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "%-5s %7s %6s %6s %6s %9s  %s", "claim", "checks", "pass", "fail", "skip",
                "controls", "smallest margin (check)"));
        for (String claim : CorpusGenerator.CLAIMS) {
            List<CorpusChecker.Outcome> all = r.outcomes().stream().filter(o -> o.check().claim().equals(claim))
                    .toList();
            if (all.isEmpty()) {
                continue;
            }
            List<CorpusChecker.Outcome> judged = all.stream().filter(o -> o.skipped() == null).toList();
            long fail = all.stream().filter(o -> !o.passed()).count();
            long controls = judged.stream().filter(o -> o.check().control()).count();
            CorpusChecker.Outcome worst = null;
            for (CorpusChecker.Outcome o : judged) {
                worst = worst == null || o.margin() < worst.margin() ? o : worst;
            }
            String w = worst == null ? "-" : (Double.isInfinite(worst.margin()) ? "exact"
                    : String.format(Locale.ROOT, "%.3gx", worst.margin())) + " (" + worst.check().id() + ")";
            lines.add(String.format(Locale.ROOT, "%-5s %7d %6d %6d %6d %9d  %s", claim, all.size(),
                    judged.size() - fail, fail, all.size() - judged.size(), controls, w));
        }
        Map<String, Integer> reasons = new LinkedHashMap<>();
        skipped.values().forEach(v -> reasons.merge(v, 1, Integer::sum));
        reasons.forEach((why, n) -> lines.add("  SKIP " + n + (n == 1 ? " case: " : " cases: ") + why));
        List<CorpusChecker.Outcome> failures = r.failures();
        failures.stream().limit(40).forEach(f -> lines.add("  FAIL " + f.check().id() + ": " + f.detail()));
        if (failures.size() > 40) {
            lines.add("  ... " + (failures.size() - 40) + " more failing checks");
        }
        long judged = r.outcomes().stream().filter(o -> o.skipped() == null).count();
        lines.add(failures.isEmpty() ? "kernel: PASS, " + judged + " checks judged (negative controls included), "
                + (r.outcomes().size() - judged) + " skipped"
                : "kernel: FAIL, " + failures.size() + " checks of claims " + String.join(", ", failures.stream()
                        .map(f -> f.check().claim()).distinct().toList()));
        lines.add("evidence: " + r.evidenceFile() + " (backend " + engine + "; ./attnproof ledger --no-build shows it)");
        return lines;
    }

    /** The checker's own outcomes on the outputs of a run in OUT, with the run's SKIP reasons and faults. */
    static CorpusChecker.Result judged(Path dir, Path out, Path status, Path ev) throws IOException {
        JsonNode st = KernelLaneTest.JSON.readTree(status.toFile());
        return CorpusChecker.check(dir, out.resolve("outputs"), ENGINE, ev, new HashMap<>(), map(st.path("skipped")),
                map(st.path("faults")));
    }

    @Test
    void aBadEngineABadShardAndAShardWithAMergeAreExit2NamingTheOptionTheValueAndTheRule(@TempDir Path tmp) {
        Path corpus = KernelLaneTest.corpus;
        Cli engine = kernel(corpus, tmp.resolve("a"), "--engine", "my kernel");
        assertEquals(2, engine.exit(), engine.toString());
        assertEquals("attnproof kernel: --engine my kernel: use letters, digits and . _ : + - only",
                engine.err().strip());
        Cli both = kernel(corpus, tmp.resolve("b"), "--shard", "1/2", "--merge", tmp.toString());
        assertEquals(2, both.exit(), both.toString());
        assertEquals("attnproof kernel: --shard and --merge: a shard runs, the merge judges; name one",
                both.err().strip());
        Cli shard = kernel(corpus, tmp.resolve("c"), "--shard", "3/2", "--no-plain");
        assertEquals(2, shard.exit(), shard.toString());
        assertEquals("attnproof kernel: --shard 3/2: must be k/n with 1 <= k <= n", shard.err().strip());
        assertFalse(Files.exists(tmp.resolve("a/outputs")), "a refused run writes no outputs");
    }

    /**
     * The worked example on the fixture, both lanes: the run line (adapter, source, shard 1/1, cases ran on the checked
     * and plain lanes, skipped, faulted, a build time within the command's own wall time), the report and the line
     * saying the fixture is a derived corpus.
     */
    @Test
    void theRunLineTheReportAndTheDerivedCorpusLine(@TempDir Path tmp) throws IOException {
        Path corpus = KernelLaneTest.corpus;
        Path out = tmp.resolve("out");
        long t0 = System.nanoTime();
        Cli r = kernel(corpus, out, "--evidence-out", out.resolve("evidence").toString());
        double wall = (System.nanoTime() - t0) / 1e9;
        assertEquals(0, r.exit(), r.toString());
        Path status = out.resolve("outputs/kernel-run-1-of-1.json");
        JsonNode st = KernelLaneTest.JSON.readTree(status.toFile());
        List<String> lines = r.out().lines().toList();
        Matcher m = Pattern.compile(Pattern.quote("kernel: " + Adapter.read(ADAPTER).name() + " ("
                + KernelLaneTest.SOURCE.getFileName() + "), shard 1/1: " + st.path("ran").size()
                + " cases ran on the checked and plain lanes, " + st.path("skipped").size() + " skipped, "
                + st.path("faults").size() + " faulted; build ") + "([0-9.]+) s, run ([0-9.]+) s").matcher(lines.get(0));
        assertTrue(m.matches(), r.toString());
        double build = Double.parseDouble(m.group(1));
        assertTrue(build >= 0 && build <= wall + 0.05, "build " + build + " s within the command's " + wall + " s");
        CorpusChecker.Result want = judged(corpus, out, status, tmp.resolve("ev"));
        List<String> expected = new ArrayList<>(report(want, map(st.path("skipped")), ENGINE));
        expected.set(expected.size() - 1, expected.getLast().replace(want.evidenceFile().toString(),
                out.resolve("evidence/CorpusChecker.jsonl").toString()));
        expected.add("kernel: " + corpus + " is a derived corpus (scale " + Manifest.read(corpus).scale()
                + ", not sealed): it reproduces a failure; it is not a conformance verdict");
        assertEquals(expected, lines.subList(1, lines.size()), r.toString());
    }

    /** One shard on the checked lane only: the run line says so, then where the shard's outputs and status went. */
    @Test
    void aShardOnTheCheckedLaneSaysWhereItsOutputsWentAndJudgesNothing(@TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("out");
        Cli r = kernel(KernelLaneTest.corpus, out, "--shard", "1/2", "--no-plain");
        assertEquals(0, r.exit(), r.toString());
        JsonNode st = KernelLaneTest.JSON.readTree(out.resolve("outputs/kernel-run-1-of-2.json").toFile());
        List<String> lines = r.out().lines().toList();
        assertEquals(2, lines.size(), r.toString());
        assertTrue(lines.get(0).contains(", shard 1/2: " + st.path("ran").size() + " cases ran on the checked lane, "),
                r.toString());
        assertEquals("kernel: shard outputs and kernel-run-1-of-2.json in " + out.resolve("outputs")
                + "; judge every shard with --merge", lines.get(1));
        assertFalse(Files.exists(out.resolve("evidence")), "a shard judges nothing");
    }

    /**
     * A sealed corpus whose every case is outside the envelope (union cases): the report (every claim's smallest
     * margin "-", nothing judged) and no derived-corpus line, then exit 2 naming the corpus: nothing was judged.
     */
    @Test
    void aCorpusEntirelyOutsideTheEnvelopeIsExit2AndNotADerivedCorpus(@TempDir Path tmp) throws IOException {
        Path union = tmp.resolve("union");
        Cli export = Cli.run("corpus", "export", union.toString(), "--small", "--claims", "U1", "--dtype", "F32");
        assertEquals(0, export.exit(), export.toString());
        Path out = tmp.resolve("out");
        Cli r = kernel(union, out, "--no-plain", "--evidence-out", tmp.resolve("ev").toString());
        assertEquals(2, r.exit(), r.toString());
        assertEquals("attnproof kernel: no check of " + union + " is inside the adapter's envelope (every case SKIP):"
                + " nothing was judged", r.err().strip());
        Path status = out.resolve("outputs/kernel-run-1-of-1.json");
        CorpusChecker.Result want = judged(union, out, status, tmp.resolve("ev"));
        assertTrue(want.outcomes().stream().allMatch(o -> o.skipped() != null), "every check skipped");
        List<String> lines = r.out().lines().toList();
        assertEquals(report(want, map(KernelLaneTest.JSON.readTree(status.toFile()).path("skipped")), ENGINE),
                lines.subList(1, lines.size()), r.toString());
    }

    /**
     * A kernel that faults on every case but the first (a stand-in lane), merged from its one shard: the claim's row
     * counts the pass, the faults and the two cases outside the envelope (one SKIP line, "2 cases"), its smallest margin
     * is the first fault's; at most 40 failing checks are listed, then how many more (none at exactly 40); and without
     * --evidence-out the evidence goes under the repository root ({@code -Dattnproof.root}).
     */
    @Test
    void failingChecksAreListedUpToFortyAndTheEvidenceGoesUnderTheRoot(@TempDir Path tmp) throws IOException {
        Adapter adapter = Adapter.read(ADAPTER);
        for (int faulted : List.of(41, 40)) {
            Path dir = tmp.resolve("corpus-" + faulted);
            List<String> ids = KernelFixtureCorpus.writeDecodes(dir, faulted + 1, 2);
            Path cpu = tmp.resolve("cpu-" + faulted);
            Cli run = Cli.run("corpus", "run", dir.toString(), "--out", cpu.toString());
            assertEquals(0, run.exit(), run.toString());
            double[] first = Npy.readWide(cpu.resolve(ids.getFirst() + ".npy")).values();
            // The first case passes with the system's own output; every later one faults.
            List<SinksCase> seen = new ArrayList<>();
            KernelLane stub = new StandInLane("checked", c -> seen.size() == 1 ? new KernelLibrary.Call(first, null)
                    : new KernelLibrary.Call(null, "out-of-bounds read (stand-in lane)"), seen);
            Path shard = tmp.resolve("shard-" + faulted);
            KernelRun.run(dir, shard, adapter, stub, null, new KernelRun.Shard(1, 1));
            Path root = tmp.resolve("root-" + faulted);
            Path out = tmp.resolve("out-" + faulted);
            String before = System.getProperty("attnproof.root");
            Cli r;
            System.setProperty("attnproof.root", root.toString());
            try {
                r = kernel(dir, out, "--merge", shard.toString());
            } finally {
                if (before == null) {
                    System.clearProperty("attnproof.root");
                } else {
                    System.setProperty("attnproof.root", before);
                }
            }
            assertEquals(1, r.exit(), r.toString());
            Path evidence = root.resolve("conformance/target/evidence-engines").resolve(ENGINE)
                    .resolve("CorpusChecker.jsonl");
            assertTrue(Files.isRegularFile(evidence), r.toString());
            CorpusChecker.Result want = judged(dir, out, out.resolve("outputs/kernel-run-1-of-1.json"),
                    tmp.resolve("ev-" + faulted));
            assertEquals(faulted, want.failures().size(), "every check of a faulted case fails");
            List<String> expected = new ArrayList<>(report(want, map(KernelLaneTest.JSON.readTree(
                    shard.resolve("kernel-run-1-of-1.json").toFile()).path("skipped")), ENGINE));
            expected.set(expected.size() - 1, expected.getLast().replace(want.evidenceFile().toString(),
                    evidence.toString()));
            expected.add("kernel: " + dir + " is a derived corpus (scale kernel-fixture, not sealed): it reproduces a"
                    + " failure; it is not a conformance verdict");
            List<String> lines = r.out().lines().toList();
            assertEquals(expected, lines.subList(1, lines.size()), r.toString());
            assertTrue(expected.contains("  SKIP 2 cases: head dim 16 outside the adapter's head dims "
                    + adapter.headDims()), expected.toString());
            assertEquals(faulted > 40, r.out().contains(" more failing checks"), r.toString());
            assertTrue(r.out().contains("B1:oracle:K-decode-1-F32)"), "the first fault is the smallest margin: " + r);
            assertTrue(Set.copyOf(lines).contains("kernel: FAIL, " + faulted + " checks of claims B1"), r.toString());
        }
    }

    /** The worked example copied into {@code dir} with {@code edit} applied to its source; returns the adapter. */
    static Path variant(Path dir, java.util.function.UnaryOperator<String> edit) throws IOException {
        Files.createDirectories(dir);
        String source = Files.readString(KernelLaneTest.SOURCE);
        String edited = edit.apply(source);
        assertFalse(edited.equals(source), "the edit applies");
        Files.writeString(dir.resolve(KernelLaneTest.SOURCE.getFileName()), edited);
        return Files.copy(ADAPTER, dir.resolve(ADAPTER.getFileName()));
    }

    /**
     * Both lanes are built and compared unless --no-plain: a source whose plain build (-DATTNPROOF_EMU_PLAIN) scales
     * its output by 2 faults every case it runs, naming the difference; a source whose plain build does not compile
     * is exit 2 naming the failed build (the checked one compiles).
     */
    @Test
    void thePlainLaneIsBuiltAndComparedAndItsFailedBuildIsExit2(@TempDir Path tmp) throws IOException {
        assumeTrue(KernelMutantsTest.campaign(), "SKIP: builds two edited copies of the example (about a minute and a"
                + " half at -O0); runs with -Dattnproof.kernel.mutants=true (the campaigns workflow's kernel job)");
        Path differs = variant(tmp.resolve("differs"), s -> s.replace("#include <cfloat>\n", "#include <cfloat>\n"
                + "#ifdef ATTNPROOF_EMU_PLAIN\n#define PLAIN_SCALE 2.f\n#else\n#define PLAIN_SCALE 1.f\n#endif\n")
                .replace("from_float<T>(acc[i] * alpha * inv)", "from_float<T>(acc[i] * alpha * inv * PLAIN_SCALE)"));
        Path out = tmp.resolve("out");
        Cli r = Cli.run("kernel", "--adapter", differs.toString(), "--corpus", KernelLaneTest.corpus.toString(),
                "--out", out.toString(), "--evidence-out", tmp.resolve("ev").toString());
        assertEquals(1, r.exit(), r.toString());
        JsonNode st = KernelLaneTest.JSON.readTree(out.resolve("outputs/kernel-run-1-of-1.json").toFile());
        assertEquals(0, st.path("ran").size(), r.toString());
        assertTrue(st.path("faults").size() > 0, r.toString());
        st.path("faults").forEach(f -> assertTrue(f.asText().startsWith("the checked and plain builds differ in "),
                f.asText()));

        Path refused = variant(tmp.resolve("refused"), s -> s.replace("#include <cfloat>\n", "#include <cfloat>\n"
                + "#ifdef ATTNPROOF_EMU_PLAIN\n#error this source refuses the plain build\n#endif\n"));
        Cli p = Cli.run("kernel", "--adapter", refused.toString(), "--corpus", KernelLaneTest.corpus.toString(),
                "--out", tmp.resolve("out2").toString(), "--evidence-out", tmp.resolve("ev2").toString());
        assertEquals(2, p.exit(), p.toString());
        assertTrue(p.err().startsWith("attnproof kernel: ") && p.err().contains("plain")
                && p.err().contains("failed (exit "), p.toString());
        assertTrue(p.err().contains("this source refuses the plain build"), p.toString());
    }
}
