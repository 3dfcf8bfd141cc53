package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.fixtures.evidence.EvidenceLine;
import org.junit.jupiter.api.Test;

/**
 * The ledger's number and link formatting at the edges of each rule: the scientific switch at 1e-2 and 1e4, the
 * integer form below 1e15, source links with and without a line number, cutting at exactly the limit.
 */
class FmtTest {
    @Test
    void sourceLinksClimbToTheRootAndAnchorOnlyALinePositive() {
        assertEquals("../../../a/B.java#L12", Fmt.sourceHref("a/B.java:12"));
        assertEquals("../../../a/B.java", Fmt.sourceHref("a/B.java:0"), "line 0: the file, no anchor");
        // Negative controls: no line number, an empty one, a colon first, a non-numeric suffix.
        assertEquals("../../../a/B.java", Fmt.sourceHref("a/B.java"));
        assertEquals("../../../a/B.java:", Fmt.sourceHref("a/B.java:"));
        assertEquals("../../../:12", Fmt.sourceHref(":12"), "a colon at 0 names no path");
        assertEquals("../../../a:b", Fmt.sourceHref("a:b"));
        assertEquals("[`a/B.java:7`](../../../a/B.java#L7)", Fmt.sourceMd("a/B.java:7"));
        assertEquals("[`a b).java:7`](../../../a%20b%29.java#L7)", Fmt.sourceMd("a b).java:7"));
        assertEquals("<a class=\"src\" href=\"../../../a/B.java#L7\" title=\"a/B.java:7\"><code>a/B.java:7</code></a>",
                Fmt.sourceHtml("a/B.java:7"));
    }

    @Test
    void numbersAreIntegersOrThreeSignificantDigits() {
        assertEquals("3", Fmt.num(3.0));
        assertEquals("-7", Fmt.num(-7.0));
        assertEquals("2.50", Fmt.num(2.5));
        assertEquals("0.0100", Fmt.num(0.01), "1e-2 is the first plain value");
        assertEquals("9.99e-03", Fmt.num(0.00999));
        assertEquals("1.23e+04", Fmt.num(12345.5));
        assertEquals("1.00e+15", Fmt.num(1e15), "1e15 is the first integer written in scientific form");
        assertEquals("999999999999999", Fmt.num(999_999_999_999_999.0));
        assertEquals("NaN", Fmt.num(Double.NaN));
        assertEquals("Infinity", Fmt.num(Double.POSITIVE_INFINITY));
    }

    @Test
    void ratiosCarryATimesSign() {
        assertEquals("2.10×", Fmt.times(2.1));
        assertEquals("0.0100×", Fmt.times(0.01), "1e-2 is the first plain ratio");
        assertEquals("9.0e-03×", Fmt.times(0.009));
        assertEquals("1.0e+04×", Fmt.times(1e4), "1e4 is the first scientific ratio");
        assertEquals("-2.10×", Fmt.times(-2.1));
        assertEquals("∞", Fmt.times(Double.POSITIVE_INFINITY));
        assertEquals("-∞", Fmt.times(Double.NEGATIVE_INFINITY));
        assertEquals("NaN", Fmt.times(Double.NaN));
    }

    @Test
    void linesAreDescribedByKind() {
        assertEquals("lookups 12 (info)", Fmt.describe(EvidenceLine.info("M7", "cpu", "lookups", 12, null, "T#t", "1")));
        assertEquals("skipped: no driver", Fmt.describe(EvidenceLine.skip("U5", "cuda", "no driver", null, "T#t", "1")));
    }

    @Test
    void cutKeepsTextAtTheLimitAndEllipsesBeyond() {
        assertEquals("abc", Fmt.cut("abc", 3));
        assertEquals("ab…", Fmt.cut("abcd", 3));
        assertEquals("a b", Fmt.cut("a\nb", 3));
        assertEquals("…", Fmt.cut("abcd", 0));
        assertEquals("", Fmt.cut(null, 3));
        assertEquals("a\\|b c", Fmt.md("a|b\nc"));
        assertEquals("&lt;a href=&quot;x&quot;&gt;&amp;&#39;", Fmt.html("<a href=\"x\">&'"));
    }
}
