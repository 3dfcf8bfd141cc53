package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The decisive kill: the largest-margin failing check or control of the mutant's claims, a check first on a tie. */
class DecisiveLineTest {

    private static EvidenceValues.Value line(String claim, String kind, String metric, double margin) {
        return new EvidenceValues.Value(claim, kind, metric, "T#m", 1L, new EvidenceValues.Reading(0, 0, true, "=="),
                new EvidenceValues.Reading(2, 0, false, "=="), margin);
    }

    @Test
    void theLargestMarginWinsAndACheckBeatsAControlOnATie() {
        EvidenceValues.Value control = line("N2", "control", "c", Double.POSITIVE_INFINITY);
        EvidenceValues.Value check = line("N2", "check", "k", Double.POSITIVE_INFINITY);
        EvidenceValues.Value weaker = line("N2", "check", "w", 3.0);
        assertEquals("k", EvidenceValues.decisive(List.of(control, weaker, check), List.of("N2")).metric());
        assertEquals("k", EvidenceValues.decisive(List.of(check, control), List.of("N2")).metric());
        assertEquals("c", EvidenceValues.decisive(List.of(weaker, control), List.of("N2")).metric());
    }

    @Test
    void degeneracyLinesAndOtherClaimsNeverDecide() {
        EvidenceValues.Value degenerate = line("N2", "degeneracy", "d", Double.POSITIVE_INFINITY);
        EvidenceValues.Value foreign = line("U5", "check", "u", 9.0);
        assertNull(EvidenceValues.decisive(List.of(degenerate, foreign), List.of("N2")));
    }
}
