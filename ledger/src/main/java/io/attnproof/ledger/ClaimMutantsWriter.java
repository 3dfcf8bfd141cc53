package io.attnproof.ledger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The ledger's per-claim section ({@link ClaimMutants}) as Markdown, HTML and JSON-ready maps. */
final class ClaimMutantsWriter {
    private ClaimMutantsWriter() {
    }

    /** What the section shows and how it joins, stated once above it. */
    static String intro(List<ClaimMutants> claims, PitReport pit) {
        String coverage = claims.isEmpty() ? "no PIT report" : claims.getFirst().coverage();
        String attributed = pit == null ? "" : " Of PIT's " + pit.killed() + " killed mutations, "
                + ClaimMutants.attributed(claims) + " are killed by a claim's test; the others by tests that record no"
                + " evidence, or without a killing test (timed out, memory or run error).";
        return "Per catalog claim: the curated mutants that fail one of its check or control lines (the kill matrix's"
                + " row; decisive: the mutant's decisive line is this claim's; ⚑ below "
                + Fmt.times(MutantReport.FLAG_BELOW) + "), the PIT mutations its tests kill (its tests: the distinct"
                + " Class#method of its evidence lines; a kill: PIT's killing test is one of them), and the open PIT"
                + " mutations (survived or no coverage) of the classes its tests cover, with their triage verdict"
                + " (⚑ untriaged). Covered classes from: " + coverage + ". Each entry links to its source line"
                + " (path:line from the repository root; a curated mutant: the first line its patch changes)."
                + attributed;
    }

    // ---------------------------------------------------------------- Markdown

    static String markdown(List<ClaimMutants> claims, PitReport pit, MutantReport mutants) {
        StringBuilder md = new StringBuilder("## Per claim: curated mutants and PIT\n\n");
        md.append(Fmt.md(intro(claims, pit))).append("\n\n");
        for (ClaimMutants c : claims) {
            md.append("### ").append(Fmt.md(c.claim())).append(" — ").append(Fmt.md(c.sentence())).append("\n\n");
            md.append("- tests (").append(c.tests().size()).append("): ").append(c.tests().isEmpty()
                    ? "none (no evidence line names a test)"
                    : String.join(", ", c.tests().stream().map(t -> "`" + Fmt.md(t) + "`").toList())).append('\n');
            md.append("- curated mutants it kills: ");
            if (mutants == null) {
                md.append("not run (no ").append(Ledger.MUTANTS).append(')');
            } else if (c.curated().isEmpty()) {
                md.append("none ⚑");
            } else {
                List<String> decisive = new ArrayList<>();
                List<String> other = new ArrayList<>();
                for (ClaimMutants.Curated k : c.curated()) {
                    String cell = Fmt.md(k.id()) + " " + Fmt.times(k.margin()) + (k.flagged() ? " ⚑" : "")
                            + (k.source() == null ? "" : " " + Fmt.sourceMd(k.source()));
                    (k.decisive() ? decisive : other).add(cell);
                }
                md.append("**decisive** ").append(decisive.isEmpty() ? "none" : String.join("; ", decisive));
                if (!other.isEmpty()) {
                    md.append(" · **also fails its lines** (decisive on another claim) ").append(String.join("; ", other));
                }
            }
            md.append('\n');
            if (!c.aimed().isEmpty()) {
                md.append("- aimed at it but failing none of its check or control lines: ")
                        .append(Fmt.md(String.join(", ", c.aimed()))).append('\n');
            }
            if (pit == null) {
                md.append("- PIT: not run (no ").append(Ledger.PIT).append(")\n\n");
                continue;
            }
            md.append("- PIT mutations its tests kill: ").append(c.pitKilled().size()).append('\n');
            for (ClaimMutants.PitKill k : c.pitKilled()) {
                PitReport.Mutation m = k.mutation();
                md.append("  - ").append(Fmt.sourceMd(m.source())).append(' ')
                        .append(Fmt.md(simple(m.clazz()) + "." + m.method() + " " + m.mutator() + " (" + m.status()
                                + ") — " + m.description() + " — by " + String.join(", ", k.by()))).append('\n');
            }
            md.append("- open PIT mutations in the ").append(c.coveredClasses().size()).append(" classes it covers")
                    .append(c.coveredClasses().isEmpty() ? "" : " (" + Fmt.md(String.join(", ",
                            c.coveredClasses().stream().map(ClaimMutantsWriter::simple).toList())) + ")")
                    .append(": ").append(c.open().size())
                    .append(c.untriaged() == 0 ? "" : ", " + c.untriaged() + " untriaged ⚑").append('\n');
            for (PitReport.Open o : c.open()) {
                md.append("  - ").append(o.triaged() ? "" : "⚑ ").append(Fmt.sourceMd(o.source())).append(' ')
                        .append(Fmt.md(simple(o.clazz()) + "." + o.method() + " " + o.mutator() + " (" + o.status()
                                + ") — " + o.description())).append(" — ").append(verdictMd(o)).append('\n');
            }
            md.append('\n');
        }
        return md.toString();
    }

