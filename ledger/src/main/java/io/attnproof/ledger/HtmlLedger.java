package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;
import java.util.List;
import java.util.Map;

/** The ledger as one HTML page ({@code index.html}): every section of the model, one method each. */
final class HtmlLedger {
    private HtmlLedger() {
    }

    static String ledger(Ledger l) {
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

        h.append(matrix(l)); // issue 13: the claim x (lane, engine) matrix first
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
        h.append("</tbody>\n</table>\n<p>").append(Fmt.html(LedgerWriter.MARGIN_RULE)).append("</p>\n");
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
                        .append("\"><td>").append(Fmt.html(m.id())).append("</td><td>").append(sourceCell(m))
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
                        .append(l.mutants().killCells(cells, Fmt::html, Fmt::sourceHtml)).append("</td></tr>\n");
            }
            h.append("</tbody>\n</table>\n");
            List<String> unproven = DetectionPaths.unproven(l.mutants());
            h.append("<h3 id=\"detection-paths\">Native detection paths (what PIT cannot reach)</h3>\n<p>Paths no killed"
                    + " curated mutant proves: ").append(Fmt.html(unproven.isEmpty() ? "none" : String.join(", ", unproven)))
                    .append("</p>\n<table id=\"detection-paths-table\">\n<thead><tr><th>path</th><th>checker</th>"
                            + "<th>what it detects</th><th>curated mutants (status)</th><th>proven</th></tr></thead>\n"
                            + "<tbody>\n");
            DetectionPaths.byPath(l.mutants()).forEach((p, ms) -> h.append("<tr><td>").append(Fmt.html(p.key()))
                    .append("</td><td>").append(Fmt.html(p.checker())).append("</td><td>").append(Fmt.html(p.what()))
                    .append("</td><td>").append(Fmt.html(DetectionPaths.cell(ms, DetectionPaths.notRun(l.mutants(), p))))
                    .append("</td><td class=\"flag\">")
                    .append(DetectionPaths.proven(ms) ? "yes" : "⚑ no").append("</td></tr>\n"));
            h.append("</tbody>\n</table>\n");
        }

        h.append("<h2 id=\"pit\">PIT</h2>\n<p>").append(Fmt.html(l.pitNote())).append("</p>\n");
        if (l.pit() != null) {
            h.append(pit(l.pit()));
        }
        h.append(modules(l.pitModules()));
        h.append(perClaim(l.perClaim(), l.pit(), l.mutants()));

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
    /**
     * The matrix as HTML ({@code <table id="matrix">}), plus a script that gives the detail rows of
     * {@code table#claims} (which carry {@code data-claim} and {@code data-backend}) the ids the cells link to.
     */
    static String matrix(Ledger l) {
        List<String> cols = ClaimMatrix.columns(l.rows());
        StringBuilder h = new StringBuilder();
        h.append("<h2 id=\"matrix-section\">Claims × lanes and engines</h2>\n<p>One row per claim, one column per lane"
                + " of the system and per engine judged by the conformance corpus (<code>attnproof corpus check</code>);"
                + " each cell is the status and the margin of the claim's line nearest its limit, linking to its row"
                + " below.</p>\n<table id=\"matrix\">\n<thead><tr><th>claim</th><th>sentence</th>");
        for (String c : cols) {
            h.append("<th>").append(Fmt.html(c)).append("</th>");
        }
        boolean anyPairs = l.rows().stream().anyMatch(r -> ClaimMatrix.isPair(r.backend()));
        if (anyPairs) {
            h.append("<th>pairs</th>");
        }
        h.append("</tr></thead>\n<tbody>\n");
        for (var e : ClaimMatrix.cells(l.rows()).entrySet()) {
            h.append("<tr data-claim=\"").append(Fmt.html(e.getKey())).append("\"><td>").append(Fmt.html(e.getKey()))
                    .append("</td><td class=\"sentence\">").append(Fmt.html(ClaimRow.sentence(e.getKey()))).append("</td>");
            for (String c : cols) {
                ClaimRow r = e.getValue().get(c);
                if (r == null) {
                    h.append("<td class=\"none\">—</td>");
                    continue;
                }
                h.append("<td class=\"status ").append(r.status()).append("\" data-backend=\"").append(Fmt.html(c))
                        .append("\"><a href=\"#").append(ClaimMatrix.anchor(r.claim(), c)).append("\">").append(r.status());
                String m = r.margin().text();
                if (!m.isBlank()) {
                    h.append(' ').append(Fmt.html(m));
                }
                h.append("</a></td>");
            }
            if (anyPairs) {
                ClaimMatrix.Pairs p = ClaimMatrix.pairs(e.getValue());
                if (p == null) {
                    h.append("<td class=\"none\">—</td>");
                } else {
                    h.append("<td class=\"status ").append(p.status()).append("\" data-backend=\"pairs\"><a href=\"#")
                            .append(ClaimMatrix.anchor(p.link().claim(), p.link().backend())).append("\">").append(Fmt.html(p.text()))
                            .append("</a></td>");
                }
            }
            h.append("</tr>\n");
        }
        h.append("</tbody>\n</table>\n")
                .append("<style>#matrix td.PASS{background:#c6f6d5;}#matrix td.FAIL,#matrix td.INCONSISTENT")
                .append("{background:#fed7d7;font-weight:bold;}#matrix td.SKIP{background:#fefcbf;}")
                .append("#matrix td.none{color:#a0aec0;text-align:center;}#matrix a{color:inherit;}</style>\n")
                .append("<script>document.addEventListener('DOMContentLoaded',function(){")
                .append("var rows=document.querySelectorAll('#claims tr[data-claim]');for(var i=0;i<rows.length;i++){")
                .append("var r=rows[i];r.id='detail-'+(r.getAttribute('data-claim')+'-'+r.getAttribute('data-backend'))")
                .append(".replace(/[^A-Za-z0-9_.-]/g,'_');}if(location.hash){var t=document.getElementById(")
                .append("location.hash.substring(1));if(t)t.scrollIntoView();}});</script>\n");
        return h.toString();
    }

    /** PIT per module as HTML: the table of {@link MarkdownLedger#modules}, then each other module's open mutations. */
    static String modules(List<Ledger.PitModule> modules) {
        StringBuilder h = new StringBuilder("<h3 id=\"pit-modules\">PIT per module</h3>\n<table><tr><th>module</th>"
                + "<th>report</th><th>mutations</th><th>killed</th><th>survived</th><th>no coverage</th><th>score</th>"
                + "<th>strength</th><th>untriaged</th></tr>\n");
        for (Ledger.PitModule m : modules) {
            h.append("<tr><td>").append(Fmt.html(m.module())).append("</td><td><code>")
                    .append(Fmt.html(m.file().toString())).append("</code></td>");
            PitReport p = m.report();
            if (p == null) {
                h.append("<td colspan=\"7\">").append(Fmt.html(m.note())).append("</td></tr>\n");
            } else {
                h.append("<td>").append(p.mutations()).append("</td><td>").append(p.killed()).append("</td><td>")
                        .append(p.survived()).append("</td><td>").append(p.noCoverage()).append("</td><td>")
                        .append(PitReport.pct(p.score())).append("</td><td>").append(PitReport.pct(p.strength()))
                        .append("</td><td>").append(p.untriaged().isEmpty() ? "0" : p.untriaged().size() + " ⚑")
                        .append("</td></tr>\n");
            }
        }
        h.append("</table>\n");
        for (Ledger.PitModule m : modules) {
            if (m.report() != null && !m.file().equals(Ledger.PIT)) {
                h.append("<h4>").append(Fmt.html(m.module())).append("</h4>\n").append(pit(m.report()));
            }
        }
        return h.toString();
    }

    /** The same as HTML: one {@code <details>} per class, open when it holds an untriaged mutation. */
    static String pit(PitReport p) {
        StringBuilder h = new StringBuilder("<p>").append(Fmt.html(p.triageNote())).append("</p>\n");
        for (Map.Entry<String, List<PitReport.Open>> e : p.byClass().entrySet()) {
            long u = e.getValue().stream().filter(o -> !o.triaged()).count();
            h.append("<details").append(u == 0 ? "" : " open").append("><summary><code>").append(Fmt.html(e.getKey()))
                    .append("</code> — ").append(e.getValue().size()).append(" open")
                    .append(u == 0 ? "" : ", " + u + " untriaged ⚑").append("</summary>\n<ul>\n");
            for (PitReport.Open o : e.getValue()) {
                h.append("<li>").append(o.triaged() ? "" : "⚑ ").append(Fmt.sourceHtml(o.source())).append(' ')
                        .append(Fmt.html(o.method() + " " + o.mutator() + " (" + o.status() + ") — " + o.description()))
                        .append(" — ").append(o.triaged() ? "<b>" + Fmt.html(o.verdict()) + "</b>: "
                                + Fmt.html(o.reason()) : "<b>untriaged</b>"
                                + (o.verdict() == null ? "" : " (triaged killed-now, still " + o.status() + ")"))
                        .append("</li>\n");
            }
            h.append("</ul></details>\n");
        }
        return h.toString();
    }

    static String perClaim(List<ClaimMutants> claims, PitReport pit, MutantReport mutants) {
        StringBuilder h = new StringBuilder("<h2 id=\"per-claim\">Per claim: curated mutants and PIT</h2>\n<p>")
                .append(Fmt.html(ClaimMutants.intro(claims, pit))).append("</p>\n");
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
                        .append(Fmt.html(Fmt.simpleName(m.clazz()) + "." + m.method() + " " + m.mutator() + " (" + m.status()
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
                        .append(Fmt.html(Fmt.simpleName(o.clazz()) + "." + o.method() + " " + o.mutator() + " (" + o.status()
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

    /** A curated mutant's source cell: the link, or why there is none. */
    private static String sourceCell(MutantReport.Mutant m) {
        if (m.source() == null) {
            return Fmt.html("— (" + m.sourceNote() + ")");
        }
        return Fmt.sourceHtml(m.source());
    }
}
