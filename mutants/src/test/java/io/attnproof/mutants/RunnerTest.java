package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner end to end on patches made for it: a patch that no longer applies and one that does not compile are
 * STALE (never killed), a no-op-equivalent patch SURVIVES, and a real mutant is KILLED with its killing test, its
 * message and its evidence values both ways, its evidence in its own directory.
 */
class RunnerTest {
    @TempDir
    static Path dir;

    static Map<String, MutantResult> results;

    @BeforeAll
    static void runTheTestPatches() throws Exception {
        Path catalog = Files.createDirectories(dir.resolve("catalog"));
        String rr = TestPatches.RAGGED_ROWS;
        // 1. Stale: the patch's context no longer matches the source (a context line edited in the diff).
        String live = TestPatches.mutation(rr, "max = Math.max(max, rowQ0[i]);", "max = Math.max(max, rowQ0[i] + 1);");
        String stale = live.replace(" ragged |= rowQ0[i] != q0;", " ragged |= rowQ0[i] == q0;");
        if (stale.equals(live)) {
            throw new IllegalStateException("the stale fixture no longer edits a context line:\n" + live);
        }
        TestPatches.write(catalog, "91-stale-context", "R3", stale);
        // 2. Syntax error: applies cleanly, does not compile.
        TestPatches.write(catalog, "92-syntax-error", "R3",
                TestPatches.mutation(rr, "boolean ragged = false;", "boolean ragged = false"));
        // 3. Equivalent: a local variable renamed; every R3 test still passes.
        String src = TestPatches.source(rr);
        TestPatches.write(catalog, "93-rename-local", "R3",
                TestPatches.diff(rr, src, src.replace("long max = Long.MIN_VALUE;", "long widest = Long.MIN_VALUE;")
                        .replace("max = Math.max(max, rowQ0[i]);", "widest = Math.max(widest, rowQ0[i]);")
                        .replace("Require.that(max == q0, \"max(rowQ0)\", max,",
                                "Require.that(widest == q0, \"max(rowQ0)\", widest,")));
        // 4. Killed: the refusal of a row ahead of the batch removed.
        TestPatches.write(catalog, "94-never-refuse-ahead", "R3", TestPatches.mutation(rr,
                "Require.that(rowQ0[i] <= q0,", "Require.that(true,"));
        // 5. A patch naming a claim no test proves is stale, not survived.
        TestPatches.write(catalog, "95-no-claim-test", "X1",
                TestPatches.mutation(rr, "boolean ragged = false;", "boolean ragged = 0 > 1;"));
        Campaign.Config base = Campaign.Config.fromSystemProperties();
        // Every catalog claim has tests now, so the claim tests are copied without X1's (CrossLaneTest) to give
        // patch 95 a claim that nothing proves.
        Path tests = copyWithout(base.sutTestClasses(), dir.resolve("test-classes"), "CrossLaneTest");
        Campaign.Config config = new Campaign.Config(base.repoRoot(), catalog, base.sutClasses(), tests,
                base.fixEvidence(), dir.resolve("out"), Shard.ALL, Set.of(), 2, java.time.Duration.ofSeconds(120));
        Campaign.Result r = new Campaign(config).run();
        results = r.mutants().stream().collect(Collectors.toMap(MutantResult::id, m -> m));
    }

    @Test
    void aPatchThatNoLongerAppliesIsStaleNeverKilled() {
        MutantResult r = results.get("91-stale-context");
        assertEquals(MutantResult.Status.STALE, r.status());
        assertTrue(r.detail().contains("does not apply"), r.detail());
        assertTrue(r.detail().contains("ragged |= rowQ0[i] == q0;"), r.detail());
        assertTrue(r.killers().isEmpty());
        assertEquals(0, r.testsRun());
    }

    @Test
    void aSyntaxErrorIsStaleWithTheCompilerMessage() {
        MutantResult r = results.get("92-syntax-error");
        assertEquals(MutantResult.Status.STALE, r.status());
        assertTrue(r.detail().startsWith("the mutated sources do not compile:\n" + TestPatches.RAGGED_ROWS + ":"),
                r.detail());
        assertTrue(r.detail().contains("error: ';' expected"), r.detail());
        assertEquals(0, r.testsRun());
    }

