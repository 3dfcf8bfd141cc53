package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.LineKind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The results files a reviewer reads: {@code results.json} keeps every field of a mutant's verdict (claims, seeds,
 * both readings, margins, the rounded wall time), and {@code results.md} shows the right killer, the smallest kill
 * margin among the killed only, and the decisive line (the first value of the decisive claim, metric and test).
 * Expected texts are written out by hand from the rules in ResultsFiles' Javadoc, not captured from a run.
 * Degenerate if every row looked alike: the six rows differ in each field the table derives (one killer or two, a
 * detail or none, no margin, an infinite one, a tie, a survivor with a smaller margin than any kill).
 */
class ResultsFilesTest {
    @TempDir
    Path dir;

    @Test
    void aResultsJsonRoundTripKeepsEveryField() throws Exception {
        EvidenceValues.Value seeded = new EvidenceValues.Value("U1", LineKind.CHECK, "err", "T#a", 7L,
                new EvidenceValues.Reading(0.5, 1, true, Comparison.LE), new EvidenceValues.Reading(4, 1, false, null), 4);
        EvidenceValues.Value unseeded = new EvidenceValues.Value("U2", LineKind.CONTROL, "gap", "T#b", null, null,
                new EvidenceValues.Reading(0, 2, false, Comparison.GE), Double.POSITIVE_INFINITY);
        MutantResult r = new MutantResult("07-x", List.of("U1", "U2"), "breaks", "origin", null, "p.patch",
                MutantResult.Status.KILLED, null, List.of(new ClaimTests.Killer("T#a", "boom")),
                List.of(seeded, unseeded), seeded, 4, 3, 1, 3.14159);
        ResultsFiles.writeJson(dir.resolve("r.json"), List.of(r));
        Map<String, Object> back = ResultsFiles.readJson(dir.resolve("r.json")).getFirst();
        assertEquals(List.of("U1", "U2"), back.get("claims"));
        assertEquals(3.14, ((Number) back.get("seconds")).doubleValue(), 0.0, "wall time rounded to 0.01 s");
        assertFalse(back.containsKey("interleaving"), "no interleaving header: no field");
        List<?> values = (List<?>) back.get("values");
        Map<?, ?> first = (Map<?, ?>) values.get(0);
        Map<?, ?> second = (Map<?, ?>) values.get(1);
        assertEquals(7, ((Number) first.get("seed")).intValue());
        assertFalse(second.containsKey("seed"), "a line without a seed has no seed field");
        Map<?, ?> fix = (Map<?, ?>) first.get("fix");
        assertEquals(0.5, ((Number) fix.get("value")).doubleValue(), 0.0);
        assertEquals("<=", fix.get("cmp"));
        assertFalse(((Map<?, ?>) first.get("mutant")).containsKey("cmp"), "no comparison: no cmp field");
        assertNull(second.get("fix"));
        assertEquals(">=", ((Map<?, ?>) second.get("mutant")).get("cmp"));
    }

    private static Map<String, Object> row(String id, List<String> claims, String status, List<String> killers,
            String detail, Object margin, Object seconds) {
        Map<String, Object> r = new HashMap<>();
        r.put("id", id);
        if (claims != null) {
            r.put("claims", claims);
        }
        r.put("status", status);
        List<Object> k = new ArrayList<>();
        killers.forEach(t -> k.add(Map.of("test", t)));
        r.put("killers", k);
        r.put("detail", detail);
        if (margin != null) {
            r.put("margin", margin);
        }
        r.put("seconds", seconds);
        return r;
    }

    private static Map<String, Object> value(String claim, String metric, String test, Object fix, Object value,
            Object limit) {
        Map<String, Object> v = new HashMap<>();
        v.put("claim", claim);
        v.put("metric", metric);
        v.put("test", test);
        v.put("fix", fix == null ? null : Map.of("value", fix));
        v.put("mutant", Map.of("value", value, "limit", limit));
        return v;
    }

    private static void decisive(Map<String, Object> r, String claim, String metric, String test, Map<?, ?>... values) {
        r.put("decisive", Map.of("claim", claim, "metric", metric, "test", test));
        r.put("values", List.of(values));
    }

    @Test
    void theMarkdownTableShowsTheKillerTheSmallestKillMarginAndTheDecisiveLine() {
        String t90 = "T#" + "x".repeat(88);
        String t91 = "T#" + "y".repeat(89);
        Map<String, Object> a = row("01-a", List.of("U1", "U2"), "killed", List.of("T#a", "T#b"), null, 2.5, 3);
        decisive(a, "U1", "m", "T#a",
                value("U1", "m", "T#x", 0, 7, 1),           // another test
                value("U2", "m", "T#a", 0, 7, 1),           // another claim
                value("U1", "q", "T#a", 0, 7, 1),           // another metric
                value("U1", "m", "T#a", 0.5, 1234.5678, 1e15),
                value("U1", "m", "T#a", 9, 9, 9));          // a later match does not replace the first
        Map<String, Object> b = row("02-b", List.of("N2"), "killed", List.of(t90), null, 100, 1);
        decisive(b, "N2", "k", "T#c", value("N2", "k", "T#c", null, 3, "Infinity"));
        Map<String, Object> c = row("03-c", List.of(), "survived", List.of(), "first | line\nsecond", 0.1, 1);
        c.put("values", List.of());
        Map<String, Object> d = row("04-d", List.of("U3"), "killed", List.of(t91), null, "Infinity", 2);
        decisive(d, "U3", "z", "T#z", value("U3", "other", "T#z", 1, 2, 3));
        Map<String, Object> e = row("05-e", List.of("U1"), "killed", List.of("T#e"), null, 2.5, 4);
        decisive(e, "U1", "e", "T#e", value("U1", "e", "T#e", "NaN", -2, 0));
        Map<String, Object> f = row("06-f", null, "stale", List.of(), null, null, 0);

        String expected = """
                6 mutations, 4 caught (1 survived, 1 stale).

                ctx line

                Smallest kill margin: 2.5× (01-a).

                | mutant | claims | status | killed by | margin | decisive line: fix → mutant (limit) | s |
                |---|---|---|---|---|---|---|
                | 01-a | U1, U2 | killed | T#a (+1) | 2.5× | m: 0.500 → 1.23e+03 (1.00e+15) | 3 |
                | 02-b | N2 | killed | %s | 100× | k: — → 3 (Infinity) | 1 |
                | 03-c |  | survived | first \\| line | 0.10× |  | 1 |
                | 04-d | U3 | killed | %s… | ∞ | no failing check or control line of its claims | 2 |
                | 05-e | U1 | killed | T#e | 2.5× | e: NaN → -2 (0) | 4 |
                | 06-f |  | stale |  | — |  | 0 |
                """.formatted(t90, t91.substring(0, 89));
        assertEquals(expected, ResultsFiles.markdown(List.of(a, b, c, d, e, f), "ctx line"));
        assertEquals("2 mutations, all 2 caught", ResultsFiles.headline(List.of(a, b)));
        assertEquals(true, ResultsFiles.markdown(List.of(a), " ").startsWith("1 mutations, all 1 caught.\n\n"
                + "Smallest kill margin: 2.5× (01-a).\n\n"), "a blank context adds no paragraph");
    }
}
