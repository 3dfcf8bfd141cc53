package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PIT's report with the triage: open mutations grouped by class, each with its verdict or flagged untriaged. */
class PitReportTest {
    @TempDir
    Path dir;

    private Path report() throws IOException {
        Path xml = dir.resolve(Ledger.PIT);
        Files.createDirectories(xml.getParent());
        try (InputStream in = PitReportTest.class.getResourceAsStream("/ledger/pit-mutations.xml")) {
            Files.copy(in, xml);
        }
        return xml;
    }

    private void triage(String... rows) throws IOException {
        Path csv = dir.resolve(PitReport.TRIAGE);
        Files.createDirectories(csv.getParent());
        Files.writeString(csv, String.join(",", PitReport.TRIAGE_COLUMNS) + "\n" + String.join("\n", rows) + "\n");
    }

    /**
     * The triage is found only for a report at a module's own path (ROOT/pit/triage.csv), never for a report
     * elsewhere; a report declaring entities in a DTD is refused, not expanded.
     */
    @Test
    void theTriageIsFoundOnlyBesideAModulesReportAndADtdIsRefused() throws IOException {
        triage();
        Path inModule = dir.resolve("ledger/target/pit-reports/mutations.xml");
        Files.createDirectories(inModule.getParent());
        assertEquals(dir.resolve(PitReport.TRIAGE).toAbsolutePath().normalize(), PitReport.findTriage(inModule));
        assertNull(PitReport.findTriage(dir.resolve("pit-reports/mutations.xml")), "not a module's report");
        Path dtd = dir.resolve("dtd.xml");
        Files.writeString(dtd, "<?xml version=\"1.0\"?><!DOCTYPE mutations [<!ENTITY e \"expanded\">]>"
                + "<mutations><mutation detected='false' status='SURVIVED' numberOfTestsRun='1'><sourceFile>A.java"
                + "</sourceFile><mutatedClass>io.attnproof.attention.A</mutatedClass><mutatedMethod>m</mutatedMethod>"
                + "<methodDescription>()V</methodDescription><lineNumber>1</lineNumber><mutator>M</mutator><indexes>"
                + "<index>1</index></indexes><blocks><block>0</block></blocks><killingTest/><description>&e;"
                + "</description></mutation></mutations>");
        assertThrows(IllegalArgumentException.class, () -> PitReport.read(dtd, null));
    }

    /** Timed-out mutations are counted (they are kills); classes with untriaged mutations come first, then by name. */
    @Test
    void timedOutMutationsAreCountedAndClassesWithUntriagedMutationsComeFirst() throws IOException {
        Path xml = report();
        triage("io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,3,"
                + "changed conditional boundary,equivalent,same bits");
        PitReport p = PitReport.read(xml, dir.resolve(PitReport.TRIAGE));
        assertEquals(1, p.timedOut());
        assertEquals(10, p.mutations());
        assertEquals(List.of("io.attnproof.attention.tensor.Device", "io.attnproof.attention.mask.UnionMaskMemo"),
                List.copyOf(p.byClass().keySet()), "Device (1 untriaged) before UnionMaskMemo (0), against name order");
    }

    @Test
    void withoutTriageEveryOpenMutationIsFlagged() throws IOException {
        PitReport p = PitReport.read(report());
        assertNull(p.triageFile());
        assertEquals(2, p.open().size());
        assertEquals(2, p.untriaged().size());
        assertEquals("triage (no pit/triage.csv): 2 open mutations (survived or no coverage), 0 triaged, 2 untriaged ⚑",
                p.triageNote());
        assertTrue(MarkdownLedger.pit(p).contains("⚑ [`system-under-test/src/main/java/io/attnproof/attention/mask/"
                + "UnionMaskMemo.java:61`](../../../system-under-test/src/main/java/io/attnproof/attention/mask/"
                + "UnionMaskMemo.java#L61) get ConditionalsBoundaryMutator (SURVIVED)"), MarkdownLedger.pit(p));
    }

