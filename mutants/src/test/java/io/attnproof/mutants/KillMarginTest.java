package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.LineKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kill's margin (observed ÷ allowed) for each comparison at its edges, the pairing of a failing mutant line with
 * the same occurrence of its line in the normal run, and the evidence read back from a folder.
 */
class KillMarginTest {
    private static final double INF = Double.POSITIVE_INFINITY;

    @TempDir
    Path dir;

    private static double margin(double value, double limit, Comparison cmp) {
        return EvidenceValues.margin(new EvidenceValues.Reading(value, limit, false, cmp));
    }

    @Test
    void eachComparisonHasItsOwnRatioAndAZeroAllowanceIsInfinite() {
        assertEquals(1.5, margin(3, 2, Comparison.LE));
        assertEquals(1.5, margin(3, 2, null), "no comparison reads as an upper bound");
        assertEquals(INF, margin(3, 0, Comparison.LE));
        assertEquals(INF, margin(3, -1, Comparison.LE));
        assertEquals(3.0, margin(2, 6, Comparison.GE));
        assertEquals(3.0, margin(2, 6, Comparison.GT));
        assertEquals(INF, margin(0, 6, Comparison.GE));
        assertEquals(INF, margin(-1, 6, Comparison.GT));
        assertEquals(2.0, margin(4, 2, Comparison.EQ));
        assertEquals(4.0, margin(1, 4, Comparison.EQ));
        assertEquals(INF, margin(0, 4, Comparison.EQ));
        assertEquals(INF, margin(4, 0, Comparison.EQ));
        assertEquals(INF, margin(-2, 2, Comparison.EQ), "past zero");
        assertEquals(INF, margin(Double.NaN, 2, Comparison.LE));
        assertEquals(INF, margin(2, Double.NaN, Comparison.GE));
    }

    private static EvidenceValues.Line line(String metric, double value, boolean passed) {
        return new EvidenceValues.Line("U1", LineKind.CHECK, metric, "T#m", 7L,
                new EvidenceValues.Reading(value, 1, passed, Comparison.LE));
    }

    @Test
    void aFailingLineIsPairedWithTheSameOccurrenceOfItsLineInTheNormalRun() {
        List<EvidenceValues.Value> out = EvidenceValues.failing(
                List.of(line("m", 0.25, true), line("m", 0.5, true)),
                List.of(line("m", 0.25, true), line("m", 4, false), line("other", 3, false)));
        assertEquals(2, out.size(), "only the failing lines");
        assertEquals(0.5, out.get(0).fix().value(), "the second m of the mutant run pairs with the second of the fix");
        assertEquals(4.0, out.get(0).mutant().value());
        assertEquals(4.0, out.get(0).margin());
        assertNull(out.get(1).fix(), "no twin in the normal run");
        assertEquals("other", out.get(1).metric());
    }

    @Test
    void evidenceIsReadFromEveryJsonlFileInNameOrderSkippingBlankLines() throws IOException {
        assertEquals(List.of(), EvidenceValues.read(dir.resolve("absent")));
        String head = "{\"claim\":\"U1\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"";
        String tail = "\",\"value\":2,\"cmp\":\"<=\",\"limit\":1,\"passed\":false,\"seed\":7,\"test\":\"T#m\",\"run\":\"1\"}";
        Files.writeString(dir.resolve("B.jsonl"), head + "b" + tail + "\n\n");
        Files.writeString(dir.resolve("A.jsonl"), "\n" + head + "a1" + tail + "\n" + head + "a2" + tail + "\n");
        Files.writeString(dir.resolve("C.txt"), head + "c" + tail + "\n");
        List<EvidenceValues.Line> lines = EvidenceValues.read(dir);
        assertEquals(List.of("a1", "a2", "b"), lines.stream().map(EvidenceValues.Line::metric).toList());
        assertEquals(new EvidenceValues.Reading(2, 1, false, Comparison.LE), lines.get(0).reading());
        assertEquals(7L, lines.get(0).seed());
    }
}
