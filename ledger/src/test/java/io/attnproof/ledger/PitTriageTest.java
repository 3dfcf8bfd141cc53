package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.json.JsonTrees;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The triage check (untriaged and stale rows fail it), the summary it writes, and the committed summary. */
class PitTriageTest {
    @TempDir
    Path dir;

    private Path xml() throws IOException {
        Path xml = dir.resolve("mutations.xml");
        try (InputStream in = PitTriageTest.class.getResourceAsStream("/ledger/pit-mutations.xml")) {
            Files.copy(in, xml);
        }
        return xml;
    }

    private Path triage(String... rows) throws IOException {
        Path csv = dir.resolve("triage.csv");
        Files.writeString(csv, String.join(",", PitReport.TRIAGE_COLUMNS) + "\n" + String.join("\n", rows) + "\n");
        return csv;
    }

    private static final String MEMO = "io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,3,"
            + "changed conditional boundary,equivalent,same bits";
    private static final String DEVICE = "io.attnproof.attention.tensor.Device,metal,()V,NullReturnValsMutator,1,"
            + "replaced return value with null,accepted,a lane's name";

    private int run(StringBuilder printed, String... args) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = PitTriage.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        printed.append(out.toString(StandardCharsets.UTF_8)).append(err.toString(StandardCharsets.UTF_8));
        return rc;
    }

    @Test
    void passesOnlyWhenEveryOpenMutationIsTriagedAndNoRowIsStale() throws IOException {
        Path xml = xml();
        StringBuilder ok = new StringBuilder();
        assertEquals(0, run(ok, "check", xml.toString(), triage(MEMO, DEVICE).toString()), ok.toString());

        StringBuilder untriaged = new StringBuilder();
        assertEquals(1, run(untriaged, "check", xml.toString(), triage(MEMO).toString()));
        assertTrue(untriaged.toString().contains("pit untriaged: system-under-test/src/main/java/io/attnproof/attention/"
                + "tensor/Device.java:28 io.attnproof.attention.tensor.Device.metal()V NullReturnValsMutator #1"),
                untriaged.toString());

        StringBuilder stale = new StringBuilder();
        String gone = "io.attnproof.attention.tensor.Tensor,cat,()V,IncrementsMutator,7,Changed increment from 1 to -1,"
                + "killed-now,TensorTest";
        assertEquals(1, run(stale, "check", xml.toString(), triage(MEMO, DEVICE, gone).toString()));
        assertTrue(stale.toString().contains("pit stale row: io.attnproof.attention.tensor.Tensor.cat()V"
                + " IncrementsMutator #7"), stale.toString());

        // A partial run (pit/pr.sh) answers only for the classes it mutated.
        String otherClass = "io.attnproof.attention.kvcache.PagedCache,get,()V,MathMutator,2,Replaced integer addition"
                + " with subtraction,killed-now,PagedCacheTest";
        StringBuilder partial = new StringBuilder();
        Path rows = triage(MEMO, DEVICE, otherClass);
        assertEquals(0, run(partial, "check", xml.toString(), rows.toString(), "--partial"), partial.toString());
        assertEquals(1, run(new StringBuilder(), "check", xml.toString(), rows.toString()));
    }

    /** The summary command writes its file and says where; bad input exits 2 with the reason or the usage. */
    @Test
    void theSummaryCommandWritesItsFileAndBadInputExitsTwo() throws IOException {
        Path xml = xml();
        Path out = dir.resolve("summary.json");
        StringBuilder printed = new StringBuilder();
        assertEquals(0, run(printed, "summary", xml.toString(), out.toString()));
        assertEquals("pit summary: " + PitReport.read(xml, null).summary() + " -> " + out + "\n", printed.toString());
        assertTrue(Files.readString(out).contains("\"mutations\" : 10"), Files.readString(out));
        StringBuilder usage = new StringBuilder();
        assertEquals(2, run(usage, "summarise", xml.toString(), out.toString()));
        assertTrue(usage.toString().startsWith("usage: PitTriage check MUTATIONS.xml TRIAGE.csv [--partial]"),
                usage.toString());
        StringBuilder bad = new StringBuilder();
        Path notXml = Files.writeString(dir.resolve("bad.xml"), "not xml");
        assertEquals(2, run(bad, "summary", notXml.toString(), out.toString()));
        assertTrue(bad.toString().startsWith("pit triage: "), bad.toString());
    }

    /**
     * Why each row fails, in the check's own words: a killed-now row whose mutation still lives, an equivalent row of
     * a killed mutation, a row naming no mutation, and a partial run still judging the classes it mutated.
     */
    @Test
    void theCheckNamesWhyEachRowFailsAndAPartialRunJudgesTheClassesItMutated() throws IOException {
        Path xml = xml();
        String memoKilledNow = "io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,3,"
                + "changed conditional boundary,killed-now,UnionMaskMemoTest";
        StringBuilder still = new StringBuilder();
        Path rows = triage(memoKilledNow);
        assertEquals(1, run(still, "check", xml.toString(), rows.toString()));
        String out = still.toString();
        assertTrue(out.contains("UnionMaskMemo.get()V ConditionalsBoundaryMutator #3 (SURVIVED) — changed conditional"
                + " boundary: triaged killed-now, but it is still SURVIVED\n"), out);
        assertTrue(out.contains("Device.metal()V NullReturnValsMutator #1 (NO_COVERAGE) — replaced return value with"
                + " null\n"), "an untriaged mutation claims no triage: " + out);
        PitReport report = PitReport.read(xml, rows);
        assertTrue(out.contains(report.summary() + "\n" + report.triageNote() + "\n"), out);

        String killedEquivalent = "io.attnproof.attention.tensor.Tensor,cat,()V,IncrementsMutator,1,"
                + "Changed increment from 1 to -1,equivalent,no test can tell";
        String gone = "io.attnproof.attention.tensor.Tensor,cat,()V,IncrementsMutator,7,Changed increment from 1 to -1,"
                + "killed-now,TensorTest";
        StringBuilder stale = new StringBuilder();
        Path staleRows = triage(MEMO, DEVICE, killedEquivalent, gone);
        assertEquals(1, run(stale, "check", xml.toString(), staleRows.toString(), "--partial"));
        out = stale.toString();
        assertTrue(out.contains("pit stale row: io.attnproof.attention.tensor.Tensor.cat()V IncrementsMutator #1 —"
                + " Changed increment from 1 to -1 (equivalent): no such mutation open in "), out);
        assertTrue(out.contains("pit stale row: io.attnproof.attention.tensor.Tensor.cat()V IncrementsMutator #7 —"
                + " Changed increment from 1 to -1 (killed-now): no such mutation in "), out);
        assertTrue(out.contains(" (partial run: 2 stale among the 7 classes it mutated)\n"), out);
        StringBuilder whole = new StringBuilder();
        assertEquals(1, run(whole, "check", xml.toString(), staleRows.toString()));
        assertFalse(whole.toString().contains("partial run"), whole.toString());
    }

    @Test
    void theSummaryCountsPerPackageAndListsTheOpenMutations() throws IOException {
        Path out = dir.resolve("summary.json");
        StringBuilder printed = new StringBuilder();
        assertEquals(0, run(printed, "summary", xml().toString(), out.toString()), printed.toString());
        Map<String, Object> summary = JsonTrees.parseObject(Files.readString(out));
        // The resource holds 10 mutations: 7 killed, 1 timed out (detected), 1 survived, 1 without coverage.
        assertEquals(Map.of("mutations", 10.0, "killed", 8.0, "survived", 1.0, "no_coverage", 1.0, "score", 0.8,
                "strength", 0.8889), summary.get("totals"));
        assertConsistent(summary);
        assertEquals(List.of("io.attnproof.attention.mask.UnionMaskMemo", "io.attnproof.attention.tensor.Device"),
                ((List<?>) summary.get("open")).stream().map(o -> ((Map<?, ?>) o).get("class")).toList());
    }

    @Test
    void theCommittedSummaryAddsUp() throws IOException {
        Path repo = Path.of("").toAbsolutePath();
        while (repo != null && !Files.isRegularFile(repo.resolve(PitTriage.SUMMARY))) {
            repo = repo.getParent();
        }
        assertTrue(repo != null, PitTriage.SUMMARY + " above " + Path.of("").toAbsolutePath());
        Map<String, Object> summary = JsonTrees.parseObject(Files.readString(repo.resolve(PitTriage.SUMMARY)));
        assertConsistent(summary);
        // The triage parses (header, verdicts, reasons, no mutation named twice).
        assertTrue(PitReport.readTriage(repo.resolve(PitReport.TRIAGE)).size() > 0);
    }

    /** Package counts add up to the totals, score and strength follow from the counts, the open list is complete. */
    private static void assertConsistent(Map<String, Object> summary) {
        Map<?, ?> totals = (Map<?, ?>) summary.get("totals");
        List<?> packages = (List<?>) summary.get("packages");
        for (String field : List.of("mutations", "killed", "survived", "no_coverage")) {
            double sum = packages.stream().mapToDouble(p -> (Double) ((Map<?, ?>) p).get(field)).sum();
            assertEquals(totals.get(field), sum, field);
        }
        for (Object o : packages) {
            Map<?, ?> p = (Map<?, ?>) o;
            double killed = (Double) p.get("killed");
            assertEquals(Math.round(10_000 * killed / (Double) p.get("mutations")) / 10_000.0, p.get("score"),
                    p.get("package") + " score");
        }
        assertEquals((Double) totals.get("survived") + (Double) totals.get("no_coverage"),
                ((List<?>) summary.get("open")).size(), "one open entry per survived or uncovered mutation");
    }
}