    @Test
    void rowsGiveVerdictsAndAKilledNowRowThatDidNotKillStaysFlagged() throws IOException {
        Path xml = report();
        triage("io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,3,changed conditional"
                        + " boundary,equivalent,\"at i == n the loop body is empty, so < and <= agree\"",
                "io.attnproof.attention.tensor.Device,metal,()V,NullReturnValsMutator,1,replaced return value with null,"
                        + "killed-now,DeviceTest kills it",
                "io.attnproof.attention.tensor.Tensor,cat,()V,IncrementsMutator,1,Changed increment from 1 to -1,"
                        + "accepted,gone since");
        PitReport p = PitReport.read(xml);
        assertEquals(dir.resolve(PitReport.TRIAGE), p.triageFile());
        assertEquals(Map.of("equivalent", 1, "untriaged", 1), p.verdictCounts());
        assertEquals(List.of("io.attnproof.attention.tensor.Device"), p.untriaged().stream()
                .map(PitReport.Open::clazz).toList());
        assertEquals(1, p.staleTriageRows(), "the accepted row matches no open mutation");
        assertEquals("io.attnproof.attention.tensor.Tensor", p.staleRows().getFirst().clazz());
        assertTrue(p.triageNote().startsWith("triage (pit/triage.csv): 2 open mutations (survived or no coverage),"
                + " 1 triaged (equivalent 1), 1 untriaged ⚑; 1 stale triage rows"), p.triageNote());
        assertEquals(List.of("io.attnproof.attention.tensor.Device", "io.attnproof.attention.mask.UnionMaskMemo"),
                List.copyOf(p.byClass().keySet()), "classes with untriaged mutations first");
        String md = MarkdownLedger.pit(p);
        assertTrue(md.contains("**equivalent**: at i == n the loop body is empty, so < and <= agree"), md);
        assertTrue(md.contains("**untriaged** (triaged killed-now, still NO_COVERAGE)"), md);
        assertTrue(HtmlLedger.pit(p).contains("<a class=\"src\" href=\"../../../system-under-test/src/main/java/io/attnproof/"
                + "attention/tensor/Device.java#L28\" title=\"system-under-test/src/main/java/io/attnproof/attention/"
                + "tensor/Device.java:28\"><code>system-under-test/src/main/java/io/attnproof/attention/tensor/"
                + "Device.java:28</code></a> metal NullReturnValsMutator (NO_COVERAGE)"), HtmlLedger.pit(p));
        assertEquals("untriaged", JsonLedger.open(p).getFirst().get("verdict").equals("equivalent")
                ? JsonLedger.open(p).get(1).get("verdict") : JsonLedger.open(p).getFirst().get("verdict"));
    }

    /**
     * A mutation PIT detected without a test (here TIMED_OUT; likewise MEMORY_ERROR, RUN_ERROR) keeps its accepted row,
     * since the next run may not repeat the minion's failure; an accepted row of a mutation a test KILLED is stale.
     */
    @Test
    void aRowOfAMutationDetectedWithoutATestStaysAndOneKilledByATestIsStale() throws IOException {
        Path xml = report();
        triage("io.attnproof.attention.dsv4.UnionKernel,repeatKv,()V,IncrementsMutator,1,Changed increment from 1 to"
                        + " -1,accepted,a slow path",
                "io.attnproof.attention.tensor.DType,round,()V,PrimitiveReturnsMutator,1,replaced float return with 0.0f,"
                        + "accepted,killed since");
        PitReport p = PitReport.read(xml);
        assertEquals(List.of("io.attnproof.attention.tensor.DType"), p.staleRows().stream()
                .map(PitReport.Row::clazz).toList(), "only the row of the KILLED mutation is stale");
    }

