package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.backend.LaneUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Export and run of a corpus: an export goes into an empty folder or replaces an earlier corpus's cases (anything else
 * is refused by name), the size budget counts a case shared by several checks once and keeps exactly what fits, the
 * manifest names its scale, {@code size} sums every file, and a run reports its cases and a wall time within the
 * call's own, refusing an unavailable lane before it reads the corpus.
 */
class CorpusExportRulesTest {
    private static final long SEED = 13;

    @TempDir
    Path dir;

    private static Set<String> caseFolders(Path corpus) throws IOException {
        try (Stream<Path> s = Files.list(corpus.resolve("cases"))) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    private static Set<String> ids(CorpusExport.Result r) {
        return r.manifest().cases().stream().map(Manifest.Entry::id).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void anExportGoesIntoAnEmptyFolderAndAReExportReplacesTheEarlierCases() throws IOException {
        Path c = Files.createDirectories(dir.resolve("corpus"));
        CorpusExport.Result first = CorpusExport.export(c, SEED, true, Set.of("R5"), Set.of("F32"), Long.MAX_VALUE);
        assertEquals(ids(first), caseFolders(c), "an export into an empty folder writes its cases");
        CorpusExport.Result second = CorpusExport.export(c, SEED, true, Set.of("U7"), Set.of("F32"), Long.MAX_VALUE);
        assertTrue(java.util.Collections.disjoint(ids(first), ids(second)), "two selections of different claims");
        assertEquals(ids(second), caseFolders(c), "a re-export into an earlier corpus keeps none of its old cases");
        assertEquals(ids(second), ids(new CorpusExport.Result(Manifest.read(c), 0, List.of())));
    }

    @Test
    void aFolderThatIsNotEmptyAndNotACorpusIsRefusedByName() throws IOException {
        Path c = Files.createDirectories(dir.resolve("notes"));
        Files.writeString(c.resolve("todo.txt"), "keep me");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CorpusExport.export(c, SEED, true, Set.of("R5"), Set.of("F32"), Long.MAX_VALUE));
        assertEquals("DIR = " + c + " must be empty or an earlier corpus (it holds 1 entries and no manifest.json)",
                e.getMessage());
        assertEquals("keep me", Files.readString(c.resolve("todo.txt")), "a refused export touches nothing");
        assertFalse(Files.exists(c.resolve("cases")));
    }

    @Test
    void theBudgetCountsACaseSharedByChecksOnceAndKeepsExactlyWhatFits() {
        // R5: its "none" case is read by three checks (an oracle and two pairs).
        Seal.Params all = new Seal.Params(SEED, true, List.of("R5"), List.of("F32"), Long.MAX_VALUE);
        CorpusExport.Plan p = CorpusExport.plan(all);
        assertTrue(p.droppedChecks().isEmpty());
        long bytes = p.cases().stream().mapToLong(CaseSpec::bytes).sum();
        CorpusExport.Plan exact = CorpusExport.plan(new Seal.Params(SEED, true, all.claims(), all.dtypes(), bytes));
        assertEquals(List.of(), exact.droppedChecks(), "a budget of exactly the cases' bytes keeps every check");
        assertEquals(p.manifest().toJson(), exact.manifest().toJson());
        CorpusExport.Plan less = CorpusExport.plan(new Seal.Params(SEED, true, all.claims(), all.dtypes(), bytes - 1));
        assertFalse(less.droppedChecks().isEmpty(), "one byte less drops a check");
        assertEquals("small", p.manifest().scale(), "the manifest names the small scale");
    }

    @Test
    void sizeIsTheSumOfEveryFileUnderTheFolder() throws IOException {
        Path root = Files.createDirectories(dir.resolve("tree/a/b"));
        Files.write(root.resolve("one"), new byte[7]);
        Files.write(root.getParent().resolve("two"), new byte[1000]);
        Files.write(dir.resolve("tree/three"), new byte[3]);
        assertEquals(7 + 1000 + 3, CorpusExport.size(dir.resolve("tree")), "folders themselves weigh nothing");
    }

    @Test
    void aRunReportsItsCasesAndAWallTimeWithinTheCall() {
        Path c = dir.resolve("corpus");
        CorpusExport.Result e = CorpusExport.export(c, SEED, true, Set.of("R5"), Set.of("F32"), Long.MAX_VALUE);
        Path out = dir.resolve("out");
        long t0 = System.nanoTime();
        CorpusRunner.Result r = CorpusRunner.run(c, out, Backend.cpu());
        double wall = (System.nanoTime() - t0) / 1e9;
        assertEquals(e.manifest().cases().size(), r.cases());
        assertTrue(r.seconds() > 0 && r.seconds() <= wall, r.seconds() + " s reported, the call took " + wall + " s");
        for (Manifest.Entry x : e.manifest().cases()) {
            assertTrue(Files.isRegularFile(out.resolve(x.id() + ".npy")), x.id());
        }
    }

    @Test
    void anUnavailableLaneIsRefusedBeforeTheCorpusIsRead() {
        Backend lane = Backend.metal();
        Assumptions.assumeTrue(lane.unavailable().isPresent(), "the metal lane runs here");
        Path nowhere = dir.resolve("no-corpus");
        LaneUnavailableException e = assertThrows(LaneUnavailableException.class,
                () -> CorpusRunner.run(nowhere, dir.resolve("out"), lane));
        assertTrue(e.getMessage().contains("metal"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("out")));
    }
}
