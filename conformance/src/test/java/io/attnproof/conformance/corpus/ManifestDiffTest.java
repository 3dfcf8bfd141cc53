package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The seal's manifest comparison names the first field that differs, in a fixed order (seed, scale, each case, an
 * extra case, each check, an extra check, the checks' order), from hand-built manifests; and a selection is whole
 * only when both its batch rows and its query rows are "all" (-1).
 */
class ManifestDiffTest {
    private static Manifest.Entry entry(String id, String dtype) {
        return new Manifest.Entry(id, "U1", "union", dtype, 7, "cases/" + id + "/case.json", new int[] {1, 1, 4, 8},
                "d");
    }

    private static CheckSpec check(String id, String type) {
        return new CheckSpec(id, "U1", type, "pass", CheckSpec.Sel.all("A"), null, null, "n");
    }

    private static final Manifest WANT = new Manifest(13, "small", List.of(entry("A", "F32"), entry("B", "F32")),
            List.of(check("c1", "oracle"), check("c2", "oracle")));

    private static String first(Manifest got) {
        String d = Seal.ManifestDiff.first(got, WANT);
        return d == null ? null : d.replace('\u0000', '|');
    }

    @Test
    void theFirstDifferingFieldIsNamed() {
        assertNull(first(WANT), "equal manifests differ nowhere");
        assertEquals("seed|14, but the seal's corpus is", first(new Manifest(14, "small", WANT.cases(), WANT.checks())));
        assertEquals("scale|full, but the seal's corpus is", first(new Manifest(13, "full", WANT.cases(), WANT.checks())));
        assertEquals("cases[B]|missing: attnproof regenerates this case",
                first(new Manifest(13, "small", List.of(entry("A", "F32")), WANT.checks())));
        assertEquals("cases[A].dtype|BF16, but attnproof regenerates F32",
                first(new Manifest(13, "small", List.of(entry("A", "BF16"), entry("B", "F32")), WANT.checks())));
        assertEquals("cases[C]|not a case attnproof regenerates", first(new Manifest(13, "small",
                List.of(entry("A", "F32"), entry("B", "F32"), entry("C", "F32")), WANT.checks())));
        assertEquals("checks[c2]|missing: attnproof regenerates this check",
                first(new Manifest(13, "small", WANT.cases(), List.of(check("c1", "oracle")))));
        assertEquals("checks[c1].type|same-bits, but attnproof regenerates oracle", first(new Manifest(13, "small",
                WANT.cases(), List.of(check("c1", "same-bits"), check("c2", "oracle")))));
        assertEquals("checks[c3]|not a check attnproof regenerates", first(new Manifest(13, "small", WANT.cases(),
                List.of(check("c1", "oracle"), check("c2", "oracle"), check("c3", "oracle")))));
        assertEquals("checks|the checks are reordered against what attnproof regenerates", first(new Manifest(13,
                "small", WANT.cases(), List.of(check("c2", "oracle"), check("c1", "oracle")))));
    }

    @Test
    void aSelectionIsWholeOnlyWhenBothRangesAreAll() {
        assertEquals(true, CheckSpec.Sel.all("A").whole());
        assertFalse(CheckSpec.Sel.rows("A", 0, 1, -1, -1).whole(), "batch row 0 only");
        assertFalse(CheckSpec.Sel.rows("A", -1, -1, 0, 2).whole(), "query rows 0..2 only");
    }
}
