package io.attnproof.mutants;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.LineKind;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code -Dmutants.shard=k/n}: selection by catalog position, and the merge of shard files into one campaign. */
class ShardTest {
    @TempDir
    Path dir;

    @Test
    void parsesKOfNAndRefusesAnythingElse() {
        assertEquals(new Shard(2, 4), Shard.parse(" 2/4 "));
        assertEquals(Shard.ALL, Shard.parse(""));
        assertEquals(Shard.ALL, Shard.parse(null));
        for (String bad : new String[] {"0/4", "5/4", "2", "a/b", "1/0", "1/2/3"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Shard.parse(bad));
            assertTrue(e.getMessage().startsWith("mutants.shard = "), e.getMessage());
            assertTrue(e.getMessage().contains("1 <= k <= n"), e.getMessage());
        }
        assertEquals("results-3-of-4.json", new Shard(3, 4).resultsFile());
        assertEquals("results.json", Shard.ALL.resultsFile());
    }

    @Test
    void shardsPartitionTheCatalogByPosition() {
        List<Integer> catalog = IntStream.range(0, 31).boxed().toList();
        for (int n = 1; n <= 5; n++) {
            Set<Integer> union = new HashSet<>();
            int total = 0;
            for (int k = 1; k <= n; k++) {
                List<Integer> part = new Shard(k, n).select(catalog);
                for (int i : part) {
                    assertEquals(k - 1, i % n, "index " + i + " in shard " + k + "/" + n);
                }
                union.addAll(part);
                total += part.size();
            }
            assertEquals(31, total, "no mutant in two shards of " + n);
            assertEquals(Set.copyOf(catalog), union, "every mutant in some shard of " + n);
        }
        assertEquals(List.of(1, 4, 7), new Shard(2, 3).select(List.of(0, 1, 2, 3, 4, 5, 6, 7)));
    }

    static MutantResult result(String id, MutantResult.Status status) {
        return new MutantResult(id, List.of("R1"), "b", "o", null, "mutants/catalog/" + id + ".patch", status, null,
                status == MutantResult.Status.KILLED ? List.of(new ClaimTests.Killer("T#m", "boom")) : List.of(),
                List.of(value()), status == MutantResult.Status.KILLED ? value() : null, 5000, 3, 1, 1.25);
    }

    private static EvidenceValues.Value value() {
        return new EvidenceValues.Value("R1", LineKind.CHECK, "max_abs_err", "T#m", 7L,
                new EvidenceValues.Reading(1e-6, 1e-4, true, Comparison.LE), new EvidenceValues.Reading(0.5, 1e-4, false, Comparison.LE),
                5000);
    }

    @Test
    void mergeUnitesTheShardsInCatalogOrder() throws Exception {
        List<String> ids = List.of("01-a", "02-b", "03-c", "04-d", "05-e");
        Path catalog = Files.createDirectories(dir.resolve("catalog"));
        for (String id : ids) {
            Files.writeString(catalog.resolve(id + ".patch"), "");
        }
        for (int k = 1; k <= 2; k++) {
            List<MutantResult> part = new ArrayList<>();
            for (String id : new Shard(k, 2).select(ids)) {
                part.add(result(id, MutantResult.Status.KILLED));
            }
            ResultsFiles.writeJson(dir.resolve(new Shard(k, 2).resultsFile()), part);
        }
        List<Map<String, Object>> merged = MergeResults.mergeAndWrite(dir, catalog);
        assertEquals(ids, merged.stream().map(m -> m.get("id")).toList());
        List<Map<String, Object>> back = ResultsFiles.readJson(dir.resolve("results.json"));
        assertEquals(merged, back);
        assertEquals(ResultsFiles.readJson(dir.resolve("results-1-of-2.json")).getFirst(), back.getFirst());
        assertTrue(Files.readString(dir.resolve("results.md")).startsWith("5 mutations, all 5 caught.\n"));
    }

