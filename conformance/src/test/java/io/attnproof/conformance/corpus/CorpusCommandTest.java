package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cli.Cli;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code corpus export}, {@code run} and {@code check} print, derived from the manifest they wrote or read and the
 * checker's own outcomes: export's summary and cases per claim; check's row per claim, its stray-file warning (20
 * names at most), its FAIL list (40 at most, then how many more) and verdict; bad options as exit 2 naming the option,
 * the value and the rule. Everything is flushed before the command returns.
 */
class CorpusCommandTest {
    /** Claims of the small corpus with more than 40 checks between them, and quick to run. */
    static final String CLAIMS = "U5,B1,S6,B6,S1";
    @TempDir
    static Path shared;
    static Path corpus;
    static Path outputs;

    @TempDir
    Path dir;

    @BeforeAll
    static void exportAndRun() {
        SmallCorpus.exportAndRun(shared, CLAIMS);
        corpus = shared.resolve("corpus");
        outputs = shared.resolve("out");
    }

    @Test
    void exportSummarisesTheCorpusItWrote() throws IOException {
        for (boolean small : List.of(true, false)) {
            Path d = dir.resolve(small ? "small" : "full");
            List<String> args = new ArrayList<>(List.of("corpus", "export", d.toString(), "--claims",
                    small ? "S1,R5" : "R5", "--dtype", "F32"));
            if (small) {
                args.add("--small");
            }
            long t0 = System.nanoTime();
            Cli e = Cli.runBuffered(args.toArray(String[]::new));
            double wall = (System.nanoTime() - t0) / 1e9;
            assertEquals(0, e.exit(), e.toString());
            Manifest m = Manifest.read(d);
            long controls = m.checks().stream().filter(CheckSpec::control).count();
            List<String> lines = e.out().lines().toList();
            Matcher x = Pattern.compile(Pattern.quote("corpus export: " + d + ": " + m.cases().size() + " cases, "
                    + m.checks().size() + " checks (" + controls + " negative controls), ") + "([0-9.]+) MB, seed 13, "
                    + (small ? "small" : "full") + ", ([0-9.]+) s").matcher(lines.get(0));
            assertTrue(x.matches(), e.toString());
            assertEquals(String.format(Locale.ROOT, "%.1f", CorpusExport.size(d) / 1048576.0), x.group(1),
                    "the MB printed are the folder's bytes / 2^20: " + e);
            double s = Double.parseDouble(x.group(2));
            assertTrue(s >= 0 && s <= wall + 0.05, s + " s printed, the command took " + wall);
            StringBuilder per = new StringBuilder("  cases per claim:");
            for (String claim : CorpusGenerator.CLAIMS) {
                long n = m.cases().stream().filter(c -> c.claim().equals(claim)).count();
                if (n > 0) {
                    per.append(' ').append(claim).append(' ').append(n);
                }
            }
            assertEquals(List.of(per.toString()), lines.subList(1, lines.size()), e.toString());
        }
        Path full = dir.resolve("full");
        Path out = dir.resolve("out");
        Cli run = Cli.runBuffered("corpus", "run", full.toString(), "--out", out.toString());
        assertEquals(0, run.exit(), run.toString());
        assertTrue(run.out().startsWith("corpus run: " + Manifest.read(full).cases().size() + " outputs in " + out
                + " from " + full + " on cpu, "), run.toString());
    }

    /** The row the check table must print for one claim's outcomes (margin: limit / error, "exact" when infinite). */
    static String row(String claim, List<CorpusChecker.Outcome> l) {
        long pass = l.stream().filter(CorpusChecker.Outcome::passed).count();
        long controls = l.stream().filter(o -> o.check().control()).count();
        CorpusChecker.Outcome worst = l.getFirst();
        for (CorpusChecker.Outcome o : l) {
            worst = o.margin() < worst.margin() ? o : worst;
        }
        String margin = Double.isInfinite(worst.margin()) ? "exact"
                : String.format(Locale.ROOT, "%.3gx", worst.margin());
        return String.format(Locale.ROOT, "%-5s %7d %6d %6d %9d  %s (%s)", claim, l.size(), pass, l.size() - pass,
                controls, margin, worst.check().id());
    }

    @Test
    void checkPrintsOneRowPerClaimThenThePassAndTheEvidence() {
        Path ev = dir.resolve("ev");
        Cli c = Cli.runBuffered("corpus", "check", corpus.toString(), "--outputs", outputs.toString(), "--engine",
                "table", "--evidence-out", ev.toString());
        assertEquals(0, c.exit(), c.toString());
        CorpusChecker.Result r = CorpusChecker.check(corpus, outputs, "table", dir.resolve("ev-again"));
        List<String> expected = new ArrayList<>();
        expected.add(String.format(Locale.ROOT, "%-5s %7s %6s %6s %9s  %s", "claim", "checks", "pass", "fail",
                "controls", "smallest margin (check)"));
        for (String claim : CorpusGenerator.CLAIMS) {
            List<CorpusChecker.Outcome> l = r.outcomes().stream().filter(o -> o.check().claim().equals(claim)).toList();
            if (!l.isEmpty()) {
                expected.add(row(claim, l));
            }
        }
        expected.add("corpus check: PASS, every check (negative controls included)");
        expected.add("evidence: " + ev.resolve("CorpusChecker.jsonl") + " (backend table; ./attnproof ledger"
                + " --no-build shows it)");
        List<String> lines = c.out().lines().toList();
        assertEquals(expected, lines.subList(1, lines.size()), c.toString());
    }