    @Test
    void aMalformedRowNamesFileAndLine() throws IOException {
        Path xml = report();
        triage("io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,3,changed conditional"
                + " boundary,fine,because");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PitReport.read(xml));
        assertTrue(e.getMessage().contains("triage.csv:2: a row is class,method,descriptor,mutator,index,description,"
                + "verdict,reason"), e.getMessage());
    }

    @Test
    void aRowIsKeyedByItsMutationNotItsLineAndARowOfNoMutationIsStale() throws IOException {
        Path xml = report();
        // The same mutation as in the report but on another line: the row still settles it.
        triage("io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,3,changed conditional"
                        + " boundary,equivalent,same bits",
                "io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,4,changed conditional"
                        + " boundary,equivalent,another index: no such mutation",
                "io.attnproof.attention.tensor.Device,metal,()V,NullReturnValsMutator,1,replaced return value with null,"
                        + "accepted,a lane's name");
        PitReport p = PitReport.read(xml);
        assertEquals(List.of(), p.untriaged());
        assertEquals(List.of("4"), p.staleRows().stream().map(PitReport.Row::index).toList());
        Path old = dir.resolve("old.csv");
        Files.writeString(old, "class,method,line,mutator,verdict,reason\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PitReport.read(xml, old));
        assertTrue(e.getMessage().contains("old.csv:1: the header must be class,method,descriptor"), e.getMessage());
    }

    @Test
    void aModuleReportTakesTheSharedTriageAndLeavesOtherModulesRowsAlone() throws IOException {
        Path xml = dir.resolve(Ledger.PIT_MODULES.get("ledger"));
        Files.createDirectories(xml.getParent());
        Files.writeString(xml, """
                <?xml version="1.0" encoding="UTF-8"?>
                <mutations>
                <mutation detected='true' status='KILLED' numberOfTestsRun='1'><sourceFile>Margin.java</sourceFile>\
                <mutatedClass>io.attnproof.ledger.Margin</mutatedClass><mutatedMethod>of</mutatedMethod>\
                <methodDescription>()V</methodDescription><lineNumber>12</lineNumber><mutator>x.MathMutator</mutator>\
                <indexes><index>1</index></indexes><killingTest>MarginTest</killingTest>\
                <description>Replaced double division with multiplication</description></mutation>
                <mutation detected='false' status='SURVIVED' numberOfTestsRun='2'><sourceFile>Margin.java</sourceFile>\
                <mutatedClass>io.attnproof.ledger.Margin</mutatedClass><mutatedMethod>of</mutatedMethod>\
                <methodDescription>()V</methodDescription><lineNumber>14</lineNumber>\
                <mutator>x.ConditionalsBoundaryMutator</mutator><indexes><index>7</index></indexes><killingTest/>\
                <description>changed conditional boundary</description></mutation>
                </mutations>
                """);
        triage("io.attnproof.attention.mask.UnionMaskMemo,get,()V,ConditionalsBoundaryMutator,3,changed conditional"
                        + " boundary,equivalent,another module's row",
                "io.attnproof.ledger.Margin,of,()V,MathMutator,9,Replaced double division with multiplication,"
                        + "equivalent,no such mutation of this module");
        PitReport p = PitReport.read(xml);
        assertEquals(dir.resolve(PitReport.TRIAGE), p.triageFile(), "every module's report reads pit/triage.csv");
        assertEquals(List.of("io.attnproof.ledger.Margin"), p.staleRows().stream().map(PitReport.Row::clazz).toList(),
                "the system under test's row is not stale in the ledger's report; the ledger's own is");
        assertEquals("ledger/src/main/java/io/attnproof/ledger/Margin.java:14", p.open().getFirst().source());
        assertEquals("oracles/src/main/java/io/attnproof/oracles/Dense.java:3",
                PitReport.source("io.attnproof.oracles.Dense$Inner", "Dense.java", 3));
        String md = MarkdownLedger.modules(List.of(
                new Ledger.PitModule("ledger", Ledger.PIT_MODULES.get("ledger"), p, p.summary()),
                new Ledger.PitModule("mutants", Ledger.PIT_MODULES.get("mutants"), null, "PIT: not run")));
        assertTrue(md.contains("| ledger | `ledger/target/pit-reports/mutations.xml` | 2 | 1 | 1 | 0 | 50.0% | 50.0%"
                + " | 1 ⚑ |"), md);
        assertTrue(md.contains("| mutants | `mutants/target/pit-reports/mutations.xml` | PIT: not run |"), md);
        assertTrue(md.contains("#### ledger"), md);
        assertTrue(HtmlLedger.modules(List.of(new Ledger.PitModule("ledger", Ledger.PIT_MODULES.get("ledger"), p,
                p.summary()))).contains("<td>ledger</td>"));
    }
}