    private static String verdictMd(PitReport.Open o) {
        return o.triaged() ? "**" + Fmt.md(o.verdict()) + "**: " + Fmt.md(o.reason())
                : o.verdict() == null ? "**untriaged**" : "**untriaged** (triaged killed-now, still " + o.status() + ")";
    }

    // ---------------------------------------------------------------- HTML

    static String html(List<ClaimMutants> claims, PitReport pit, MutantReport mutants) {
        StringBuilder h = new StringBuilder("<h2 id=\"per-claim\">Per claim: curated mutants and PIT</h2>\n<p>")
                .append(Fmt.html(intro(claims, pit))).append("</p>\n");
        for (ClaimMutants c : claims) {
            h.append("<section class=\"claim-mutants\" id=\"claim-mutants-").append(Fmt.html(c.claim()))
                    .append("\" data-claim=\"").append(Fmt.html(c.claim())).append("\">\n<h3>")
                    .append(Fmt.html(c.claim())).append(" — <span class=\"sentence\">").append(Fmt.html(c.sentence()))
                    .append("</span></h3>\n<p class=\"tests\">tests (").append(c.tests().size()).append("): ");
            if (c.tests().isEmpty()) {
                h.append("none (no evidence line names a test)");
            }
            for (int i = 0; i < c.tests().size(); i++) {
                h.append(i == 0 ? "" : ", ").append("<code>").append(Fmt.html(c.tests().get(i))).append("</code>");
            }
            h.append("</p>\n");
            if (mutants == null) {
                h.append("<p class=\"curated\">Curated mutants: not run (no ").append(Fmt.html(Ledger.MUTANTS.toString()))
                        .append(")</p>\n");
            } else if (c.curated().isEmpty()) {
                h.append("<p class=\"curated flag\">No curated mutant fails a check or control line of ")
                        .append(Fmt.html(c.claim())).append(" ⚑</p>\n");
            } else {
                h.append("<table class=\"curated\">\n<thead><tr><th>curated mutant</th><th>kill</th><th>margin</th>"
                        + "<th>source</th></tr></thead>\n<tbody>\n");
                for (ClaimMutants.Curated k : c.curated()) {
                    h.append("<tr class=\"").append(k.decisive() ? "decisive" : "other").append("\" data-mutant=\"")
                            .append(Fmt.html(k.id())).append("\"><td>").append(Fmt.html(k.id())).append("</td><td>")
                            .append(k.decisive() ? "<b>decisive</b>" : "also fails its lines (decisive on another claim)")
                            .append("</td><td class=\"num\">").append(Fmt.html(Fmt.times(k.margin())))
                            .append(k.flagged() ? " ⚑" : "").append("</td><td>")
                            .append(k.source() == null ? "—" : Fmt.sourceHtml(k.source())).append("</td></tr>\n");
                }
                h.append("</tbody>\n</table>\n");
            }
            if (!c.aimed().isEmpty()) {
                h.append("<p class=\"aimed\">Aimed at it but failing none of its check or control lines: ")
                        .append(Fmt.html(String.join(", ", c.aimed()))).append("</p>\n");
            }
            if (pit == null) {
                h.append("<p class=\"pit\">PIT: not run (no ").append(Fmt.html(Ledger.PIT.toString())).append(")</p>\n")
                        .append("</section>\n");
                continue;
            }
            h.append("<details class=\"pit-killed\"><summary>").append(c.pitKilled().size())
                    .append(" PIT mutations killed by its tests</summary>\n<ul>\n");
            for (ClaimMutants.PitKill k : c.pitKilled()) {
                PitReport.Mutation m = k.mutation();
                h.append("<li>").append(Fmt.sourceHtml(m.source())).append(' ')
                        .append(Fmt.html(simple(m.clazz()) + "." + m.method() + " " + m.mutator() + " (" + m.status()
                                + ") — " + m.description())).append(" — by ");
                for (int i = 0; i < k.by().size(); i++) {
                    h.append(i == 0 ? "" : ", ").append("<code>").append(Fmt.html(k.by().get(i))).append("</code>");
                }
                h.append("</li>\n");
            }
            h.append("</ul></details>\n");
            h.append("<details class=\"pit-open\"").append(c.untriaged() == 0 ? "" : " open").append("><summary>")
                    .append(c.open().size()).append(" open PIT mutations in the ").append(c.coveredClasses().size())
                    .append(" classes it covers").append(c.untriaged() == 0 ? "" : ", " + c.untriaged()
                            + " untriaged ⚑").append("</summary>\n<p class=\"covered\">");
            for (int i = 0; i < c.coveredClasses().size(); i++) {
                h.append(i == 0 ? "" : ", ").append("<code>").append(Fmt.html(c.coveredClasses().get(i))).append("</code>");
            }
            h.append("</p>\n<ul>\n");
            for (PitReport.Open o : c.open()) {
                h.append("<li").append(o.triaged() ? "" : " class=\"untriaged\"").append('>')
                        .append(o.triaged() ? "" : "⚑ ").append(Fmt.sourceHtml(o.source())).append(' ')
                        .append(Fmt.html(simple(o.clazz()) + "." + o.method() + " " + o.mutator() + " (" + o.status()
                                + ") — " + o.description())).append(" — ")
                        .append(o.triaged() ? "<b>" + Fmt.html(o.verdict()) + "</b>: " + Fmt.html(o.reason())
                                : "<b>untriaged</b>" + (o.verdict() == null ? ""
                                        : " (triaged killed-now, still " + Fmt.html(o.status()) + ")"))
                        .append("</li>\n");
            }
            h.append("</ul></details>\n</section>\n");
        }
        return h.toString();
    }

