package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.attnproof.fixtures.evidence.EvidenceLine;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A claim row's status and worst line at their edges: only informational lines are INFO, never PASS; a failing
 * degeneracy line is worse than any passing check; without a judged line the worst is the first degeneracy, then the
 * first skip; of equal margins the first line is the worst.
 */
class ClaimRowVerdictTest {

    private static final String HEAD = "{\"claim\":\"U5\",\"backend\":\"cpu\",";

    private static EvidenceLine parse(String rest) {
        return EvidenceLine.parse(HEAD + rest + ",\"run\":\"1\"}", "t.jsonl:1");
    }

    private static EvidenceLine info(String t) {
        return parse("\"kind\":\"info\",\"metric\":\"i\",\"value\":0.5,\"test\":\"" + t + "\"");
    }

    private static EvidenceLine skip(String t) {
        return parse("\"kind\":\"skip\",\"metric\":\"skipped\",\"value\":0.0,\"skipped\":\"n/a\",\"test\":\"" + t + "\"");
    }

    private static EvidenceLine degeneracy(String t, double value, boolean passed) {
        return parse("\"kind\":\"degeneracy\",\"metric\":\"degeneracy:d\",\"value\":" + value + ",\"cmp\":\">\","
                + "\"limit\":0,\"passed\":" + passed + ",\"test\":\"" + t + "\"");
    }

    private static EvidenceLine check(String t, double value, double limit) {
        return parse("\"kind\":\"check\",\"metric\":\"m\",\"value\":" + value + ",\"cmp\":\"<=\",\"limit\":" + limit
                + ",\"passed\":" + (value <= limit) + ",\"test\":\"" + t + "\"");
    }

    @Test
    void onlyInformationalLinesAreInfoNotPass() {
        assertEquals(ClaimRow.Status.INFO, ClaimRow.status(List.of(info("T#a"), info("T#b"))));
        assertEquals(ClaimRow.Status.PASS, ClaimRow.status(List.of(info("T#a"), check("T#c", 1, 2))));
        assertEquals(ClaimRow.Status.SKIP, ClaimRow.status(List.of(info("T#a"), skip("T#s"))));
    }

    @Test
    void aFailingDegeneracyLineIsWorseThanAPassingCheck() {
        EvidenceLine failing = degeneracy("T#d", 0, false);
        assertSame(failing, ClaimRow.worst(List.of(check("T#c", 1, 2), failing)));
    }

    @Test
    void withoutAJudgedLineTheWorstIsTheFirstDegeneracyThenTheFirstSkip() {
        EvidenceLine d = degeneracy("T#d", 3, true);
        EvidenceLine s = skip("T#s");
        assertSame(d, ClaimRow.worst(List.of(info("T#i"), s, d)));
        assertSame(s, ClaimRow.worst(List.of(info("T#i"), s, skip("T#t"))));
        EvidenceLine only = info("T#only");
        assertSame(only, ClaimRow.worst(List.of(only, info("T#other"))));
    }

    @Test
    void ofEqualMarginsTheFirstLineIsTheWorst() {
        EvidenceLine first = check("T#first", 1, 2);
        assertSame(first, ClaimRow.worst(List.of(first, check("T#second", 1, 2))));
    }
}
