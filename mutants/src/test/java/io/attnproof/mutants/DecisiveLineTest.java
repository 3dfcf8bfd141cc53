package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.LineKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The decisive kill: the largest-margin failing check or control of the mutant's claims, a check first on a tie. */
class DecisiveLineTest {

    private static EvidenceValues.Value line(String claim, LineKind kind, String metric, double margin) {
        return new EvidenceValues.Value(claim, kind, metric, "T#m", 1L, new EvidenceValues.Reading(0, 0, true, Comparison.EQ),
                new EvidenceValues.Reading(2, 0, false, Comparison.EQ), margin);
    }

    @Test
    void theLargestMarginWinsAndACheckBeatsAControlOnATie() {
        EvidenceValues.Value control = line("N2", LineKind.CONTROL, "c", Double.POSITIVE_INFINITY);
        EvidenceValues.Value check = line("N2", LineKind.CHECK, "k", Double.POSITIVE_INFINITY);
        EvidenceValues.Value weaker = line("N2", LineKind.CHECK, "w", 3.0);
        assertEquals("k", EvidenceValues.decisive(List.of(control, weaker, check), List.of("N2")).metric());
        assertEquals("k", EvidenceValues.decisive(List.of(check, control), List.of("N2")).metric());
        assertEquals("c", EvidenceValues.decisive(List.of(weaker, control), List.of("N2")).metric());
    }

    @Test
    void degeneracyLinesAndOtherClaimsNeverDecide() {
        EvidenceValues.Value degenerate = line("N2", LineKind.DEGENERACY, "d", Double.POSITIVE_INFINITY);
        EvidenceValues.Value foreign = line("U5", LineKind.CHECK, "u", 9.0);
        assertNull(EvidenceValues.decisive(List.of(degenerate, foreign), List.of("N2")));
    }
}