    /**
     * No outputs at all: every check fails, 40 are listed and the rest counted, the verdict names the failing claims,
     * and without --evidence-out the evidence goes under the working directory's conformance/target. Outputs missing
     * for exactly 40 checks, with 20 stray files: the 20 named without "...", 40 listed and no count.
     */
    @Test
    void failingChecksAreListedUpToFortyAndStrayFilesNamedUpToTwenty() throws IOException {
        Manifest m = Manifest.read(corpus);
        Path none = Files.createDirectories(dir.resolve("none"));
        String engine = "corpus-command-test-" + ProcessHandle.current().pid();
        Path base = Path.of(System.getenv("ATTNPROOF_ROOT") == null || System.getenv("ATTNPROOF_ROOT").isBlank() ? "."
                : System.getenv("ATTNPROOF_ROOT"));
        Path engines = base.resolve("conformance").resolve("target").resolve("evidence-engines");
        Path made = Stream.iterate(engines, p -> p != null && !p.equals(base), Path::getParent)
                .filter(p -> !Files.exists(p)).reduce((a, b) -> b).orElse(engines.resolve(engine));
        Cli all;
        try {
            all = Cli.runBuffered("corpus", "check", corpus.toString(), "--outputs", none.toString(), "--engine",
                    engine);
            assertTrue(Files.isRegularFile(engines.resolve(engine).resolve("CorpusChecker.jsonl")), all.toString());
        } finally {
            try (Stream<Path> w = Files.walk(made)) {
                for (Path p : w.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        assertEquals(1, all.exit(), all.toString());
        int n = m.checks().size();
        assertTrue(n > 40, CLAIMS + " have more than 40 checks: " + n);
        List<String> listed = all.out().lines().filter(l -> l.startsWith("  FAIL ")).toList();
        assertEquals(40, listed.size(), all.toString());
        assertTrue(all.out().lines().anyMatch(l -> l.equals("  ... " + (n - 40) + " more failing checks")),
                all.toString());
        assertTrue(all.out().contains("corpus check: FAIL, " + n + " checks of claims " + String.join(", ",
                m.checks().stream().map(CheckSpec::claim).distinct().toList())), all.toString());
        assertTrue(all.out().contains("evidence: " + engines.resolve(engine).resolve("CorpusChecker.jsonl")
                + " (backend " + engine + ";"), all.toString());

        // Outputs missing for exactly 40 checks: drop cases, in order, while the checks naming them stay <= 40.
        Path some = Files.createDirectories(dir.resolve("some"));
        try (Stream<Path> s = Files.list(outputs)) {
            for (Path p : s.toList()) {
                Files.copy(p, some.resolve(p.getFileName()));
            }
        }
        Set<String> missing = new HashSet<>();
        int failing = 0;
        for (Manifest.Entry e : m.cases()) {
            Set<String> more = new HashSet<>(missing);
            more.add(e.id());
            int f = (int) m.checks().stream().filter(c -> CorpusExport.caseIds(c).stream().anyMatch(more::contains))
                    .count();
            if (f <= 40) {
                missing = more;
                failing = f;
                Files.delete(some.resolve(e.id() + ".npy"));
            }
        }
        assertEquals(40, failing, "cases whose outputs fail exactly 40 checks");
        List<String> stray = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            stray.add(String.format(Locale.ROOT, "stray-%02d.txt", i));
            Files.writeString(some.resolve(stray.getLast()), "not an output\n");
        }
        Cli forty = Cli.runBuffered("corpus", "check", corpus.toString(), "--outputs", some.toString(), "--engine",
                "forty", "--evidence-out", dir.resolve("ev").toString());
        assertEquals(1, forty.exit(), forty.toString());
        assertEquals(40, forty.out().lines().filter(l -> l.startsWith("  FAIL ")).count(), forty.toString());
        assertTrue(forty.out().lines().noneMatch(l -> l.contains(" more failing checks")), forty.toString());
        assertTrue(forty.out().lines().anyMatch(l -> l.equals("warning: 20 files in " + some + " are not outputs of"
                + " this corpus (ignored): " + String.join(", ", stray))), forty.toString());
    }

    @Test
    void aBadEngineNameAnUnknownLaneAndAnUnknownClaimAreExit2NamingTheOptionTheValueAndTheRule() {
        Cli export = Cli.run("corpus", "export", dir.resolve("x").toString(), "--claims", "Q9");
        assertEquals(2, export.exit(), export.toString());
        assertEquals("attnproof corpus export: --claims Q9: the corpus covers " + CorpusGenerator.CLAIMS,
                export.err().strip());
        Cli check = Cli.run("corpus", "check", dir.toString(), "--outputs", dir.toString(), "--engine", "my engine");
        assertEquals(2, check.exit(), check.toString());
        assertEquals("attnproof corpus check: --engine my engine: use letters, digits and . _ : + - only",
                check.err().strip());
        Cli run = Cli.run("corpus", "run", dir.toString(), "--out", dir.resolve("out").toString(), "--lane", "tpu");
        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().strip().startsWith("attnproof corpus run: backend = tpu: must be one of cpu,"),
                run.toString());
    }
}
