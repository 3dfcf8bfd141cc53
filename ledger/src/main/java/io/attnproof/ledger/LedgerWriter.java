package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;
import io.attnproof.fixtures.json.JsonTrees;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Writes a {@link Ledger} as {@code index.html}, {@code ledger.md}, {@code ledger.json} and {@code pictures/*.svg}. */
public final class LedgerWriter {
    /** The margin rule, as the ledger states it. */
    public static final String MARGIN_RULE = "Margin: for upper-bound checks (value ≤ limit, e.g. max_abs_err)"
            + " limit ÷ value; for lower-bound checks (control_gap:* and other lines that must exceed their limit)"
            + " value ÷ limit; above 1× passes with room, below 1× fails. Exact checks (limit 0 or a value that must"
            + " equal its limit: bit counts, required counts) show \"exact\"; degeneracy lines and skips have none."
            + " The line shown per row is the failing one, else the measured line with the smallest margin.";

    private LedgerWriter() {
    }

    /** The files written. */
    public record Written(Path html, Path markdown, Path json, List<Path> pictures) {
    }

    /** Writes the ledger under {@code outDir} (created; stale pictures removed). */
    public static Written write(Ledger ledger, Path outDir) {
        try {
            Files.createDirectories(outDir);
            Path pictureDir = outDir.resolve("pictures");
            Files.createDirectories(pictureDir);
            try (DirectoryStream<Path> old = Files.newDirectoryStream(pictureDir, "*.svg")) {
                for (Path p : old) {
                    Files.delete(p);
                }
            }
            List<Path> pictures = new ArrayList<>();
            for (Pictures.Picture p : ledger.pictures()) {
                Path file = pictureDir.resolve(p.file());
                Files.writeString(file, p.svg(), StandardCharsets.UTF_8);
                pictures.add(file);
            }
            Path html = outDir.resolve("index.html");
            Path md = outDir.resolve("ledger.md");
            Path json = outDir.resolve("ledger.json");
            Files.writeString(html, html(ledger), StandardCharsets.UTF_8);
            Files.writeString(md, markdown(ledger), StandardCharsets.UTF_8);
            Files.writeString(json, JsonTrees.writePretty(json(ledger)), StandardCharsets.UTF_8);
            return new Written(html, md, json, List.copyOf(pictures));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the ledger under " + outDir, e);
        }
    }

    // ---------------------------------------------------------------- JSON

    static Map<String, Object> json(Ledger l) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("generated", l.generatedAt());
        root.put("root", l.root().toAbsolutePath().normalize().toString());
        root.put("evidence_dirs", l.evidenceDirs().stream().map(Path::toString).toList());
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("text", l.summaryLine());
        summary.put("lines", l.lines().size());
        summary.put("rows", l.rows().size());
        summary.put("pass", l.count(ClaimRow.Status.PASS));
        summary.put("fail", l.count(ClaimRow.Status.FAIL));
        summary.put("skip", l.count(ClaimRow.Status.SKIP));
        summary.put("unreadable", l.problems().size());
        summary.put("mutants", l.mutantsNote());
        summary.put("pit", l.pitNote());
        summary.put("exit_status", l.exitStatus());
        root.put("summary", summary);
        root.put("margin_rule", MARGIN_RULE);
        List<Object> claims = new ArrayList<>();
        for (ClaimRow r : l.rows()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("claim", r.claim());
            row.put("sentence", r.sentence());
            row.put("backend", r.backend());
            row.put("status", r.status().name());
            row.put("lines", r.lines());
            EvidenceLine w = r.worst();
            row.put("metric", w.metric());
            row.put("value", w.value());
            row.put("limit", w.limit());
            row.put("passed", w.passed());
            row.put("margin", r.margin().kind() == Margin.Kind.FACTOR ? (Object) r.margin().factor()
                    : r.margin().kind() == Margin.Kind.EXACT ? "exact" : null);
            row.put("seed", w.seed());
            row.put("worst", w.worst() == null ? null
                    : new LinkedHashMap<>(Map.of("b", w.worst().b(), "h", w.worst().h(), "r", w.worst().r(), "c",
                            w.worst().c())));
            row.put("test", w.test());
            row.put("source", w.source());
            if (w.skipped() != null) {
                row.put("skipped", w.skipped());
            }
            claims.add(sortWorst(row));
        }
        root.put("claims", claims);
        root.put("no_evidence", l.missing());
        List<Object> failing = new ArrayList<>();
        for (EvidenceLine e : l.lines()) {
            if (!e.passed()) {
                failing.add(e.claim() + " " + e.backend() + " " + e.test() + ": " + Fmt.describe(e)
                        + (e.seed() == null ? "" : " seed " + e.seed()) + (e.worst() == null ? "" : " at " + e.worst()));
            }
        }
        root.put("failing_lines", failing);
        root.put("problems", l.problems());
        root.put("mutants", mutantsJson(l));
        root.put("pit", pitJson(l));
        root.put("per_claim", ClaimMutantsWriter.json(l.perClaim()));
        root.put("per_claim_note", ClaimMutantsWriter.intro(l.perClaim(), l.pit()));
        List<Object> pictures = new ArrayList<>();
        for (Pictures.Picture p : l.pictures()) {
            Map<String, Object> pic = new LinkedHashMap<>();
            pic.put("file", "pictures/" + p.file());
            pic.put("title", p.title());
            pic.put("caption", p.caption());
            pictures.add(pic);
        }
        root.put("pictures", pictures);
        return root;
    }

    private static Map<String, Object> sortWorst(Map<String, Object> row) {
        if (row.get("worst") instanceof Map<?, ?> w) {
            Map<String, Object> ordered = new LinkedHashMap<>();
            for (String k : List.of("b", "h", "r", "c")) {
                ordered.put(k, w.get(k));
            }
            row.put("worst", ordered);
        }
        return row;
    }

    private static Object mutantsJson(Ledger l) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("summary", l.mutantsNote());
        if (l.mutants() == null) {
            out.put("status", "not run");
            return out;
        }
        out.put("file", l.mutants().file().toString());
        out.put("flag_below", MutantReport.FLAG_BELOW);
        List<Object> rows = new ArrayList<>();
        for (MutantReport.Mutant m : l.mutants().mutants()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", m.id());
            row.put("status", m.status());
            row.put("claims", m.claims());
            row.put("breaks", m.breaks());
            row.put("origin", m.origin());
            row.put("patch", m.patch());
            row.put("source", m.source());
            if (m.source() == null) {
                row.put("source_note", m.sourceNote());
            }
            List<Object> killers = new ArrayList<>();
            for (MutantReport.Killer k : m.killers()) {
                Map<String, Object> km = new LinkedHashMap<>();
                km.put("test", k.test());
                km.put("message", k.message());
                killers.add(km);
            }
            row.put("killers", killers);
            List<Object> values = new ArrayList<>();
            for (MutantReport.Value v : m.values()) {
                Map<String, Object> vm = new LinkedHashMap<>();
                vm.put("claim", v.claim());
                vm.put("kind", v.kind());
                vm.put("metric", v.metric());
                vm.put("test", v.test());
                vm.put("fix", side(v.fix()));
                vm.put("mutant", side(v.mutant()));
                vm.put("margin", v.margin());
                values.add(vm);
            }
            row.put("values", values);
            MutantReport.Value decisive = m.decisive();
            row.put("decisive", decisive == null ? null : decisive.claim() + " " + decisive.metric() + " (" + decisive.test() + ")");
            row.put("kill_margin", m.killMargin());
            row.put("flagged", m.flagged());
            row.put("seconds", m.seconds());
            rows.add(row);
        }
        out.put("mutants", rows);
        out.put("kill_matrix", l.mutants().killMatrix());
        out.put("claims_without_teeth", l.mutants().claimsWithoutTeeth());
        return out;
    }

    /**
     * Each claim's killing mutants with the margin of that claim's strongest failing check or control line, each
     * linked to the line its patch changes; {@code html} picks HTML over Markdown.
     */
    private static String killCells(Map<String, Double> cells, MutantReport mutants, boolean html) {
        Map<String, MutantReport.Mutant> byId = mutants.byId();
        List<String> out = new ArrayList<>();
        cells.forEach((id, margin) -> {
            MutantReport.Mutant m = byId.get(id);
            String text = id + " " + Fmt.times(margin) + (margin < MutantReport.FLAG_BELOW ? " ⚑" : "");
            String src = m == null ? null : m.source();
            out.add(html ? Fmt.html(text) + (src == null ? "" : " " + Fmt.sourceHtml(src))
                    : Fmt.md(text) + (src == null ? "" : " " + Fmt.sourceMd(src)));
        });
        return String.join(", ", out);
    }

    /** A curated mutant's source cell: the link, or why there is none. */
    private static String sourceCell(MutantReport.Mutant m, boolean html) {
        if (m.source() == null) {
            return html ? Fmt.html("— (" + m.sourceNote() + ")") : Fmt.md("— (" + m.sourceNote() + ")");
        }
        return html ? Fmt.sourceHtml(m.source()) : Fmt.sourceMd(m.source());
    }

    private static Object side(MutantReport.Side s) {
        if (s == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("value", s.value());
        m.put("limit", s.limit());
        m.put("passed", s.passed());
        return m;
    }

    private static Object pitJson(Ledger l) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("summary", l.pitNote());
        PitReport p = l.pit();
        if (p == null) {
            out.put("status", "not run");
            return out;
        }
        out.put("file", p.file().toString());
        out.put("mutations", p.mutations());
        out.put("killed", p.killed());
        out.put("survived", p.survived());
        out.put("no_coverage", p.noCoverage());
        out.put("timed_out", p.timedOut());
        out.put("mutation_score", p.score());
        out.put("test_strength", p.strength());
        out.put("survivors", p.survivors());
        out.put("triage", p.triageNote());
        out.put("verdicts", p.verdictCounts());
        out.put("open", p.openJson());
        return out;
    }

    // ---------------------------------------------------------------- Markdown

    static String markdown(Ledger l) {
        StringBuilder md = new StringBuilder();
        md.append("# attnproof ledger\n\n");
        md.append("Generated ").append(l.generatedAt()).append(" from `").append(l.root().toAbsolutePath().normalize())
                .append("`.\n\n");
        md.append("- **").append(Fmt.md(l.summaryLine())).append("**\n");
        md.append("- ").append(Fmt.md(l.mutantsNote())).append('\n');
        md.append("- ").append(Fmt.md(l.pitNote())).append("\n\n");
        md.append(ClaimMatrix.markdown(l)); // issue 13: the claim x (lane, engine) matrix first
        md.append("## Claims × backends\n\n");
        md.append("| claim | backend | status | lines | worst (value vs limit) | margin | seed | worst element | test | sentence |\n");
        md.append("|---|---|---|---:|---|---:|---:|---|---|---|\n");
        for (ClaimRow r : l.rows()) {
            EvidenceLine w = r.worst();
            md.append("| ").append(Fmt.md(r.claim())).append(" | ").append(Fmt.md(r.backend())).append(" | ")
                    .append(r.status() == ClaimRow.Status.FAIL ? "**FAIL**" : r.status().name()).append(" | ").append(r.lines())
                    .append(" | ").append(Fmt.md(Fmt.describe(w))).append(" | ").append(r.margin().text()).append(" | ")
                    .append(w.seed() == null ? "" : w.seed()).append(" | ")
                    .append(w.worst() == null ? "" : Fmt.md(w.worst().toString())).append(" | ")
                    .append(Fmt.md(w.test())).append(" | ").append(Fmt.md(r.sentence())).append(" |\n");
        }
        md.append('\n').append(Fmt.md(MARGIN_RULE)).append("\n\n");
        if (!l.missing().isEmpty()) {
            md.append("## Catalog ids without evidence\n\n");
            for (String id : l.missing()) {
                md.append("- ").append(id).append(": ").append(Fmt.md(ClaimRow.sentence(id))).append('\n');
            }
            md.append('\n');
        }
        List<EvidenceLine> failing = l.lines().stream().filter(e -> !e.passed()).toList();
        if (!failing.isEmpty()) {
            md.append("## Failing evidence lines\n\n");
            for (EvidenceLine e : failing) {
                md.append("- ").append(Fmt.md(e.claim() + " " + e.backend() + " " + e.test() + ": " + Fmt.describe(e)
                        + (e.seed() == null ? "" : " seed " + e.seed()) + (e.worst() == null ? "" : " at " + e.worst())))
                        .append('\n');
            }
            md.append('\n');
        }
        if (!l.problems().isEmpty()) {
            md.append("## Unreadable evidence\n\n");
            for (String p : l.problems()) {
                md.append("- ").append(Fmt.md(p)).append('\n');
            }
            md.append('\n');
        }
        md.append("## Mutants\n\n");
        if (l.mutants() == null) {
            md.append(Fmt.md(l.mutantsNote())).append("\n\n");
        } else {
            md.append(Fmt.md(l.mutantsNote())).append("\n\n");
            md.append("| mutant | source | status | claims | breaks | killed by | message | values (fix → mutant) | margin"
                    + " | flag |\n");
            md.append("|---|---|---|---|---|---|---|---|---:|---|\n");
            for (MutantReport.Mutant m : l.mutants().mutants()) {
                MutantReport.Killer k = m.killers().isEmpty() ? null : m.killers().getFirst();
                md.append("| ").append(Fmt.md(m.id())).append(" | ").append(sourceCell(m, false)).append(" | ")
                        .append(m.killed() ? "killed" : "**" + Fmt.md(m.status()) + "**").append(" | ")
                        .append(Fmt.md(String.join(", ", m.claims()))).append(" | ").append(Fmt.md(m.breaks()))
                        .append(" | ").append(k == null ? "" : Fmt.md(k.test())
                                + (m.killers().size() > 1 ? " (+" + (m.killers().size() - 1) + ")" : ""))
                        .append(" | ").append(k == null ? "" : Fmt.md(Fmt.cut(k.message(), 160))).append(" | ")
                        .append(String.join("<br>", m.values().stream().map(v -> Fmt.md(v.text())).toList()))
                        .append(" | ").append(Double.isNaN(m.killMargin()) ? "—" : Fmt.times(m.killMargin()))
                        .append(" | ").append(m.flagged() ? "⚑ below " + Fmt.times(MutantReport.FLAG_BELOW) : "")
                        .append(" |\n");
            }
            md.append('\n');
            md.append("### Kill matrix (claim × curated mutant)\n\nClaims without teeth: ")
                    .append(Fmt.md(l.mutants().claimsWithoutTeeth().isEmpty() ? "none"
                            : String.join(", ", l.mutants().claimsWithoutTeeth()))).append("\n\n");
            md.append("| claim | mutants killed by a check or control line of the claim (margin) |\n|---|---|\n");
            Map<String, Map<String, Double>> matrix = l.mutants().killMatrix();
            for (io.attnproof.fixtures.claim.ClaimId id : io.attnproof.fixtures.claim.ClaimId.values()) {
                md.append("| ").append(id.name()).append(" | ")
                        .append(killCells(matrix.getOrDefault(id.name(), Map.of()), l.mutants(), false)).append(" |\n");
            }
            md.append('\n');
        }
        md.append("## PIT\n\n").append(Fmt.md(l.pitNote())).append("\n\n");
        if (l.pit() != null) {
            md.append(l.pit().markdown());
        }
        md.append(ClaimMutantsWriter.markdown(l.perClaim(), l.pit(), l.mutants()));
        md.append("## Pictures\n\n");
        for (Pictures.Picture p : l.pictures()) {
            md.append("### ").append(Fmt.md(p.title())).append("\n\n![").append(Fmt.md(p.title())).append("](pictures/")
                    .append(p.file()).append(")\n\n").append(Fmt.md(p.caption())).append("\n\n");
        }
        return md.toString();
    }

    // ---------------------------------------------------------------- HTML

    static String html(Ledger l) {
        StringBuilder h = new StringBuilder(1 << 16);
        h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
                .append("<title>attnproof ledger</title>\n<style>\n")
                .append("body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1a202c;}\n")
                .append("table{border-collapse:collapse;margin:8px 0 20px;font-size:13px;}\n")
                .append("th,td{border:1px solid #cbd5e0;padding:3px 6px;vertical-align:top;text-align:left;}\n")
                .append("th{background:#edf2f7;} td.num{text-align:right;font-variant-numeric:tabular-nums;}\n")
                .append("tr.FAIL td.status,tr.survived td.status,tr.stale td.status,tr.timeout td.status{background:#fed7d7;font-weight:bold;}\n")
                .append("tr.PASS td.status,tr.killed td.status{background:#c6f6d5;} tr.SKIP td.status{background:#fefcbf;}\n")
                .append("td.sentence{color:#4a5568;font-size:12px;max-width:420px;} td.worst{white-space:nowrap;} td.flag{color:#c05621;font-weight:bold;}\n")
                .append(".summary{font-size:15px;} .summary li{margin:3px 0;} code{font-size:12px;}\n")
                .append("section.claim-mutants{border-top:1px solid #cbd5e0;margin-top:12px;} section.claim-mutants h3 span.sentence{font-weight:normal;color:#4a5568;font-size:14px;}\n")
                .append("tr.decisive td:first-child{font-weight:bold;} li.untriaged{color:#c05621;} details{margin:4px 0;}\n")
                .append("figure{margin:12px 0 28px;} figcaption{max-width:900px;color:#4a5568;font-size:13px;}\n")
                .append("</style>\n</head>\n<body>\n");
        h.append("<h1>attnproof ledger</h1>\n<p>Generated ").append(Fmt.html(l.generatedAt())).append(" from <code>")
                .append(Fmt.html(l.root().toAbsolutePath().normalize().toString())).append("</code>.</p>\n");
        h.append("<ul class=\"summary\" id=\"summary\">\n<li><b>").append(Fmt.html(l.summaryLine())).append("</b></li>\n<li>")
                .append(Fmt.html(l.mutantsNote())).append("</li>\n<li>").append(Fmt.html(l.pitNote()))
                .append("</li>\n</ul>\n");
        h.append("<p>Sections: <a href=\"#claims\">claims × backends</a> · <a href=\"#mutants-section\">mutants</a> ·"
                + " <a href=\"#pit\">PIT</a> · <a href=\"#per-claim\">per claim</a> · <a href=\"#pictures\">pictures</a> · <a href=\"ledger.md\">ledger.md</a> ·"
                + " <a href=\"ledger.json\">ledger.json</a></p>\n");

        h.append(ClaimMatrix.html(l)); // issue 13: the claim x (lane, engine) matrix first
        h.append("<h2>Claims × backends</h2>\n<table id=\"claims\">\n<thead><tr><th>claim</th><th>sentence</th>"
                + "<th>backend</th><th>status</th><th>lines</th><th>worst (value vs limit)</th><th>margin</th>"
                + "<th>seed</th><th>worst element</th><th>test</th></tr></thead>\n<tbody>\n");
        for (ClaimRow r : l.rows()) {
            EvidenceLine w = r.worst();
            h.append("<tr class=\"").append(r.status()).append("\" data-claim=\"").append(Fmt.html(r.claim()))
                    .append("\" data-backend=\"").append(Fmt.html(r.backend())).append("\"><td>")
                    .append(Fmt.html(r.claim())).append("</td><td class=\"sentence\">").append(Fmt.html(r.sentence()))
                    .append("</td><td>").append(Fmt.html(r.backend())).append("</td><td class=\"status\">")
                    .append(r.status()).append("</td><td class=\"num\">").append(r.lines()).append("</td><td>")
                    .append(Fmt.html(Fmt.describe(w))).append("</td><td class=\"num\">").append(Fmt.html(r.margin().text()))
                    .append("</td><td class=\"num\">").append(w.seed() == null ? "" : w.seed()).append("</td><td class=\"worst\">")
                    .append(w.worst() == null ? "" : Fmt.html(w.worst().toString())).append("</td><td><code>")
                    .append(Fmt.html(w.test())).append("</code></td></tr>\n");
        }
        h.append("</tbody>\n</table>\n<p>").append(Fmt.html(MARGIN_RULE)).append("</p>\n");
        if (!l.missing().isEmpty()) {
            h.append("<h3>Catalog ids without evidence</h3>\n<ul id=\"no-evidence\">\n");
            for (String id : l.missing()) {
                h.append("<li><b>").append(id).append("</b>: ").append(Fmt.html(ClaimRow.sentence(id))).append("</li>\n");
            }
            h.append("</ul>\n");
        }
        List<EvidenceLine> failing = l.lines().stream().filter(e -> !e.passed()).toList();
        if (!failing.isEmpty()) {
            h.append("<h3>Failing evidence lines</h3>\n<ul id=\"failing\">\n");
            for (EvidenceLine e : failing) {
                h.append("<li>").append(Fmt.html(e.claim() + " " + e.backend() + " " + e.test() + ": " + Fmt.describe(e)
                        + (e.seed() == null ? "" : " seed " + e.seed()) + (e.worst() == null ? "" : " at " + e.worst())
                        + " (" + e.source() + ")")).append("</li>\n");
            }
            h.append("</ul>\n");
        }
        if (!l.problems().isEmpty()) {
            h.append("<h3>Unreadable evidence</h3>\n<ul id=\"problems\">\n");
            for (String p : l.problems()) {
                h.append("<li>").append(Fmt.html(p)).append("</li>\n");
            }
            h.append("</ul>\n");
        }

        h.append("<h2 id=\"mutants-section\">Mutants</h2>\n<p>").append(Fmt.html(l.mutantsNote())).append("</p>\n");
        if (l.mutants() != null) {
            h.append("<table id=\"mutants\">\n<thead><tr><th>mutant</th><th>source</th><th>status</th><th>claims</th><th>breaks</th>"
                    + "<th>origin</th><th>killed by</th><th>message</th><th>values (fix → mutant)</th><th>margin</th>"
                    + "<th>flag</th></tr></thead>\n<tbody>\n");
            for (MutantReport.Mutant m : l.mutants().mutants()) {
                h.append("<tr class=\"").append(Fmt.html(m.status())).append("\" id=\"mutant-").append(Fmt.html(m.id()))
                        .append("\"><td>").append(Fmt.html(m.id())).append("</td><td>").append(sourceCell(m, true))
                        .append("</td><td class=\"status\">").append(Fmt.html(m.status())).append("</td><td>")
                        .append(Fmt.html(String.join(", ", m.claims()))).append("</td><td>").append(Fmt.html(m.breaks()))
                        .append("</td><td>").append(Fmt.html(m.origin())).append("</td><td>");
                for (MutantReport.Killer k : m.killers()) {
                    h.append("<code>").append(Fmt.html(k.test())).append("</code><br>");
                }
                h.append("</td><td>");
                for (MutantReport.Killer k : m.killers()) {
                    h.append(Fmt.html(Fmt.cut(k.message(), 300))).append("<br>");
                }
                h.append("</td><td>");
                for (MutantReport.Value v : m.values()) {
                    h.append(Fmt.html(v.text())).append("<br>");
                }
                h.append("</td><td class=\"num\">").append(Double.isNaN(m.killMargin()) ? "—" : Fmt.html(Fmt.times(m.killMargin())))
                        .append("</td><td class=\"flag\">").append(m.flagged() ? "⚑ below " + Fmt.times(MutantReport.FLAG_BELOW) : "")
                        .append("</td></tr>\n");
            }
            h.append("</tbody>\n</table>\n");
            h.append("<h3 id=\"kill-matrix\">Kill matrix (claim × curated mutant)</h3>\n<p>Claims without teeth: ")
                    .append(Fmt.html(l.mutants().claimsWithoutTeeth().isEmpty() ? "none"
                            : String.join(", ", l.mutants().claimsWithoutTeeth()))).append("</p>\n");
            h.append("<table id=\"kill-matrix-table\">\n<thead><tr><th>claim</th><th>mutants killed by a check or"
                    + " control line of the claim (margin)</th></tr></thead>\n<tbody>\n");
            Map<String, Map<String, Double>> matrix = l.mutants().killMatrix();
            for (io.attnproof.fixtures.claim.ClaimId id : io.attnproof.fixtures.claim.ClaimId.values()) {
                Map<String, Double> cells = matrix.getOrDefault(id.name(), Map.of());
                h.append("<tr").append(cells.values().stream().anyMatch(x -> x >= MutantReport.FLAG_BELOW) ? ""
                        : " class=\"toothless\"").append("><td>").append(id.name()).append("</td><td>")
                        .append(killCells(cells, l.mutants(), true)).append("</td></tr>\n");
            }
            h.append("</tbody>\n</table>\n");
        }

        h.append("<h2 id=\"pit\">PIT</h2>\n<p>").append(Fmt.html(l.pitNote())).append("</p>\n");
        if (l.pit() != null) {
            h.append(l.pit().html());
        }
        h.append(ClaimMutantsWriter.html(l.perClaim(), l.pit(), l.mutants()));

        h.append("<h2 id=\"pictures\">Pictures</h2>\n");
        for (Pictures.Picture p : l.pictures()) {
            h.append("<figure><a href=\"pictures/").append(p.file()).append("\"><img src=\"pictures/").append(p.file())
                    .append("\" alt=\"").append(Fmt.html(p.title())).append("\"></a><figcaption><b>")
                    .append(Fmt.html(p.title())).append("</b>. ").append(Fmt.html(p.caption()))
                    .append("</figcaption></figure>\n");
        }
        if (l.r8() == null) {
            h.append("<p>R8 plot: ").append(Fmt.html(l.r8Note())).append("</p>\n");
        }
        // A render check for headless browsers: counts the pictures that loaded.
        h.append("<p id=\"render-check\" data-images=\"").append(l.pictures().size()).append("\">pictures not loaded</p>\n")
                .append("<script>window.addEventListener('load',function(){var im=document.images,ok=0;")
                .append("for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0)ok++;}")
                .append("document.getElementById('render-check').textContent='pictures loaded '+ok+'/'+im.length;});")
                .append("</script>\n</body>\n</html>\n");
        return h.toString();
    }
}
