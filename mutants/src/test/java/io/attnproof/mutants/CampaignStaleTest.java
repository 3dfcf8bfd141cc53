package io.attnproof.mutants;

import static io.attnproof.mutants.TestPatches.TINY;
import static io.attnproof.mutants.TestPatches.TINY_SOURCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole campaign over a throw-away repository whose mutants never reach a claim test (RunnerTest runs real ones,
 * but seconds per mutation, so it stays out of PIT): a patched file that is gone, a context that no longer matches,
 * a source that does not compile and one that compiles but whose claim no test proves are each stale with their
 * reason; the default tier leaves a sweep mutant out; the results files, the campaign summary, the only-list and a
 * shard are written and named by their rules. Degenerate if every mutant went stale for one reason: the four
 * details differ. The killed and survived paths need the claim tests themselves (RunnerTest).
 */
class CampaignStaleTest {
    @TempDir
    Path dir;


    private Campaign.Config config(Path out, Shard shard, Set<String> only) {
        return new Campaign.Config(dir, dir.resolve("catalog"), dir.resolve("classes"), dir.resolve("test-classes"),
                dir.resolve("evidence"), out, shard, only, 2, Duration.ofSeconds(60), dir.resolve("c/classes"),
                dir.resolve("c/test-classes"), dir.resolve("c/evidence"), false);
    }

