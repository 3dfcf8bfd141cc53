package io.attnproof.mutants;

import io.attnproof.fixtures.json.JsonTrees;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Merges the shard files {@code results-k-of-n.json} of one campaign into {@code results.json} and
 * {@code results.md}: every shard 1..n present exactly once, no mutant twice and, when the catalog is given, every
 * catalog mutant present. Usage: {@code MergeResults RESULTS_DIR [CATALOG_DIR]}; exit 0 when every mutant was
 * killed, 1 when one was not, 2 when the shard files do not make one campaign. {@code MergeResults --compare A B}
 * compares two results files verdict by verdict ({@link #compare}); exit 0 when they agree, 1 when not.
 */
public final class MergeResults {
    private static final Pattern SHARD_FILE = Pattern.compile("results-(\\d+)-of-(\\d+)\\.json");

    private MergeResults() {
    }

    /** Merges the shard files under {@code dir}; {@code catalog} (may be null) lists the ids that must all be there. */
    public static List<Map<String, Object>> merge(Path dir, Path catalog) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("no results directory " + dir);
        }
        Map<Integer, Path> shards = new TreeMap<>();
        int n = -1;
        try (Stream<Path> s = Files.list(dir)) {
            for (Path f : s.sorted().toList()) {
                Matcher m = SHARD_FILE.matcher(f.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                int k = Integer.parseInt(m.group(1));
                int total = Integer.parseInt(m.group(2));
                if (n == -1) {
                    n = total;
                } else if (n != total) {
                    throw new IllegalArgumentException("shard files of different campaigns under " + dir + ": "
                            + f.getFileName() + " is one of " + total + ", another of " + n);
                }
                if (k < 1 || k > total) {
                    throw new IllegalArgumentException(f.getFileName() + ": shard " + k + " of " + total
                            + " is out of range");
                }
                shards.put(k, f);
            }
        }
        if (n == -1) {
            throw new IllegalArgumentException("no shard file results-k-of-n.json under " + dir);
        }
        List<Integer> missing = new ArrayList<>();
        for (int k = 1; k <= n; k++) {
            if (!shards.containsKey(k)) {
                missing.add(k);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("shards " + missing + " of " + n + " are missing under " + dir);
        }
        List<Map<String, Object>> merged = new ArrayList<>();
        Set<String> ids = new LinkedHashSet<>();
        for (Path f : shards.values()) {
            for (Map<String, Object> r : ResultsFiles.readJson(f)) {
                String id = String.valueOf(r.get("id"));
                if (!ids.add(id)) {
                    throw new IllegalArgumentException("mutant " + id + " appears in more than one shard (again in "
                            + f.getFileName() + ")");
                }
                merged.add(r);
            }
        }
        if (catalog != null) {
            Set<String> expected = new LinkedHashSet<>();
            try (Stream<Path> s = Files.list(catalog)) {
                s.map(p -> p.getFileName().toString()).filter(name -> name.endsWith(".patch")).sorted()
                        .forEach(name -> expected.add(name.substring(0, name.length() - ".patch".length())));
            }
            Set<String> absent = new LinkedHashSet<>(expected);
            absent.removeAll(ids);
            Set<String> unknown = new LinkedHashSet<>(ids);
            unknown.removeAll(expected);
            if (!absent.isEmpty() || !unknown.isEmpty()) {
                throw new IllegalArgumentException("the shards do not cover the catalog " + catalog + ": missing "
                        + absent + ", not in the catalog " + unknown);
            }
        }
        merged.sort(Comparator.comparing(r -> String.valueOf(r.get("id"))));
        return merged;
    }

    /** Merges and writes {@code results.json} and {@code results.md} under {@code dir}. */
    public static List<Map<String, Object>> mergeAndWrite(Path dir, Path catalog) throws IOException {
        List<Map<String, Object>> merged = merge(dir, catalog);
        StringBuilder json = new StringBuilder("[\n");
        for (int i = 0; i < merged.size(); i++) {
            json.append(toJson(merged.get(i))).append(i + 1 < merged.size() ? ",\n" : "\n");
        }
        json.append("]\n");
        Files.writeString(dir.resolve("results.json"), json);
        ResultsFiles.writeMarkdown(dir.resolve("results.md"), merged, "Merged from the shard files under " + dir + ".");
        return merged;
    }

    /** The fields a verdict is made of: everything a result records except its wall time ({@code seconds}). */
    static final List<String> VERDICT_FIELDS = List.of("id", "claims", "interleaving", "status", "detail", "killers",
            "values", "margin", "tests_run", "tests_failed");
    /**
     * What a race's verdict is made of ({@code interleaving} in its header): its counts and which of its checks fails
     * first depend on how the threads happened to interleave, so only the outcome (status, detail, test counts), the
     * killing tests and the decisive line's claim, kind and test are compared.
     */
    static final List<String> RACE_FIELDS = List.of("id", "claims", "interleaving", "status", "detail",
            "killer_tests", "decisive_claim", "decisive_kind", "decisive_test", "tests_run", "tests_failed");

    /**
     * Where two campaigns over the same catalog differ (empty when they agree): the same ids, and per id the same
     * status, killers with their messages, failing evidence lines with their values both ways (the decisive line
     * among them) and kill margin. Only the wall time may differ; for a race ({@link #RACE_FIELDS}) also its counts.
     * {@code a} and {@code b} name the two sides.
     */
    public static List<String> compare(String a, List<Map<String, Object>> left, String b,
            List<Map<String, Object>> right) {
        Map<String, Map<String, Object>> l = byId(left);
        Map<String, Map<String, Object>> r = byId(right);
        List<String> diffs = new ArrayList<>();
        for (String id : l.keySet()) {
            if (!r.containsKey(id)) {
                diffs.add(id + ": in " + a + " only");
            }
        }
        for (String id : r.keySet()) {
            if (!l.containsKey(id)) {
                diffs.add(id + ": in " + b + " only");
            }
        }
        for (Map.Entry<String, Map<String, Object>> e : l.entrySet()) {
            Map<String, Object> other = r.get(e.getKey());
            if (other == null) {
                continue;
            }
            boolean race = e.getValue().get("interleaving") != null || other.get("interleaving") != null;
            for (String field : race ? RACE_FIELDS : VERDICT_FIELDS) {
                Object x = field(e.getValue(), field);
                Object y = field(other, field);
                if (!java.util.Objects.equals(toJson(x), toJson(y))) {
                    diffs.add(e.getKey() + ": " + field + " differs: " + a + " " + toJson(x) + " vs " + b + " "
                            + toJson(y));
                }
            }
        }
        return diffs;
    }

    /** Field {@code name} of a result, or the derived ones of {@link #RACE_FIELDS}. */
    @SuppressWarnings("unchecked")
    private static Object field(Map<String, Object> result, String name) {
        if (name.equals("killer_tests")) {
            List<String> tests = new ArrayList<>();
            if (result.get("killers") instanceof List<?> killers) {
                killers.forEach(k -> tests.add(String.valueOf(((Map<String, Object>) k).get("test"))));
            }
            return tests.stream().sorted().toList();
        }
        if (name.startsWith("decisive_")) {
            return result.get("decisive") instanceof Map<?, ?> d ? d.get(name.substring("decisive_".length())) : null;
        }
        return result.get(name);
    }

    /** The decisive line of one result: its failing evidence line with the kill margin, or null when none failed. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> decisive(Map<String, Object> result) {
        Object margin = result.get("margin");
        if (!(result.get("values") instanceof List<?> values) || margin == null) {
            return null;
        }
        for (Object v : values) {
            Map<String, Object> line = (Map<String, Object>) v;
            if (toJson(margin).equals(toJson(line.get("margin")))) {
                return line;
            }
        }
        return null;
    }

    private static Map<String, Map<String, Object>> byId(List<Map<String, Object>> results) {
        Map<String, Map<String, Object>> out = new TreeMap<>();
        for (Map<String, Object> r : results) {
            if (out.put(String.valueOf(r.get("id")), r) != null) {
                throw new IllegalArgumentException("mutant " + r.get("id") + " appears twice");
            }
        }
        return out;
    }

    /** Re-serialises a parsed JSON value; an integral number prints without a fraction, so 3 and 3.0 compare equal. */
    static String toJson(Object value) {
        return JsonTrees.write(integral(value));
    }

    private static Object integral(Object value) {
        return switch (value) {
            case Map<?, ?> m -> {
                Map<Object, Object> out = new java.util.LinkedHashMap<>();
                m.forEach((k, v) -> out.put(k, integral(v)));
                yield out;
            }
            case List<?> l -> l.stream().map(MergeResults::integral).toList();
            case Double d when d == Math.rint(d) && Math.abs(d) < 1e15 && !d.equals(-0.0) -> d.longValue();
            case null -> null;
            default -> value;
        };
    }

    public static void main(String[] args) throws IOException {
        System.exit(run(args, System.out, System.err));
    }

    /** The command: 0 when every merged mutant is killed (or two compared files agree), 1 otherwise, 2 on bad input. */
    static int run(String[] args, PrintStream out, PrintStream err) throws IOException {
        if (args.length == 3 && args[0].equals("--compare")) {
            List<String> diffs = compare(args[1], ResultsFiles.readJson(Path.of(args[1])), args[2],
                    ResultsFiles.readJson(Path.of(args[2])));
            diffs.forEach(d -> out.println("mutants compare: " + d));
            out.println("mutants compare: " + (diffs.isEmpty() ? "identical verdicts" : diffs.size()
                    + " difference(s)") + " between " + args[1] + " and " + args[2]);
            return diffs.isEmpty() ? 0 : 1;
        }
        if (args.length < 1 || args.length > 2) {
            err.println("usage: MergeResults RESULTS_DIR [CATALOG_DIR] | MergeResults --compare A.json B.json");
            return 2;
        }
        List<Map<String, Object>> merged;
        try {
            merged = mergeAndWrite(Path.of(args[0]), args.length == 2 ? Path.of(args[1]) : null);
        } catch (IllegalArgumentException | IOException e) {
            err.println("mutants merge: " + e.getMessage());
            return 2;
        }
        out.println(ResultsFiles.headline(merged) + " -> " + Path.of(args[0]).resolve("results.json"));
        return merged.stream().allMatch(r -> "killed".equals(r.get("status"))) ? 0 : 1;
    }
}
