package io.attnproof.ledger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The ledger's first view: one row per claim (its sentence once), one column per lane and engine (the system's lanes
 * in ledger order, then the engines judged by the corpus by name), each cell the claim's status and margin on that
 * backend, linking to the detail row of the claims × backends table below. Cross-lane pairs ({@code a-vs-b}, X1's
 * comparisons) get no column of their own: one "pairs" cell per claim gives their worst status and their number,
 * linking to the first failing (else the first) pair's detail row.
 */
public final class ClaimMatrix {
    /** The system's lanes, in ledger order; other backends (engines judged by the corpus, X1 pairs) follow by name. */
    public static final List<String> LANES = List.of("cpu", "cuda-emu", "metal-emu", "cuda", "metal");

    private ClaimMatrix() {
    }

    /** Whether {@code backend} names a cross-lane pair ({@code "<a>-vs-<b>"}). */
    public static boolean isPair(String backend) {
        return backend.contains("-vs-");
    }

    /**
     * The columns: the lanes that have evidence, in {@link #LANES} order, then the other backends by name; pairs
     * are summarised in one "pairs" cell instead ({@link #pairs}).
     */
    public static List<String> columns(List<ClaimRow> rows) {
        Set<String> present = new LinkedHashSet<>();
        rows.stream().filter(r -> !isPair(r.backend())).forEach(r -> present.add(r.backend()));
        List<String> out = new ArrayList<>();
        for (String lane : LANES) {
            if (present.contains(lane)) {
                out.add(lane);
            }
        }
        present.stream().filter(b -> !LANES.contains(b)).sorted().forEach(out::add);
        return out;
    }

    /** Claim -> backend -> row, claims in catalog order (the rows' order). */
    public static Map<String, Map<String, ClaimRow>> cells(List<ClaimRow> rows) {
        Map<String, Map<String, ClaimRow>> out = new LinkedHashMap<>();
        for (ClaimRow r : rows) {
            out.computeIfAbsent(r.claim(), k -> new LinkedHashMap<>()).put(r.backend(), r);
        }
        return out;
    }

    /**
     * The pair rows of one claim summarised: null when it has none, else the row to link to (the first failing
     * one, else the first) and the status shown: FAIL/INCONSISTENT if any pair fails, else PASS if any passed,
     * else SKIP.
     */
    static Pairs pairs(Map<String, ClaimRow> byBackend) {
        List<ClaimRow> pairs = byBackend.values().stream().filter(r -> isPair(r.backend())).toList();
        if (pairs.isEmpty()) {
            return null;
        }
        ClaimRow failing = pairs.stream().filter(r -> r.status().failing()).findFirst().orElse(null);
        ClaimRow.Status status = failing != null ? failing.status()
                : pairs.stream().anyMatch(r -> r.status() == ClaimRow.Status.PASS) ? ClaimRow.Status.PASS
                : ClaimRow.Status.SKIP;
        return new Pairs(failing != null ? failing : pairs.getFirst(), status, pairs.size());
    }

    /** A claim's pair rows in one cell: the row linked, the status shown, how many pairs. */
    record Pairs(ClaimRow link, ClaimRow.Status status, int count) {
        String text() {
            return status + " (" + count + (count == 1 ? " pair)" : " pairs)");
        }
    }

    /** The anchor of the detail row of (claim, backend). */
    public static String anchor(String claim, String backend) {
        return "detail-" + (claim + "-" + backend).replaceAll("[^A-Za-z0-9_.-]", "_");
    }

    /**
     * The matrix as HTML ({@code <table id="matrix">}), plus a script that gives the detail rows of
     * {@code table#claims} (which carry {@code data-claim} and {@code data-backend}) the ids the cells link to.
     */
    public static String html(Ledger l) {
        List<String> cols = columns(l.rows());
        StringBuilder h = new StringBuilder();
        h.append("<h2 id=\"matrix-section\">Claims × lanes and engines</h2>\n<p>One row per claim, one column per lane"
                + " of the system and per engine judged by the conformance corpus (<code>attnproof corpus check</code>);"
                + " each cell is the status and the margin of the claim's line nearest its limit, linking to its row"
                + " below.</p>\n<table id=\"matrix\">\n<thead><tr><th>claim</th><th>sentence</th>");
        for (String c : cols) {
            h.append("<th>").append(Fmt.html(c)).append("</th>");
        }
        boolean anyPairs = l.rows().stream().anyMatch(r -> isPair(r.backend()));
        if (anyPairs) {
            h.append("<th>pairs</th>");
        }
        h.append("</tr></thead>\n<tbody>\n");
        for (var e : cells(l.rows()).entrySet()) {
            h.append("<tr data-claim=\"").append(Fmt.html(e.getKey())).append("\"><td>").append(Fmt.html(e.getKey()))
                    .append("</td><td class=\"sentence\">").append(Fmt.html(ClaimRow.sentence(e.getKey()))).append("</td>");
            for (String c : cols) {
                ClaimRow r = e.getValue().get(c);
                if (r == null) {
                    h.append("<td class=\"none\">—</td>");
                    continue;
                }
                h.append("<td class=\"status ").append(r.status()).append("\" data-backend=\"").append(Fmt.html(c))
                        .append("\"><a href=\"#").append(anchor(r.claim(), c)).append("\">").append(r.status());
                String m = r.margin().text();
                if (!m.isBlank()) {
                    h.append(' ').append(Fmt.html(m));
                }
                h.append("</a></td>");
            }
            if (anyPairs) {
                Pairs p = pairs(e.getValue());
                if (p == null) {
                    h.append("<td class=\"none\">—</td>");
                } else {
                    h.append("<td class=\"status ").append(p.status()).append("\" data-backend=\"pairs\"><a href=\"#")
                            .append(anchor(p.link().claim(), p.link().backend())).append("\">").append(Fmt.html(p.text()))
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

    /** The matrix as a Markdown table. */
    public static String markdown(Ledger l) {
        List<String> cols = columns(l.rows());
        boolean anyPairs = l.rows().stream().anyMatch(r -> isPair(r.backend()));
        StringBuilder md = new StringBuilder("## Claims × lanes and engines\n\n| claim | sentence |");
        cols.forEach(c -> md.append(' ').append(Fmt.md(c)).append(" |"));
        md.append(anyPairs ? " pairs |" : "").append("\n|---|---|");
        cols.forEach(c -> md.append("---|"));
        md.append(anyPairs ? "---|" : "");
        md.append('\n');
        for (var e : cells(l.rows()).entrySet()) {
            md.append("| ").append(Fmt.md(e.getKey())).append(" | ").append(Fmt.md(ClaimRow.sentence(e.getKey())))
                    .append(" |");
            for (String c : cols) {
                ClaimRow r = e.getValue().get(c);
                md.append(' ').append(r == null ? "—" : r.status() + (r.margin().text().isBlank() ? ""
                        : " " + Fmt.md(r.margin().text()))).append(" |");
            }
            if (anyPairs) {
                Pairs p = pairs(e.getValue());
                md.append(' ').append(p == null ? "—" : Fmt.md(p.text())).append(" |");
            }
            md.append('\n');
        }
        return md.append('\n').toString();
    }
}
