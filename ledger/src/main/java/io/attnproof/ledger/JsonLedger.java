package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The ledger as JSON-ready maps ({@code ledger.json}): every section of the model, one method each. */
final class JsonLedger {
    private JsonLedger() {
    }

    static Map<String, Object> ledger(Ledger l) {
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
        root.put("margin_rule", LedgerWriter.MARGIN_RULE);
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
        root.put("mutants", mutants(l));
        root.put("pit", pit(l));
        root.put("per_claim", perClaim(l.perClaim()));
        root.put("per_claim_note", ClaimMutants.intro(l.perClaim(), l.pit()));
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

    private static Object mutants(Ledger l) {
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
            row.put("detects", m.detects());
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
        List<Object> paths = new ArrayList<>();
        DetectionPaths.byPath(l.mutants()).forEach((p, ms) -> {
            Map<String, Object> pm = new LinkedHashMap<>();
            pm.put("path", p.key());
            pm.put("checker", p.checker());
            pm.put("what", p.what());
            pm.put("mutants", ms.stream().map(MutantReport.Mutant::id).toList());
            pm.put("not_in_this_run", DetectionPaths.notRun(l.mutants(), p));
            pm.put("proven", DetectionPaths.proven(ms));
            paths.add(pm);
        });
        out.put("detection_paths", paths);
        out.put("detection_paths_unproven", DetectionPaths.unproven(l.mutants()));
        return out;
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

    private static Object pit(Ledger l) {
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
        out.put("open", open(p));
        return out;
    }

    /** The triage as JSON-ready maps (one per open mutation). */
    static List<Map<String, Object>> open(PitReport p) {
        return p.open().stream().map(JsonLedger::open).toList();
    }

    /** One open mutation as a JSON-ready map, its verdict "untriaged" when no row settles it. */
    static Map<String, Object> open(PitReport.Open o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("class", o.clazz());
        m.put("method", o.method());
        m.put("line", o.line());
        m.put("source", o.source());
        m.put("mutator", o.mutator());
        m.put("status", o.status());
        m.put("description", o.description());
        m.put("verdict", o.triaged() ? o.verdict() : "untriaged");
        m.put("reason", o.triaged() ? o.reason() : null);
        return m;
    }

    static List<Object> perClaim(List<ClaimMutants> claims) {
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
            row.put("open", c.open().stream().map(JsonLedger::open).toList());
            row.put("untriaged", c.untriaged());
            out.add(row);
        }
        return out;
    }
}
