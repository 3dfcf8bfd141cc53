package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PIT's report in the details the ledger shows: a mutation with several instruction indexes keeps them all, the
 * classes with more untriaged mutations come first whatever their size, an open mutation's text, and a triage
 * written and read back unchanged.
 */
class PitReportDetailsTest {
    @TempDir
    Path dir;

    private static String mutation(String clazz, String method, String indexes, String status) {
        return "<mutation detected='false' status='" + status + "' numberOfTestsRun='1'><sourceFile>"
                + clazz.substring(clazz.lastIndexOf('.') + 1) + ".java</sourceFile><mutatedClass>" + clazz
                + "</mutatedClass><mutatedMethod>" + method + "</mutatedMethod><methodDescription>()V</methodDescription>"
                + "<lineNumber>7</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.MathMutator"
                + "</mutator><indexes>" + indexes + "</indexes><blocks><block>0</block></blocks><killingTest/>"
                + "<description>Replaced integer addition with subtraction</description></mutation>\n";
    }

    @Test
    void severalIndexesAreKeptAndTheMostUntriagedClassComesFirst() throws IOException {
        // A: one open, untriaged; B: three open, all triaged; C: two open, untriaged. By untriaged count, not by name
        // or size: C, A, B.
        Path xml = Files.writeString(dir.resolve("mutations.xml"), "<mutations>\n"
                + mutation("io.x.A", "a", "<index>1</index>", "SURVIVED")
                + mutation("io.x.B", "b1", "<index>1</index>", "SURVIVED")
                + mutation("io.x.B", "b2", "<index>2</index>", "SURVIVED")
                + mutation("io.x.B", "b3", "<index>3</index>", "NO_COVERAGE")
                + mutation("io.x.C", "c1", "<index>4</index><index>9</index>", "SURVIVED")
                + mutation("io.x.C", "c2", "<index>5</index>", "SURVIVED") + "</mutations>\n");
        List<PitReport.Row> rows = List.of("b1", "b2", "b3").stream().map(m -> new PitReport.Row("io.x.B", m, "()V",
                "MathMutator", m.substring(1), "Replaced integer addition with subtraction", "accepted", "why"))
                .toList();
        Path csv = dir.resolve("triage.csv");
        PitReport.writeTriage(csv, rows);
        assertEquals(rows, List.copyOf(PitReport.readTriage(csv).values()), "written and read back");
        PitReport p = PitReport.read(xml, csv);
        assertEquals(List.of("io.x.C", "io.x.A", "io.x.B"), List.copyOf(p.byClass().keySet()));
        PitReport.Open c1 = p.open().get(4);
        assertEquals("4 9", c1.index());
        assertEquals("C.java:7 c1 MathMutator (SURVIVED) — Replaced integer addition with subtraction", c1.text());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> packages = (List<Map<String, Object>>) PitTriage.summary(p).get("packages");
        assertEquals(List.of("io.x"), packages.stream().map(m -> m.get("package")).toList());
    }

    /** Only a report at a module's own path gets the triage: not one as deep below the root at another path. */
    @Test
    void aReportAtNoModulesPathGetsNoTriageAtAnyDepth() throws IOException {
        Path csv = dir.resolve(PitReport.TRIAGE);
        PitReport.writeTriage(Files.createDirectories(csv.getParent()).resolve(csv.getFileName()), List.of());
        assertNull(PitReport.findTriage(dir.resolve("a/b/c/mutations.xml")), "four levels deep, as a module's report");
        assertEquals(csv.toAbsolutePath().normalize(),
                PitReport.findTriage(dir.resolve("ledger/target/pit-reports/mutations.xml")));
    }
}
