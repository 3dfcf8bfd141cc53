package io.attnproof.reports.ledger;

import io.attnproof.fixtures.evidence.Json;
import io.attnproof.fixtures.evidence.Worst;
import java.util.Map;

/**
 * One evidence line (CLAIMS.md "Evidence"): {@code claim, backend, metric, value, limit, passed, seed?, worst?,
 * test, skipped?}, plus where it was read ({@code file:line}).
 */
public record EvidenceLine(String claim, String backend, String metric, double value, double limit, boolean passed,
        Long seed, Worst worst, String test, String skipped, String source) {

    /**
     * Reads one parsed JSON object.
     *
     * @throws IllegalArgumentException naming the field that is missing or of the wrong type
     */
    public static EvidenceLine of(Map<String, Object> json, String source) {
        String claim = text(json, "claim");
        String backend = text(json, "backend");
        String metric = text(json, "metric");
        String test = text(json, "test");
        double value = Json.toDouble(required(json, "value"));
        double limit = Json.toDouble(required(json, "limit"));
        if (!(json.get("passed") instanceof Boolean passed)) {
            throw new IllegalArgumentException("\"passed\" = " + json.get("passed") + " must be true or false");
        }
        Long seed = null;
        if (json.get("seed") instanceof Double d) {
            seed = d.longValue();
        } else if (json.get("seed") != null) {
            throw new IllegalArgumentException("\"seed\" = " + json.get("seed") + " must be a number");
        }
        Worst worst = null;
        if (json.get("worst") instanceof Map<?, ?> w) {
            worst = new Worst(index(w, "b"), index(w, "h"), index(w, "r"), index(w, "c"));
        } else if (json.get("worst") != null) {
            throw new IllegalArgumentException("\"worst\" = " + json.get("worst") + " must be {b, h, r, c}");
        }
        Object skipped = json.get("skipped");
        if (skipped != null && !(skipped instanceof String)) {
            throw new IllegalArgumentException("\"skipped\" = " + skipped + " must be a string (the reason)");
        }
        return new EvidenceLine(claim, backend, metric, value, limit, passed, seed, worst, test, (String) skipped,
                source);
    }

    /** Whether this line only records a skipped backend. */
    public boolean isSkip() {
        return skipped != null;
    }

    /** Whether this line records a degeneracy condition ({@code degeneracy:<name>}). */
    public boolean isDegeneracy() {
        return metric.startsWith("degeneracy:");
    }

    /** Whether this line is a negative control ({@code control_gap:<name>}: the value must exceed the limit). */
    public boolean isControlGap() {
        return metric.startsWith("control_gap");
    }

    /** "metric value vs limit", or "skipped: reason". */
    public String describe() {
        if (isSkip()) {
            return "skipped: " + skipped;
        }
        return metric + " " + Fmt.num(value) + " vs " + Fmt.num(limit);
    }

    private static Object required(Map<String, Object> json, String key) {
        if (!json.containsKey(key)) {
            throw new IllegalArgumentException("\"" + key + "\" is missing");
        }
        return json.get(key);
    }

    private static String text(Map<String, Object> json, String key) {
        if (!(json.get(key) instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException("\"" + key + "\" = " + json.get(key) + " must be a non-blank string");
        }
        return s;
    }

    private static int index(Map<?, ?> w, String key) {
        if (!(w.get(key) instanceof Double d) || d < 0 || d != Math.rint(d)) {
            throw new IllegalArgumentException("\"worst." + key + "\" = " + w.get(key) + " must be an index >= 0");
        }
        return d.intValue();
    }
}
