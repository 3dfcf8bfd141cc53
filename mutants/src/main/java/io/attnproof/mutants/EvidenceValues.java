package io.attnproof.mutants;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.EvidenceLine;
import io.attnproof.fixtures.evidence.LineKind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Evidence lines both ways: the lines a mutant run failed, each paired with the same line of the normal run (the
 * fix in place). Lines pair on (claim, metric, test, seed) and their order among equal keys, which is the order of
 * a test's parameterised invocations.
 */
public final class EvidenceValues {
    private EvidenceValues() {
    }

    /** One evidence line's number, with its comparison (null for info and skip lines). */
    public record Reading(double value, double limit, boolean passed, Comparison cmp) {
    }

    /** One evidence line as read back. */
    public record Line(String claim, LineKind kind, String metric, String test, Long seed, Reading reading) {
        String key() {
            return claim + "\u0000" + metric + "\u0000" + test + "\u0000" + seed;
        }
    }

    /**
     * A failing mutant line with its fix-side twin (null when the normal run wrote no such line) and its margin;
     * {@code kind} is check, control or degeneracy.
     */
    public record Value(String claim, LineKind kind, String metric, String test, Long seed, Reading fix,
            Reading mutant, double margin) {

        /** Whether this line can be a claim's decisive kill: a check or a control, never a degeneracy. */
        public boolean decisive() {
            return kind == LineKind.CHECK || kind == LineKind.CONTROL;
        }
    }

    /** Every line of every {@code *.jsonl} under {@code dir} (files in name order); empty if {@code dir} is absent. */
    public static List<Line> read(Path dir) {
        List<Line> out = new ArrayList<>();
        if (dir == null || !Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".jsonl")).sorted().toList()) {
                List<String> texts = Files.readAllLines(f, StandardCharsets.UTF_8);
                for (int i = 0; i < texts.size(); i++) {
                    if (texts.get(i).isBlank()) {
                        continue;
                    }
                    EvidenceLine l = EvidenceLine.parse(texts.get(i), f + ":" + (i + 1));
                    // Info and skip lines carry no verdict; a judged line passes only if its numbers do.
                    out.add(new Line(l.claim(), l.kind(), l.metric(), l.test(), l.seed(),
                            new Reading(l.value(), l.limit(), l.passed(), l.cmp())));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read evidence under " + dir, e);
        }
        return out;
    }

    /** The failing lines of {@code mutant}, each with its twin from {@code fix} and its margin. */
    public static List<Value> failing(List<Line> fix, List<Line> mutant) {
        Map<String, List<Line>> fixByKey = new HashMap<>();
        for (Line l : fix) {
            fixByKey.computeIfAbsent(l.key(), k -> new ArrayList<>()).add(l);
        }
        Map<String, Integer> seen = new HashMap<>();
        List<Value> out = new ArrayList<>();
        for (Line l : mutant) {
            int occurrence = seen.merge(l.key(), 1, Integer::sum) - 1;
            if (l.reading().passed()) {
                continue;
            }
            List<Line> twins = fixByKey.getOrDefault(l.key(), List.of());
            Reading fixReading = occurrence < twins.size() ? twins.get(occurrence).reading() : null;
            out.add(new Value(l.claim(), l.kind(), l.metric(), l.test(), l.seed(), fixReading, l.reading(),
                    margin(l.reading())));
        }
        return out;
    }

    /**
     * Observed ÷ allowed for a failing line, read from its comparison: {@code value / limit} for an upper bound
     * ({@code <=}), {@code limit / value} for a lower bound ({@code >=}, {@code >}: controls, required counts), the
     * larger ratio for an exact {@code ==}; infinite when the allowance is 0 or the value NaN or past zero.
     */
    public static double margin(Reading r) {
        double value = r.value();
        double limit = r.limit();
        if (Double.isNaN(value) || Double.isNaN(limit)) {
            return Double.POSITIVE_INFINITY;
        }
        Comparison cmp = r.cmp() == null ? Comparison.LE : r.cmp();
        return switch (cmp) {
            case GE, GT -> value <= 0 ? Double.POSITIVE_INFINITY : limit / value;
            case EQ -> value == 0 || limit == 0 || Math.signum(value) != Math.signum(limit)
                    ? Double.POSITIVE_INFINITY : Math.max(value / limit, limit / value);
            case LE -> limit <= 0 ? Double.POSITIVE_INFINITY : value / limit;
        };
    }

    /**
     * The decisive kill among {@code values}: the failing check or control line of one of {@code claims} with the
     * largest margin, a check before a control at equal margins (the check states the property; a control only that
     * the test can see); null when the mutant failed none (killed only by a degeneracy line or an exception).
     */
    public static Value decisive(List<Value> values, List<String> claims) {
        Value best = null;
        for (Value v : values) {
            if (v.decisive() && claims.contains(v.claim()) && (best == null || v.margin() > best.margin()
                    || (v.margin() == best.margin() && v.kind() == LineKind.CHECK && best.kind() != LineKind.CHECK))) {
                best = v;
            }
        }
        return best;
    }
}