    /** The last shard missing is as fatal as any other (its mutants would vanish); files beside the patches are no mutants. */
    @Test
    void mergeRefusesAMissingLastShardAndReadsOnlyPatchesAsTheCatalog() throws Exception {
        ResultsFiles.writeJson(dir.resolve("results-1-of-2.json"), List.of(result("01-a", MutantResult.Status.KILLED)));
        IllegalArgumentException last = assertThrows(IllegalArgumentException.class,
                () -> MergeResults.merge(dir, null));
        assertTrue(last.getMessage().startsWith("shards [2] of 2 are missing"), last.getMessage());
        ResultsFiles.writeJson(dir.resolve("results-2-of-2.json"), List.of(result("02-b", MutantResult.Status.KILLED)));
        Path catalog = Files.createDirectories(dir.resolve("catalog"));
        Files.writeString(catalog.resolve("01-a.patch"), "");
        Files.writeString(catalog.resolve("02-b.patch"), "");
        Files.writeString(catalog.resolve("README.md"), "");
        assertEquals(List.of("01-a", "02-b"), MergeResults.merge(dir, catalog).stream().map(m -> m.get("id")).toList());
    }

    @Test
    void mergeRefusesMissingDuplicateOrForeignShards() throws Exception {
        ResultsFiles.writeJson(dir.resolve("results-1-of-3.json"), List.of(result("01-a", MutantResult.Status.KILLED)));
        ResultsFiles.writeJson(dir.resolve("results-3-of-3.json"), List.of(result("03-c", MutantResult.Status.KILLED)));
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> MergeResults.merge(dir, null));
        assertTrue(missing.getMessage().startsWith("shards [2] of 3 are missing"), missing.getMessage());

