package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.evidence.EvidenceLine;
import org.junit.jupiter.api.Test;

/**
 * A line's margin at its edges: a value of 0 under an upper limit is an infinite factor, a negative or infinite value
 * has no factor (exact when it passed, 0 when it failed), and the order puts finite factors before exact checks.
 */
class MarginTest {

    private static EvidenceLine line(String value, String cmp, String limit, boolean passed) {
        return EvidenceLine.parse("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"m\",\"value\":"
                + value + ",\"cmp\":\"" + cmp + "\",\"limit\":" + limit + ",\"passed\":" + passed
                + ",\"test\":\"T#m\",\"run\":\"1\"}", "t.jsonl:1");
    }

    @Test
    void aZeroValueUnderAnUpperLimitIsAnInfiniteFactor() {
        assertEquals("∞", Margin.of(line("0", "<=", "1.0e-6", true)).text());
        assertEquals("4.00×", Margin.of(line("2.5e-7", "<=", "1.0e-6", true)).text());
        assertEquals("3.00×", Margin.of(line("3", ">=", "1", true)).text());
    }

    @Test
    void aNegativeOrInfiniteValueIsExactWhenItPassedAndZeroWhenItFailed() {
        assertEquals("exact", Margin.of(line("-1", "<=", "1", true)).text());
        assertEquals("0.0e+00×", Margin.of(line("-1", ">=", "1", false)).text());
        assertEquals("exact", Margin.of(line("\"Infinity\"", ">=", "1", true)).text());
        assertEquals("0.0e+00×", Margin.of(line("\"Infinity\"", "<=", "1", false)).text());
    }

    @Test
    void finiteFactorsComeBeforeExactChecksAndInfiniteFactorsAfter() {
        Margin small = Margin.of(line("2", "<=", "3", true));
        Margin exact = Margin.of(line("0", "==", "0", true));
        Margin infinite = Margin.of(line("0", "<=", "3", true));
        assertTrue(small.compareTo(exact) < 0 && exact.compareTo(infinite) < 0 && small.compareTo(infinite) < 0);
        assertTrue(infinite.compareTo(small) > 0 && exact.compareTo(small) > 0);
    }
}