    @Test
    void aNoOpEquivalentPatchSurvives() {
        MutantResult r = results.get("93-rename-local");
        assertEquals(MutantResult.Status.SURVIVED, r.status(), String.valueOf(r.killers()));
        assertTrue(r.testsRun() > 0);
        assertEquals(0, r.testsFailed());
        assertTrue(r.values().isEmpty());
    }

    @Test
    void aRealMutantIsKilledWithItsTestMessageAndValuesBothWays() throws Exception {
        MutantResult r = results.get("94-never-refuse-ahead");
        assertEquals(MutantResult.Status.KILLED, r.status());
        assertEquals(List.of("RaggedDispatchTest#refusalsNameTheValues"),
                r.killers().stream().map(ClaimTests.Killer::test).toList());
        assertEquals("[claim R3, no seeds] refusals_not_as_specified = 1 elements differ in their bits; limit 0",
                r.killers().getFirst().message());
        EvidenceValues.Value v = r.values().getFirst();
        assertEquals("refusals_not_as_specified", v.metric());
        assertEquals(1.0, v.mutant().value());
        assertFalse(v.mutant().passed());
        assertTrue(v.fix() == null || v.fix().passed(), "with the fix the line passes");
        assertEquals(Double.POSITIVE_INFINITY, r.margin());
        // Its evidence went to its own directory, and only R3 tests ran.
        Path evidence = dir.resolve("out/evidence/94-never-refuse-ahead/RaggedDispatchTest.jsonl");
        List<String> lines = Files.readAllLines(evidence);
        assertFalse(lines.isEmpty());
        assertTrue(lines.stream().allMatch(l -> l.startsWith("{\"claim\":\"R3\"")), lines.toString());
    }

    @Test
    void aClaimWithoutTestsIsStale() {
        MutantResult r = results.get("95-no-claim-test");
        assertEquals(MutantResult.Status.STALE, r.status());
        assertTrue(r.detail().startsWith("no claim test proves [X1]"), r.detail());
    }

    @Test
    void aMutantThatOutrunsTheLimitTimesOut(@TempDir Path own) throws Exception {
        Path catalog = Files.createDirectories(own.resolve("catalog"));
        TestPatches.write(catalog, "96-sleeps", "R3", TestPatches.mutation(TestPatches.RAGGED_ROWS,
                "boolean ragged = false;", "boolean ragged = false; try { Thread.sleep(60_000); }"
                        + " catch (InterruptedException e) { Thread.currentThread().interrupt(); }"));
        Campaign.Config base = Campaign.Config.fromSystemProperties();
        Campaign.Config config = new Campaign.Config(base.repoRoot(), catalog, base.sutClasses(), base.sutTestClasses(),
                base.fixEvidence(), own.resolve("out"), Shard.ALL, Set.of(), 1, java.time.Duration.ofSeconds(2));
        MutantResult r = new Campaign(config).run().mutants().getFirst();
        // The run is interrupted at the limit and unwinds before the campaign returns: its thread is gone, so
        // nothing writes into this test's temporary directory while it is deleted.
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals("mutant-96-sleeps")),
                "the timed-out mutant's thread still runs after the campaign returned");
        assertEquals(MutantResult.Status.TIMEOUT, r.status());
        assertTrue(r.detail().startsWith("the claim tests ran past 2 s"), r.detail());
        assertTrue(r.killers().isEmpty(), "a timeout is not a kill");
    }

    @Test
    void resultsFilesAreWritten() throws Exception {
        List<Map<String, Object>> json = ResultsFiles.readJson(dir.resolve("out/results.json"));
        assertEquals(List.of("91-stale-context", "92-syntax-error", "93-rename-local", "94-never-refuse-ahead",
                "95-no-claim-test"), json.stream().map(m -> m.get("id")).toList());
        String md = Files.readString(dir.resolve("out/results.md"));
        assertTrue(md.startsWith("5 mutations, 1 caught (1 survived, 3 stale).\n"), md);
    }

    /** A copy of the class tree {@code from} without the classes whose file names start with {@code prefix}. */
    private static Path copyWithout(Path from, Path to, String prefix) throws java.io.IOException {
        try (var files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else if (!f.getFileName().toString().startsWith(prefix)) {
                    Files.copy(f, target);
                }
            }
        }
        return to;
    }
}