        ResultsFiles.writeJson(dir.resolve("results-2-of-3.json"), List.of(result("01-a", MutantResult.Status.KILLED)));
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> MergeResults.merge(dir, null));
        assertTrue(twice.getMessage().startsWith("mutant 01-a appears in more than one shard"), twice.getMessage());

        ResultsFiles.writeJson(dir.resolve("results-2-of-3.json"), List.of(result("02-b", MutantResult.Status.SURVIVED)));
        ResultsFiles.writeJson(dir.resolve("results-1-of-2.json"), List.of(result("02-b", MutantResult.Status.KILLED)));
        IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class,
                () -> MergeResults.merge(dir, null));
        assertTrue(foreign.getMessage().startsWith("shard files of different campaigns"), foreign.getMessage());

        Files.delete(dir.resolve("results-1-of-2.json"));
        Path catalog = Files.createDirectories(dir.resolve("catalog"));
        for (String id : List.of("01-a", "02-b", "03-c", "04-d")) {
            Files.writeString(catalog.resolve(id + ".patch"), "");
        }
        IllegalArgumentException uncovered = assertThrows(IllegalArgumentException.class,
                () -> MergeResults.merge(dir, catalog));
        assertTrue(uncovered.getMessage().contains("missing [04-d]"), uncovered.getMessage());
        List<Map<String, Object>> merged = MergeResults.mergeAndWrite(dir, null);
        assertEquals("3 mutations, 2 caught (1 survived)", ResultsFiles.headline(merged));
    }

    @Test
    void noShardFilesIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MergeResults.merge(dir, null));
        assertTrue(e.getMessage().startsWith("no shard file results-k-of-n.json under "), e.getMessage());
    }

    @Test
    void compareSeesEveryVerdictDifferenceButNotWallTime() throws Exception {
        ResultsFiles.writeJson(dir.resolve("a.json"), List.of(result("01-a", MutantResult.Status.KILLED),
                result("02-b", MutantResult.Status.KILLED)));
        List<Map<String, Object>> a = ResultsFiles.readJson(dir.resolve("a.json"));
        List<Map<String, Object>> same = new ArrayList<>();
        for (Map<String, Object> r : a) {
            Map<String, Object> copy = new java.util.LinkedHashMap<>(r);
            copy.put("seconds", 99.0);
            same.add(0, copy);
        }
        assertEquals(List.of(), MergeResults.compare("a", a, "b", same), "order and wall time do not matter");
        assertEquals("max_abs_err", MergeResults.decisive(a.getFirst()).get("metric"));

        ResultsFiles.writeJson(dir.resolve("b.json"), List.of(result("01-a", MutantResult.Status.SURVIVED),
                result("03-c", MutantResult.Status.KILLED)));
        List<String> diffs = MergeResults.compare("a", a, "b", ResultsFiles.readJson(dir.resolve("b.json")));
        assertTrue(diffs.contains("02-b: in a only"), diffs.toString());
        assertTrue(diffs.contains("03-c: in b only"), diffs.toString());
        assertTrue(diffs.stream().anyMatch(d -> d.startsWith("01-a: status differs: a \"killed\" vs b \"survived\"")),
                diffs.toString());
        assertTrue(diffs.stream().anyMatch(d -> d.startsWith("01-a: killers differs")), diffs.toString());
    }

    @Test
    void aRaceIsComparedByItsVerdictNotItsCounts() throws Exception {
        MutantResult race = race(new ClaimTests.Killer("T#m", "45973 elements differ"), 45973, "bits_differing");
        MutantResult otherCounts = race(new ClaimTests.Killer("T#m", "12 elements differ"), 12, "other_metric");
        ResultsFiles.writeJson(dir.resolve("a.json"), List.of(race));
        ResultsFiles.writeJson(dir.resolve("b.json"), List.of(otherCounts));
        List<Map<String, Object>> a = ResultsFiles.readJson(dir.resolve("a.json"));
        assertEquals("threads overlap", a.getFirst().get("interleaving"));
        assertEquals(List.of(), MergeResults.compare("a", a, "b", ResultsFiles.readJson(dir.resolve("b.json"))),
                "a race's counts and first failing metric may differ");

        MutantResult otherTest = race(new ClaimTests.Killer("U#n", "45973 elements differ"), 45973, "bits_differing");
        ResultsFiles.writeJson(dir.resolve("c.json"), List.of(otherTest));
        List<String> diffs = MergeResults.compare("a", a, "c", ResultsFiles.readJson(dir.resolve("c.json")));
        assertTrue(diffs.stream().anyMatch(d -> d.startsWith("01-race: killer_tests differs")), diffs.toString());
        assertTrue(diffs.stream().anyMatch(d -> d.startsWith("01-race: decisive_test differs")), diffs.toString());

        // Without the header the same two results differ by their counts.
        ResultsFiles.writeJson(dir.resolve("d.json"), List.of(withoutHeader(race)));
        ResultsFiles.writeJson(dir.resolve("e.json"), List.of(withoutHeader(otherCounts)));
        assertTrue(MergeResults.compare("d", ResultsFiles.readJson(dir.resolve("d.json")), "e",
                ResultsFiles.readJson(dir.resolve("e.json"))).stream().anyMatch(d -> d.contains("values differs")));
    }

    private static MutantResult race(ClaimTests.Killer killer, double count, String metric) {
        EvidenceValues.Value v = new EvidenceValues.Value("B7", LineKind.CHECK, metric, killer.test(), 7L,
                new EvidenceValues.Reading(0, 0, true, Comparison.EQ), new EvidenceValues.Reading(count, 0, false, Comparison.EQ),
                Double.POSITIVE_INFINITY);
        return new MutantResult("01-race", List.of("B7"), "b", "o", "threads overlap", "mutants/catalog/01-race.patch",
                MutantResult.Status.KILLED, null, List.of(killer), List.of(v), v, Double.POSITIVE_INFINITY, 1, 1, 0.5);
    }

    private static MutantResult withoutHeader(MutantResult r) {
        return new MutantResult(r.id(), r.claims(), r.breaks(), r.origin(), null, r.patch(), r.status(), r.detail(),
                r.killers(), r.values(), r.decisive(), r.margin(), r.testsRun(), r.testsFailed(), r.seconds());
    }
}
