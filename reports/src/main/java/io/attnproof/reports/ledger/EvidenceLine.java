package io.attnproof.reports.ledger;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Json;
import io.attnproof.fixtures.evidence.LineKind;
import io.attnproof.fixtures.evidence.Worst;
import java.util.Map;

/**
 * One evidence line (CLAIMS.md "Evidence"): {@code claim, backend, kind, metric, value, cmp?, limit?, passed?, seed?,
 * worst?, test, skipped?, run?}, plus where it was read ({@code file:line}). The verdict is recomputed from value,
 * comparison and limit; the line's own {@code passed} is only compared with it.
 *
 * @param recordedPassed the line's {@code passed} field (true for info and skip lines, which have none)
 */
public record EvidenceLine(String claim, String backend, LineKind kind, String metric, double value, Comparison cmp,
        double limit, boolean recordedPassed, Long seed, Worst worst, String test, String skipped, String run,
        String source) {

    /**
     * Reads one parsed JSON object.
     *
     * @throws IllegalArgumentException naming the field that is missing or of the wrong type
     */
    public static EvidenceLine of(Map<String, Object> json, String source) {
        String claim = text(json, "claim");
        String backend = text(json, "backend");
        LineKind kind = LineKind.ofKey(text(json, "kind"));
        String metric = text(json, "metric");
        String test = text(json, "test");
        double value = Json.toDouble(required(json, "value"));
        Comparison cmp = null;
        double limit = Double.NaN;
        boolean passed = true;
        if (kind.judged()) {
            cmp = Comparison.ofSymbol(text(json, "cmp"));
            limit = Json.toDouble(required(json, "limit"));
            if (!(json.get("passed") instanceof Boolean p)) {
                throw new IllegalArgumentException("\"passed\" = " + json.get("passed") + " must be true or false");
            }
            passed = p;
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
        if (kind == LineKind.SKIP && skipped == null) {
            throw new IllegalArgumentException("\"skipped\" is missing: a skip line names its reason");
        }
        Object run = json.get("run");
        if (run != null && !(run instanceof String r && !r.isBlank())) {
            throw new IllegalArgumentException("\"run\" = " + run + " must be a non-blank string (the build's run id)");
        }
        return new EvidenceLine(claim, backend, kind, metric, value, cmp, limit, passed, seed, worst, test,
                (String) skipped, (String) run, source);
    }

    /** The verdict recomputed from value, comparison and limit; info and skip lines have none (true). */
    public boolean verdict() {
        return !kind.judged() || cmp.holds(value, limit);
    }

    /** Whether the line's own {@code passed} disagrees with the verdict its numbers give. */
    public boolean inconsistent() {
        return kind.judged() && recordedPassed != verdict();
    }

    /** Whether the line counts as passed: its numbers pass and it does not contradict them. */
    public boolean passed() {
        return verdict() && !inconsistent();
    }

    /** Whether this line only records a skipped backend. */
    public boolean isSkip() {
        return kind == LineKind.SKIP;
    }

    /** Whether this line is informational: shown, never a check. */
    public boolean isInfo() {
        return kind == LineKind.INFO;
    }

    /** Whether this line records a degeneracy condition. */
    public boolean isDegeneracy() {
        return kind == LineKind.DEGENERACY;
    }

    /** Whether this line is a negative control (its value must exceed, or reach, its limit). */
    public boolean isControlGap() {
        return kind == LineKind.CONTROL;
    }

    /** "metric value cmp limit", "metric value (info)", or "skipped: reason". */
    public String describe() {
        if (isSkip()) {
            return "skipped: " + skipped;
        }
        if (!kind.judged()) {
            return metric + " " + Fmt.num(value) + " (info)";
        }
        return metric + " " + Fmt.num(value) + " " + (verdict() ? "" : "not ") + cmp.symbol() + " " + Fmt.num(limit)
                + (inconsistent() ? " (INCONSISTENT: the line says passed = " + recordedPassed + ")" : "");
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
