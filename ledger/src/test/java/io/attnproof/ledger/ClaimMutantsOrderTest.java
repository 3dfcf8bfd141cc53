package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.EvidenceLine;
import io.attnproof.fixtures.evidence.LineKind;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A claim's PIT kills are listed by class, then line, then mutator, whatever the report's order; the section's
 * introduction names where the covered classes come from.
 */
class ClaimMutantsOrderTest {
    private static final String T = "io.x.T.[engine:junit-jupiter]/[class:io.x.T]/[method:t()]";

    private static PitReport.Mutation killed(String clazz, int line, String mutator) {
        return new PitReport.Mutation(clazz, "m", "()V", line, mutator, "1", "KILLED", true, "d", "F.java",
                List.of(T), null);
    }

    @Test
    void killsAreSortedByClassLineAndMutator() {
        List<PitReport.Mutation> all = List.of(killed("io.x.B", 5, "M1"), killed("io.x.A", 9, "M2"),
                killed("io.x.A", 9, "M1"), killed("io.x.A", 2, "M3"));
        PitReport pit = new PitReport(Path.of("mutations.xml"), 4, 4, 0, 0, 0, List.of(), List.of(), null, List.of(),
                all);
        EvidenceLine line = EvidenceLine.judged("U1", "cpu", LineKind.CHECK, "cells", 0, Comparison.EQ, 0, true, null,
                null, "T#t", "1");
        List<ClaimMutants> claims = ClaimMutants.of(List.of(line), null, pit, null);
        ClaimMutants u1 = claims.stream().filter(c -> c.claim().equals("U1")).findFirst().orElseThrow();
        assertEquals(List.of("io.x.A:2 M3", "io.x.A:9 M1", "io.x.A:9 M2", "io.x.B:5 M1"), u1.pitKilled().stream()
                .map(k -> k.mutation().clazz() + ":" + k.mutation().line() + " " + k.mutation().mutator()).toList());
        String intro = ClaimMutants.intro(claims, pit);
        assertTrue(intro.contains(" Covered classes from: the kills only (no full mutation matrix, no "
                + ClaimMutants.TEST_SCOPE + ")."), intro);
        assertTrue(intro.endsWith(" Of PIT's 4 killed mutations, 4 are killed by a claim's test; the others by tests"
                + " that record no evidence, or without a killing test (timed out, memory or run error)."), intro);
        assertTrue(ClaimMutants.intro(List.of(), null).contains(" Covered classes from: no PIT report."));
    }
}
