package io.attnproof.mutants;

import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes {@code results.json} (one object per mutant) and the short {@code results.md} table, and reads them back. */
public final class ResultsFiles {
    private ResultsFiles() {
    }

    /** Writes {@code results} as a JSON array, one mutant object per line. */
    public static void writeJson(Path file, List<MutantResult> results) throws IOException {
        StringBuilder out = new StringBuilder("[\n");
        for (int i = 0; i < results.size(); i++) {
            out.append(results.get(i).toJson()).append(i + 1 < results.size() ? ",\n" : "\n");
        }
        out.append("]\n");
        write(file, out.toString());
    }

    /** Reads a results file back as JSON objects. */
    @SuppressWarnings("unchecked")
    public static List<Map<String, Object>> readJson(Path file) throws IOException {
        Object parsed = JsonTrees.parse(Files.readString(file, StandardCharsets.UTF_8));
        if (!(parsed instanceof List<?> list)) {
            throw new IOException(file + ": must hold a JSON array of mutant results");
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?>)) {
                throw new IOException(file + ": every element must be a mutant object");
            }
            out.add((Map<String, Object>) o);
        }
        return out;
    }

    /** Writes the human table: the "N mutations, all N caught" line first, then one row per mutant. */
    public static void writeMarkdown(Path file, List<Map<String, Object>> results, String context) throws IOException {
        write(file, markdown(results, context));
    }

    /** The headline: {@code "31 mutations, all 31 caught"}, or what was not. */
    public static String headline(List<Map<String, Object>> results) {
        int n = results.size();
        int killed = count(results, "killed");
        if (killed == n) {
            return n + " mutations, all " + n + " caught";
        }
        List<String> parts = new ArrayList<>();
        for (String s : List.of("survived", "stale", "timeout")) {
            int c = count(results, s);
            if (c > 0) {
                parts.add(c + " " + s);
            }
        }
        return n + " mutations, " + killed + " caught (" + String.join(", ", parts) + ")";
    }

    static String markdown(List<Map<String, Object>> results, String context) {
        StringBuilder md = new StringBuilder();
        md.append(headline(results)).append(".\n\n");
        if (context != null && !context.isBlank()) {
            md.append(context).append("\n\n");
        }
        Map<String, Object> weakest = null;
        for (Map<String, Object> r : results) {
            double m = margin(r);
            if ("killed".equals(r.get("status")) && !Double.isNaN(m) && (weakest == null || m < margin(weakest))) {
                weakest = r;
            }
        }
        if (weakest != null) {
            md.append("Smallest kill margin: ").append(formatMargin(margin(weakest))).append(" (")
                    .append(weakest.get("id")).append(").\n\n");
        }
        md.append("| mutant | claims | status | killed by | margin | decisive line: fix → mutant (limit) | s |\n");
        md.append("|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> r : results) {
            List<?> killers = (List<?>) r.getOrDefault("killers", List.of());
            String killedBy = "";
            if (!killers.isEmpty()) {
                killedBy = String.valueOf(((Map<?, ?>) killers.get(0)).get("test"));
                if (killers.size() > 1) {
                    killedBy += " (+" + (killers.size() - 1) + ")";
                }
            } else if (r.get("detail") != null) {
                killedBy = String.valueOf(r.get("detail")).lines().findFirst().orElse("");
            }
            md.append("| ").append(r.get("id"))
                    .append(" | ").append(String.join(", ", strings(r.get("claims"))))
                    .append(" | ").append(r.get("status"))
                    .append(" | ").append(cell(killedBy, 90))
                    .append(" | ").append(formatMargin(margin(r)))
                    .append(" | ").append(cell(worstLine(r), 90))
                    .append(" | ").append(r.get("seconds"))
                    .append(" |\n");
        }
        return md.toString();
    }

    /** The decisive line (the strongest failing check or control line of the mutant's claims), fix → mutant. */
    private static String worstLine(Map<String, Object> r) {
        List<?> values = (List<?>) r.getOrDefault("values", List.of());
        Map<?, ?> worst = null;
        if (r.get("decisive") instanceof Map<?, ?> d) {
            for (Object o : values) {
                Map<?, ?> v = (Map<?, ?>) o;
                if (v.get("metric").equals(d.get("metric")) && v.get("test").equals(d.get("test"))
                        && v.get("claim").equals(d.get("claim")) && worst == null) {
                    worst = v;
                }
            }
        }
        if (worst == null) {
            return values.isEmpty() ? "" : "no failing check or control line of its claims";
        }
        if (worst == null) {
            return "";
        }
        Map<?, ?> fix = (Map<?, ?>) worst.get("fix");
        Map<?, ?> mutant = (Map<?, ?>) worst.get("mutant");
        return worst.get("metric") + ": " + (fix == null ? "—" : number(fix.get("value"))) + " → "
                + number(mutant.get("value")) + " (" + number(mutant.get("limit")) + ")";
    }

    private static String number(Object o) {
        double d = JsonTrees.toDouble(o);
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return String.valueOf(d);
        }
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        return String.format(Locale.ROOT, "%.3g", d);
    }

    static double margin(Map<String, Object> r) {
        Object m = r.get("margin");
        return m == null ? Double.NaN : JsonTrees.toDouble(m);
    }

    /** {@code 3.2×}, {@code ∞} or {@code —} (no failing evidence line). */
    public static String formatMargin(double m) {
        if (Double.isNaN(m)) {
            return "—";
        }
        if (Double.isInfinite(m)) {
            return "∞";
        }
        return String.format(Locale.ROOT, m >= 100 ? "%.0f×" : "%.2g×", m);
    }

    private static int count(List<Map<String, Object>> results, String status) {
        return (int) results.stream().filter(r -> status.equals(r.get("status"))).count();
    }

    private static List<String> strings(Object o) {
        List<String> out = new ArrayList<>();
        if (o instanceof List<?> l) {
            l.forEach(x -> out.add(String.valueOf(x)));
        }
        return out;
    }

    private static String cell(String s, int max) {
        String one = s.replace('\n', ' ').replace("|", "\\|");
        return one.length() <= max ? one : one.substring(0, max - 1) + "…";
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