    @Test
    void mutantsThatReachNoClaimTestAreStaleEachWithItsReason() throws Exception {
        Files.createDirectories(dir.resolve("classes"));
        Files.createDirectories(dir.resolve("test-classes"));
        Path tiny = dir.resolve(TINY);
        Files.createDirectories(tiny.getParent());
        Files.writeString(tiny, TINY_SOURCE);
        Path catalog = Files.createDirectories(dir.resolve("catalog"));
        String gone = PatchParser.SOURCE_ROOT + "io/attnproof/attention/Gone.java";
        TestPatches.write(catalog, "01-gone", "R1",
                TestPatches.diff(gone, TINY_SOURCE, TINY_SOURCE.replace("1;", "2;")));
        TestPatches.write(catalog, "02-moved", "R1", TestPatches.diff(TINY, TINY_SOURCE.replace("a()", "b()"),
                TINY_SOURCE.replace("a()", "b()").replace("1;", "2;")));
        TestPatches.write(catalog, "03-unproved", "R1", TestPatches.tiny("2"));
        TestPatches.write(catalog, "04-broken", "R1",
                TestPatches.diff(TINY, TINY_SOURCE, TINY_SOURCE.replace("1;", "1")));
        Files.writeString(catalog.resolve("05-sweep.patch"), "# tier: sweep\n"
                + Files.readString(catalog.resolve("03-unproved.patch")).replace("03-unproved", "05-sweep"));

        Files.writeString(catalog.resolve("README.md"), "notes beside the patches are no mutants\n");
        Path out = dir.resolve("out");
        Campaign.Result r = new Campaign(config(out, Shard.ALL, Set.of())).run();
        assertEquals(List.of("01-gone", "02-moved", "03-unproved", "04-broken"),
                r.mutants().stream().map(MutantResult::id).toList(), "catalog order; the sweep mutant left out");
        assertEquals(r.mutants(), r.notKilled());
        r.mutants().forEach(m -> assertEquals(MutantResult.Status.STALE, m.status(), m.id()));
        assertEquals(gone + " does not exist any more", r.mutants().get(0).detail());
        assertTrue(r.mutants().get(1).detail().startsWith("hunk 1 of 1 ("), r.mutants().get(1).detail());
        assertEquals("no claim test proves [R1] under [" + dir.resolve("test-classes") + "]", r.mutants().get(2).detail());
        assertTrue(r.mutants().get(3).detail().startsWith("the mutated sources do not compile:\n" + TINY + ":"),
                r.mutants().get(3).detail());
        assertEquals(out.resolve("results.json"), r.resultsFile());
        assertEquals(4, ResultsFiles.readJson(r.resultsFile()).size());
        assertTrue(Files.readString(out.resolve("results.md")).startsWith("4 mutations, 0 caught (4 stale).\n\n"
                + "Campaign: 4 mutants in "), "results.md");
        Map<?, ?> campaign = (Map<?, ?>) io.attnproof.fixtures.json.JsonTrees.parse(
                Files.readString(out.resolve("campaign.json")));
        assertEquals("1/1", campaign.get("shard"), "the whole catalog is shard 1/1");
        assertEquals(4, ((Number) campaign.get("mutants")).intValue());
        assertEquals(0, ((Number) campaign.get("killed")).intValue());
        assertEquals("default", campaign.get("tier"));
        assertEquals(null, campaign.get("smallest_margin"));
        assertEquals(2, ((Number) campaign.get("threads")).intValue());
        assertEquals(60, ((Number) campaign.get("timeout_seconds")).intValue());

        // An only-list runs its ids whatever their tier; a shard selects by position first and names its files.
        Path shardOut = dir.resolve("shard");
        Campaign.Result s = new Campaign(config(shardOut, new Shard(1, 2), Set.of("01-gone", "02-moved"))).run();
        assertEquals(List.of("01-gone"), s.mutants().stream().map(MutantResult::id).toList(), "02 is in shard 2 of 2");
        assertEquals(shardOut.resolve("results-1-of-2.json"), s.resultsFile());
        Map<?, ?> part = (Map<?, ?>) io.attnproof.fixtures.json.JsonTrees.parse(
                Files.readString(shardOut.resolve("campaign-1-of-2.json")));
        assertEquals("1/2", part.get("shard"));
        assertEquals("only", part.get("tier"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Campaign(config(shardOut, Shard.ALL, Set.of("99-x"))).run());
        assertEquals("mutants.only: \"99-x\" is not a catalog id [01-gone, 02-moved, 03-unproved, 04-broken, 05-sweep]",
                e.getMessage());
        String kit = PatchParser.CONFORMANCE_ROOT + "io/attnproof/conformance/Kit.java";
        Files.createDirectories(dir.resolve(kit).getParent());
        Files.writeString(dir.resolve(kit), TINY_SOURCE.replace("attention", "conformance").replace("Tiny", "Kit"));
        TestPatches.write(catalog, "06-kit", "F2", TestPatches.diff(kit, Files.readString(dir.resolve(kit)),
                Files.readString(dir.resolve(kit)).replace("1;", "2;")));
        IllegalStateException noKit = assertThrows(IllegalStateException.class,
                () -> new Campaign(config(dir.resolve("kit"), Shard.ALL, Set.of("06-kit"))).run());
        assertTrue(noKit.getMessage().contains("mutant 06-kit patches the conformance kit: build it first (need "
                + dir.resolve("c/classes") + ")"), noKit.getMessage());
        IllegalStateException unbuilt = assertThrows(IllegalStateException.class, () -> new Campaign(
                new Campaign.Config(dir, catalog, dir.resolve("none"), dir.resolve("test-classes"), dir, out, Shard.ALL,
                        Set.of(), 1, Duration.ofSeconds(1))));
        assertEquals("mutants: build system-under-test first (need " + dir.resolve("none") + " and "
                + dir.resolve("test-classes") + ")", unbuilt.getMessage());
    }

    /**
     * The same throw-away repository with two claim tests of the fixtures' own (ClaimRunFixture for R1, PassingFixture
     * for R5): gated off, nothing runs and the mutant is stale; gated on, a failing
     * claim test kills and a passing one lets the mutant survive, each with its counts and killers.
     */
    @Test
    void aMutantsClaimTestsDecideKilledSurvivedOrStaleWhenNoneRan() throws Exception {
        Files.createDirectories(dir.resolve("classes"));
        Path tests = Files.createDirectories(dir.resolve("test-classes/io/attnproof/mutants"));
        for (String c : List.of("ClaimRunFixture", "PassingFixture", "MarginFixture", "WideMarginFixture")) {
            try (var in = getClass().getResourceAsStream(c + ".class")) {
                Files.write(tests.resolve(c + ".class"), in.readAllBytes());
            }
        }
        Path tiny = dir.resolve(TINY);
        Files.createDirectories(tiny.getParent());
        Files.writeString(tiny, TINY_SOURCE);
        Path catalog = Files.createDirectories(dir.resolve("catalog"));
        TestPatches.write(catalog, "06-killed", "R1", TestPatches.tiny("2"));
        TestPatches.write(catalog, "07-survived", "R5", TestPatches.tiny("3"));
        TestPatches.write(catalog, "08-margin", "R6", TestPatches.tiny("4"));
        TestPatches.write(catalog, "09-wide", "R7", TestPatches.tiny("5"));
        TestPatches.write(catalog, "10-tie", "R6", TestPatches.tiny("6"));
        Campaign.Result off = new Campaign(config(dir.resolve("off"), Shard.ALL, Set.of("06-killed"))).run();
        assertEquals(MutantResult.Status.STALE, off.mutants().getFirst().status());
        // The gate disables the class: JUnit skips its container, so no test is reported at all.
        assertEquals("no claim test of [R1] ran (0 run, 0 skipped)", off.mutants().getFirst().detail());
        String gate = System.getProperty(ClaimRunFixture.GATE);
        System.setProperty(ClaimRunFixture.GATE, "on");
        try {
            Campaign.Result on = new Campaign(config(dir.resolve("on"), Shard.ALL, Set.of())).run();
            MutantResult killed = on.mutants().get(0);
            MutantResult survived = on.mutants().get(1);
            assertEquals(MutantResult.Status.KILLED, killed.status());
            assertEquals(List.of(8, 5), List.of(killed.testsRun(), killed.testsFailed()));
            assertEquals(5, killed.killers().size());
            assertEquals(MutantResult.Status.SURVIVED, survived.status());
            assertEquals("every claim test of [R5] passed (1 of 1)", survived.detail());
            assertEquals(List.of(survived), on.notKilled());
            assertEquals(List.of(1.5, 4.0, 1.5), on.mutants().subList(2, 5).stream().map(MutantResult::margin).toList(),
                    "observed / allowed of each decisive check");
            assertTrue(Double.isNaN(killed.margin()), "killed without an evidence line: no margin");
            Map<?, ?> campaign = (Map<?, ?>) io.attnproof.fixtures.json.JsonTrees.parse(
                    Files.readString(dir.resolve("on/campaign.json")));
            assertEquals(1.5, ((Number) campaign.get("smallest_margin")).doubleValue(), 0.0);
            assertEquals("08-margin", campaign.get("smallest_margin_id"), "the first of a tie, never the NaN");
            assertEquals(4, ((Number) campaign.get("killed")).intValue());
            assertTrue(Files.readString(dir.resolve("on/results.md")).contains(" on 2 threads (per-mutant limit 60 s)."));
            // A re-run into the same folder clears the mutant's old evidence first: one failing line, not two.
            Campaign.Result again = new Campaign(config(dir.resolve("on"), Shard.ALL, Set.of("08-margin"))).run();
            assertEquals(1, again.mutants().getFirst().values().size(), "the first run's evidence line is gone");
        } finally {
            if (gate == null) {
                System.clearProperty(ClaimRunFixture.GATE);
            } else {
                System.setProperty(ClaimRunFixture.GATE, gate);
            }
        }
    }
}
