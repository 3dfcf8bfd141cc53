package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The merge command's exit code is what the campaigns workflow's merge job gates on: 0 only when every merged
 * mutant is killed (or two compared files agree), 1 for a survivor (or a difference), 2 for bad input, each with
 * its line. Negative control: the same files with one survivor, or one differing verdict, exit 1.
 */
class MergeCommandTest {
    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) throws Exception {
        out.reset();
        err.reset();
        return MergeResults.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void allKilledExitsZeroASurvivorOneAndBadInputTwo() throws Exception {
        Path killed = dir.resolve("killed");
        ResultsFiles.writeJson(killed.resolve("results-1-of-1.json"),
                List.of(ShardTest.result("01-a", MutantResult.Status.KILLED)));
        assertEquals(0, run(killed.toString()));
        assertEquals("1 mutations, all 1 caught -> " + killed.resolve("results.json") + "\n", out());

        Path survived = dir.resolve("survived");
        ResultsFiles.writeJson(survived.resolve("results-1-of-1.json"), List.of(
                ShardTest.result("01-a", MutantResult.Status.KILLED), ShardTest.result("02-b", MutantResult.Status.SURVIVED)));
        assertEquals(1, run(survived.toString()));
        assertTrue(out().startsWith("2 mutations, 1 caught (1 survived) -> "), out());

        assertEquals(2, run());
        assertEquals("usage: MergeResults RESULTS_DIR [CATALOG_DIR] | MergeResults --compare A.json B.json\n", err());
        assertEquals(2, run("a", "b", "c"));
        assertEquals(2, run(java.nio.file.Files.createDirectories(dir.resolve("empty")).toString()));
        assertTrue(err().startsWith("mutants merge: no shard file results-k-of-n.json under "), err());
    }

    @Test
    void compareExitsZeroOnIdenticalVerdictsAndOneOnEachDifference() throws Exception {
        Path a = dir.resolve("a.json");
        Path b = dir.resolve("b.json");
        ResultsFiles.writeJson(a, List.of(ShardTest.result("01-a", MutantResult.Status.KILLED)));
        ResultsFiles.writeJson(b, List.of(ShardTest.result("01-a", MutantResult.Status.KILLED)));
        assertEquals(0, run("--compare", a.toString(), b.toString()));
        assertEquals("mutants compare: identical verdicts between " + a + " and " + b + "\n", out());

        ResultsFiles.writeJson(b, List.of(ShardTest.result("02-b", MutantResult.Status.KILLED)));
        assertEquals(1, run("--compare", a.toString(), b.toString()));
        assertEquals("mutants compare: 01-a: in " + a + " only\nmutants compare: 02-b: in " + b + " only\n"
                + "mutants compare: 2 difference(s) between " + a + " and " + b + "\n", out());
    }

    @Test
    void theDecisiveLineIsTheValueCarryingTheResultsMarginAndNoneWithoutOne() {
        Map<String, Object> line = Map.of("metric", "m", "margin", 3.0);
        Map<String, Object> r = new HashMap<>(Map.of("values", List.of(Map.of("metric", "n", "margin", 2.0), line),
                "margin", 3));
        assertEquals(line, MergeResults.decisive(r), "3 and 3.0 are the same margin");
        r.put("margin", 5);
        assertNull(MergeResults.decisive(r), "no value carries the margin");
        r.remove("margin");
        assertNull(MergeResults.decisive(r), "no margin: no decisive line");
    }
}
