package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.backend.Backend;
import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cli.Cli;
import io.attnproof.ledger.ClaimRow;
import io.attnproof.ledger.Ledger;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The corpus: deterministic export within its size budgets, every claim with a negative control, the system under test
 * passing every check on cpu (and the emulated lanes on a subset), a missing output failing by name, and the engine's
 * evidence read by the ledger as one more column.
 */
class CorpusTest {
    static Path small;
    static final Map<String, CaseChecker.Reference> REFERENCES = new HashMap<>();

    @TempDir
    Path dir;

    @BeforeAll
    static void exportSmall() {
        REFERENCES.clear();   // not kept across runs of the class in one JVM (PIT hot-swaps mutants into one minion)
        small = SmallCorpus.corpus();
    }

    private static Map<String, byte[]> files(Path root) throws IOException {
        Map<String, byte[]> out = new java.util.TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.filter(Files::isRegularFile).toList()) {
                out.put(root.relativize(p).toString(), Files.readAllBytes(p));
            }
        }
        return out;
    }

    @Test
    void theSameSeedGivesTheSameBytesAndTheSmallCorpusStaysUnder10Mb() throws IOException {
        Path again = dir.resolve("again");
        assertEquals(0, Cli.run("corpus", "export", again.toString(), "--small").exit());
        Map<String, byte[]> a = files(small);
        Map<String, byte[]> b = files(again);
        assertEquals(a.keySet(), b.keySet());
        a.forEach((name, bytes) -> assertArrayEquals(bytes, b.get(name), name + " differs between two exports"));
        long size = CorpusExport.size(small);
        assertTrue(size < 10L * 1024 * 1024, "small corpus " + size + " bytes must stay under 10 MB");
        Path other = dir.resolve("other");
        assertEquals(0, Cli.run("corpus", "export", other.toString(), "--small", "--seed", "14").exit());
        assertFalse(java.util.Arrays.equals(a.get("cases/U5-r4-tk129-F32/q.npy"),
                files(other).get("cases/U5-r4-tk129-F32/q.npy")), "another seed must give other values");
    }

    @Test
    void theFullCorpusCoversEveryClaimAtEveryDtypeUnder200Mb() {
        CorpusGenerator g = CorpusGenerator.build(13, false);
        long bytes = g.cases().stream().mapToLong(CaseSpec::bytes).sum();
        assertTrue(bytes < 200L * 1024 * 1024, "full corpus " + bytes + " bytes must stay under 200 MB");
        for (String claim : CorpusGenerator.CLAIMS) {
            Set<String> dtypes = g.cases().stream().filter(c -> c.claim().equals(claim)).map(CaseSpec::dtype)
                    .collect(Collectors.toSet());
            assertEquals(Set.of("F32", "F16", "BF16"), dtypes, claim + " at every dtype");
            assertTrue(g.checks().stream().anyMatch(c -> c.claim().equals(claim) && c.control()),
                    claim + " has a negative control");
            assertTrue(g.checks().stream().anyMatch(c -> c.claim().equals(claim) && !c.control()),
                    claim + " has a positive check");
        }
        Set<String> types = g.checks().stream().map(CheckSpec::type).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of("oracle", "same-bits", "same-within-rule", "degenerate"), types);
    }

    @Test
    void theSystemOnCpuPassesEveryCheckAndEveryControlCaseFailsItsOwnCheck() {
        Path out = dir.resolve("out");
        Cli run = Cli.run("corpus", "run", small.toString(), "--out", out.toString(), "--lane", "cpu");
        assertEquals(0, run.exit(), run.toString());
        CorpusChecker.Result r = CorpusChecker.check(small, out, "corpus-cpu", dir.resolve("ev"), REFERENCES);
        assertTrue(r.passed(), () -> r.failures().toString());
        Set<String> withControls = r.outcomes().stream().filter(o -> o.check().control())
                .map(o -> o.check().claim()).collect(Collectors.toSet());
        assertEquals(Set.copyOf(CorpusGenerator.CLAIMS), withControls);
        // A control case run through `attnproof check` against its claim's case fails: it has teeth on its own.
        Cli check = Cli.run("check", "--case", small.resolve("cases/U1-tk16-F32/case.json").toString(), "--actual",
                out.resolve("U1-tk16-window+1-F32.npy").toString());
        assertEquals(1, check.exit(), check.toString());
        // The ledger reads the engine's evidence as one more backend column.
        Ledger l = Ledger.build(dir.resolve("no-repo"), List.of(dir.resolve("ev")));
        Set<String> claims = l.rows().stream().filter(x -> x.backend().equals("corpus-cpu")).map(ClaimRow::claim)
                .collect(Collectors.toSet());
        assertEquals(Set.copyOf(CorpusGenerator.CLAIMS), claims);
        assertTrue(l.rows().stream().allMatch(x -> x.status() == io.attnproof.ledger.ClaimRow.Status.PASS), l.summaryLine());
    }

    @Test
    void theEmulatedLanesPassTheSinksAndDegenerateClaims() {
        Path sub = dir.resolve("sub");
        assertEquals(0, Cli.run("corpus", "export", sub.toString(), "--small", "--claims", "U1,S1,S6,B6").exit());
        for (Backend lane : List.of(Backend.cudaEmu(), Backend.metalEmu())) {
            Assumptions.assumeTrue(lane.unavailable().isEmpty(), () -> lane.name() + ": " + lane.unavailable().get());
            Path out = dir.resolve(lane.name());
            Cli run = Cli.run("corpus", "run", sub.toString(), "--out", out.toString(), "--lane", lane.name());
            assertEquals(0, run.exit(), run.toString());
            Cli check = Cli.run("corpus", "check", sub.toString(), "--outputs", out.toString(), "--engine",
                    "corpus-" + lane.name(), "--evidence-out", dir.resolve("ev-" + lane.name()).toString());
            assertEquals(0, check.exit(), check.toString());
        }
    }

    @Test
    void aMissingOutputFailsNamingTheCaseAndBadInputIsExit2() throws IOException {
        Path sub = dir.resolve("r5");
        Cli export = Cli.run("corpus", "export", sub.toString(), "--claims", "R5", "--dtype", "F32");
        assertEquals(0, export.exit(), export.toString());
        assertTrue(export.out().contains("cases per claim: R5 3"), export.toString());
        Path out = dir.resolve("out");
        assertEquals(0, Cli.run("corpus", "run", sub.toString(), "--out", out.toString()).exit());
        Files.delete(out.resolve("R5-uniform-F32.npy"));
        Cli check = Cli.run("corpus", "check", sub.toString(), "--outputs", out.toString(), "--engine", "x",
                "--evidence-out", dir.resolve("ev").toString());
        assertEquals(1, check.exit(), check.toString());
        assertTrue(check.out().contains("missing output") && check.out().contains("R5-uniform-F32"), check.toString());
        assertTrue(Files.readString(dir.resolve("ev/CorpusChecker.jsonl")).contains("\"metric\":\"output_present\""));

        Cli unknown = Cli.run("corpus", "export", dir.resolve("x").toString(), "--claims", "Q9");
        assertEquals(2, unknown.exit(), unknown.toString());
        Cli noCorpus = Cli.run("corpus", "check", dir.resolve("nowhere").toString(), "--outputs", out.toString(),
                "--engine", "x");
        assertEquals(2, noCorpus.exit(), noCorpus.toString());
        assertTrue(noCorpus.err().contains("manifest.json"), noCorpus.toString());
        Cli budget = Cli.run("corpus", "export", dir.resolve("tiny").toString(), "--small", "--max-mb", "0.05");
        assertEquals(0, budget.exit(), budget.toString());
        assertTrue(budget.out().contains("--max-mb dropped"), budget.toString());
        assertTrue(CorpusExport.size(dir.resolve("tiny")) < 0.05 * 1024 * 1024 + 64 * 1024);
    }
}