    // ---------------------------------------------------------------- JSON

    static List<Object> json(List<ClaimMutants> claims) {
        List<Object> out = new ArrayList<>();
        for (ClaimMutants c : claims) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("claim", c.claim());
            row.put("sentence", c.sentence());
            row.put("tests", c.tests());
            List<Object> curated = new ArrayList<>();
            for (ClaimMutants.Curated k : c.curated()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", k.id());
                m.put("margin", k.margin());
                m.put("decisive", k.decisive());
                m.put("flagged", k.flagged());
                m.put("source", k.source());
                curated.add(m);
            }
            row.put("curated", curated);
            row.put("aimed_not_killed", c.aimed());
            Map<String, Object> killed = new LinkedHashMap<>();
            killed.put("count", c.pitKilled().size());
            List<Object> mutations = new ArrayList<>();
            for (ClaimMutants.PitKill k : c.pitKilled()) {
                PitReport.Mutation m = k.mutation();
                Map<String, Object> j = new LinkedHashMap<>();
                j.put("class", m.clazz());
                j.put("method", m.method());
                j.put("line", m.line());
                j.put("source", m.source());
                j.put("mutator", m.mutator());
                j.put("status", m.status());
                j.put("description", m.description());
                j.put("killed_by", k.by());
                mutations.add(j);
            }
            killed.put("mutations", mutations);
            row.put("pit_killed", killed);
            row.put("coverage", c.coverage());
            row.put("covered_classes", c.coveredClasses());
            row.put("open", c.open().stream().map(PitReport::json).toList());
            row.put("untriaged", c.untriaged());
            out.add(row);
        }
        return out;
    }

    private static String simple(String clazz) {
        return clazz.substring(clazz.lastIndexOf('.') + 1);
    }
}
