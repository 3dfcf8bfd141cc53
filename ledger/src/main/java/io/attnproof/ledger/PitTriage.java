package io.attnproof.ledger;

import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * PIT's run held against {@code pit/triage.csv}, and the small summary committed in its place ({@code pit/summary.json}):
 * <pre>
 *   check MUTATIONS.xml TRIAGE.csv [--partial]
 *                                            every open mutation triaged, no stale row; exit 1 otherwise (a partial
 *                                            run, e.g. pit/pr.sh's, holds only rows of the classes it mutated)
 *   summary MUTATIONS.xml OUT.json           per package: mutations, killed, survived, no coverage, score,
 *                                            strength; then every open mutation (survived or no coverage)
 * </pre>
 * Run it from the reports module's classpath: {@code java -cp "conformance/target/classes:$(cat
 * conformance/target/classpath.txt)" io.attnproof.ledger.PitTriage ...}.
 */
public final class PitTriage {
    /** Where the summary of the last full PIT run is committed, relative to the repository root. */
    public static final Path SUMMARY = Path.of("pit", "summary.json");

    private PitTriage() {
    }

    public static void main(String[] args) throws IOException {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) throws IOException {
        try {
            if ((args.length == 3 || args.length == 4 && args[3].equals("--partial")) && args[0].equals("check")) {
                return check(PitReport.read(Path.of(args[1]), Path.of(args[2])), args.length == 4, out) ? 0 : 1;
            }
            if (args.length == 3 && args[0].equals("summary")) {
                PitReport report = PitReport.read(Path.of(args[1]), null);
                Path target = Path.of(args[2]);
                Files.writeString(target, JsonTrees.writePretty(summary(report)), StandardCharsets.UTF_8);
                out.println("pit summary: " + report.summary() + " -> " + target);
                return 0;
            }
        } catch (IllegalArgumentException e) {
            err.println("pit triage: " + e.getMessage());
            return 2;
        }
        err.println("usage: PitTriage check MUTATIONS.xml TRIAGE.csv [--partial] | summary MUTATIONS.xml OUT.json");
        return 2;
    }

    /**
     * Prints every untriaged open mutation and every stale row (of a partial run: only rows of the classes it
     * mutated), then the triage note; true when there are none.
     */
    static boolean check(PitReport report, boolean partial, PrintStream out) {
        java.util.Set<String> mutated = new java.util.HashSet<>();
        report.all().forEach(m -> mutated.add(m.clazz()));
        List<PitReport.Row> stale = report.staleRows().stream()
                .filter(r -> !partial || mutated.contains(r.clazz())).toList();
        for (PitReport.Open o : report.untriaged()) {
            out.println("pit untriaged: " + o.source() + " " + o.clazz() + "." + o.method() + o.descriptor() + " "
                    + o.mutator() + " #" + o.index() + " (" + o.status() + ") — " + o.description()
                    + (o.verdict() == null ? "" : ": triaged killed-now, but it is still " + o.status()));
        }
        for (PitReport.Row r : stale) {
            out.println("pit stale row: " + r.clazz() + "." + r.method() + r.descriptor() + " " + r.mutator() + " #"
                    + r.index() + " — " + r.description() + " (" + r.verdict() + "): no such mutation"
                    + (r.verdict().equals("killed-now") ? "" : " open") + " in " + report.file());
        }
        out.println(report.summary());
        out.println(report.triageNote() + (partial ? " (partial run: " + stale.size() + " stale among the "
                + mutated.size() + " classes it mutated)" : ""));
        return report.untriaged().isEmpty() && stale.isEmpty();
    }

    /** The summary: totals, one entry per package in name order, and the open mutations (the triage's work list). */
    static Map<String, Object> summary(PitReport report) {
        Map<String, int[]> byPackage = new TreeMap<>();
        for (PitReport.Mutation m : report.all()) {
            String pkg = m.clazz().contains(".") ? m.clazz().substring(0, m.clazz().lastIndexOf('.')) : "";
            int[] c = byPackage.computeIfAbsent(pkg, k -> new int[4]);
            c[0]++;
            if (m.detected()) {
                c[1]++;
            }
            if (m.status().equals("SURVIVED")) {
                c[2]++;
            } else if (m.status().equals("NO_COVERAGE")) {
                c[3]++;
            }
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("generated_by", "PitTriage summary (reports module): docs/mutants.md");
        root.put("report", report.file().getFileName().toString());
        root.put("totals", counts(report.mutations(), report.killed(), report.survived(), report.noCoverage()));
        List<Map<String, Object>> packages = new ArrayList<>();
        byPackage.forEach((pkg, c) -> {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("package", pkg);
            p.putAll(counts(c[0], c[1], c[2], c[3]));
            packages.add(p);
        });
        root.put("packages", packages);
        List<Map<String, Object>> open = new ArrayList<>();
        for (PitReport.Open o : report.open()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("class", o.clazz());
            m.put("method", o.method());
            m.put("descriptor", o.descriptor());
            m.put("mutator", o.mutator());
            m.put("index", o.index());
            m.put("description", o.description());
            m.put("status", o.status());
            m.put("line", o.line());
            open.add(m);
        }
        root.put("open", open);
        return root;
    }

    private static Map<String, Object> counts(int mutations, int killed, int survived, int noCoverage) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mutations", mutations);
        m.put("killed", killed);
        m.put("survived", survived);
        m.put("no_coverage", noCoverage);
        m.put("score", ratio(killed, mutations));
        m.put("strength", ratio(killed, killed + survived));
        return m;
    }

    /** A ratio to four decimals (a percentage to two), null when the denominator is 0. */
    private static Double ratio(int num, int den) {
        return den == 0 ? null : Math.round(10_000.0 * num / den) / 10_000.0;
    }
}
