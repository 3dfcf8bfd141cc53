package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the ledger is gathered: each directory's latest run ("none" without run ids), the R8 series taken only from a
 * directory of the latest run, the curated mutant's measured series joined by step, and the summary line of a root
 * without evidence.
 */
class LedgerBuildTest {
    @TempDir
    Path dir;

    private static final String LINE = "{\"claim\":\"U1\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"cells\","
            + "\"value\":0.0,\"cmp\":\"==\",\"limit\":0.0,\"passed\":true,\"test\":\"A#a\"%s}\n";

    private Path evidence(String module) throws IOException {
        return Files.createDirectories(dir.resolve(module).resolve("target").resolve("evidence"));
    }

    @Test
    void theR8SeriesComesFromADirectoryOfTheLatestRun() throws IOException {
        // "a" holds only an older run, "b" the latest: the series must be b's although a comes first by name.
        Path a = evidence("a");
        Files.writeString(a.resolve("A.jsonl"), LINE.formatted(",\"run\":\"1\""));
        Files.writeString(a.resolve(Ledger.R8_CSV), "step,mean_dead_prefix\n1,100.0\n");
        Path b = evidence("b");
        Files.writeString(b.resolve("B.jsonl"), LINE.formatted(",\"run\":\"2\""));
        Files.writeString(b.resolve(Ledger.R8_CSV), "step,mean_dead_prefix\n1,2.0\n4,4.0\n");
        Ledger l = Ledger.build(dir, List.of());
        assertEquals(b.resolve(Ledger.R8_CSV).toString(), l.r8Note());
        assertEquals(2.0, l.r8().perRow()[0]);
        assertEquals("2", l.runs().get(a), "one build: every directory of the root has the latest run");
    }

    @Test
    void theMutantRunsSeriesIsJoinedByStep() throws IOException {
        Path b = evidence("b");
        Files.writeString(b.resolve("B.jsonl"), LINE.formatted(",\"run\":\"2\""));
        Files.writeString(b.resolve(Ledger.R8_CSV), "step,mean_dead_prefix\n1,2.0\n4,4.0\n");
        Path mutant = Files.createDirectories(dir.resolve("mutants").resolve("target").resolve("mutants")
                .resolve("evidence").resolve("31-shared-cache-len-use-4"));
        Files.writeString(mutant.resolve(Ledger.R8_CSV), "step,mean_dead_prefix\n4,16.0\n");
        Ledger l = Ledger.build(dir, List.of());
        assertEquals(b.resolve(Ledger.R8_CSV) + " and " + mutant.resolve(Ledger.R8_CSV), l.r8Note());
        assertTrue(Double.isNaN(l.r8().shared()[0]), "step 1 has no mutant value");
        assertEquals(16.0, l.r8().shared()[1]);
    }

    @Test
    void aDirectoryWithoutRunIdsHasRunNone() throws IOException {
        Path extra = Files.createDirectories(dir.resolve("extra"));
        Files.writeString(extra.resolve("E.jsonl"), LINE.formatted(""));
        Ledger l = Ledger.build(dir.resolve("no-root"), List.of(extra));
        assertEquals("none", l.runs().get(extra));
        assertEquals(1, l.stale().size(), "a line without a run id is never the latest");
    }

    @Test
    void withoutEvidenceTheSummarySaysWhereItLooked() throws IOException {
        Path root = Files.createDirectories(dir.resolve("root"));
        assertEquals("no evidence found under " + root + "/*/target/evidence", Ledger.build(root, List.of())
                .summaryLine());
        Path extra = Files.createDirectories(dir.resolve("broken"));
        Files.writeString(extra.resolve("X.jsonl"), "not json\n");
        assertEquals("no evidence found under [" + extra + "] (1 unreadable)",
                Ledger.build(root, List.of(extra)).summaryLine());
    }
}
