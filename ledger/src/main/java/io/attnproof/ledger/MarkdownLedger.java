package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The ledger as Markdown ({@code ledger.md}): every section of the model, one method each. */
final class MarkdownLedger {
    private MarkdownLedger() {
    }

    static String ledger(Ledger l) {
        StringBuilder md = new StringBuilder();
        md.append("# attnproof ledger\n\n");
        md.append("Generated ").append(l.generatedAt()).append(" from `").append(l.root().toAbsolutePath().normalize())
                .append("`.\n\n");
        md.append("- **").append(Fmt.md(l.summaryLine())).append("**\n");
        md.append("- ").append(Fmt.md(l.mutantsNote())).append('\n');
        md.append("- ").append(Fmt.md(l.pitNote())).append("\n\n");
        md.append(matrix(l)); // issue 13: the claim x (lane, engine) matrix first
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
        md.append('\n').append(Fmt.md(LedgerWriter.MARGIN_RULE)).append("\n\n");
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
                md.append("| ").append(Fmt.md(m.id())).append(" | ").append(sourceCell(m)).append(" | ")
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
                        .append(l.mutants().killCells(matrix.getOrDefault(id.name(), Map.of()), Fmt::md, Fmt::sourceMd))
                        .append(" |\n");
            }
            md.append('\n');
            md.append(detectionPaths(l.mutants()));
        }
        md.append("## PIT\n\n").append(Fmt.md(l.pitNote())).append("\n\n");
        if (l.pit() != null) {
            md.append(pit(l.pit()));
        }
        md.append(modules(l.pitModules()));
        md.append(perClaim(l.perClaim(), l.pit(), l.mutants()));
        md.append("## Pictures\n\n");
        for (Pictures.Picture p : l.pictures()) {
            md.append("### ").append(Fmt.md(p.title())).append("\n\n![").append(Fmt.md(p.title())).append("](pictures/")
                    .append(p.file()).append(")\n\n").append(Fmt.md(p.caption())).append("\n\n");
        }
        return md.toString();
    }

    /** The matrix as a Markdown table. */
    static String matrix(Ledger l) {
        List<String> cols = ClaimMatrix.columns(l.rows());
        boolean anyPairs = l.rows().stream().anyMatch(r -> ClaimMatrix.isPair(r.backend()));
        StringBuilder md = new StringBuilder("## Claims × lanes and engines\n\n| claim | sentence |");
        cols.forEach(c -> md.append(' ').append(Fmt.md(c)).append(" |"));
        md.append(anyPairs ? " pairs |" : "").append("\n|---|---|");
        cols.forEach(c -> md.append("---|"));
        md.append(anyPairs ? "---|" : "");
        md.append('\n');
        for (var e : ClaimMatrix.cells(l.rows()).entrySet()) {
            md.append("| ").append(Fmt.md(e.getKey())).append(" | ").append(Fmt.md(ClaimRow.sentence(e.getKey())))
                    .append(" |");
            for (String c : cols) {
                ClaimRow r = e.getValue().get(c);
                md.append(' ').append(r == null ? "—" : r.status() + (r.margin().text().isBlank() ? ""
                        : " " + Fmt.md(r.margin().text()))).append(" |");
            }
            if (anyPairs) {
                ClaimMatrix.Pairs p = ClaimMatrix.pairs(e.getValue());
                md.append(' ').append(p == null ? "—" : Fmt.md(p.text())).append(" |");
            }
            md.append('\n');
        }
        return md.append('\n').toString();
    }
    /**
     * PIT per module: one table row each (mutations, killed, survived, no coverage, score, strength, untriaged), then
     * the open mutations of every module but the system under test, whose triage is above.
     */
    static String modules(List<Ledger.PitModule> modules) {
        StringBuilder md = new StringBuilder("### PIT per module\n\n| module | report | mutations | killed | survived"
                + " | no coverage | score | strength | untriaged |\n|---|---|---|---|---|---|---|---|---|\n");
        for (Ledger.PitModule m : modules) {
            md.append("| ").append(Fmt.md(m.module())).append(" | `").append(Fmt.md(m.file().toString())).append("` | ");
            PitReport p = m.report();
            if (p == null) {
                md.append(Fmt.md(m.note())).append(" | | | | | | |\n");
            } else {
                md.append(p.mutations()).append(" | ").append(p.killed()).append(" | ").append(p.survived())
                        .append(" | ").append(p.noCoverage()).append(" | ").append(PitReport.pct(p.score()))
                        .append(" | ").append(PitReport.pct(p.strength())).append(" | ")
                        .append(p.untriaged().isEmpty() ? "0" : p.untriaged().size() + " ⚑").append(" |\n");
            }
        }
        md.append('\n');
        for (Ledger.PitModule m : modules) {
            if (m.report() != null && !m.file().equals(Ledger.PIT)) {
                md.append("#### ").append(Fmt.md(m.module())).append("\n\n").append(pit(m.report()));
            }
        }
        return md.toString();
    }

    /** The PIT section's triage as Markdown: the note, then per class its open mutations with verdict or ⚑. */
    static String pit(PitReport p) {
        StringBuilder md = new StringBuilder(Fmt.md(p.triageNote())).append("\n\n");
        for (Map.Entry<String, List<PitReport.Open>> e : p.byClass().entrySet()) {
            long u = e.getValue().stream().filter(o -> !o.triaged()).count();
            md.append("### ").append(Fmt.md(e.getKey())).append(" — ").append(e.getValue().size()).append(" open")
                    .append(u == 0 ? "" : ", " + u + " untriaged ⚑").append("\n\n");
            for (PitReport.Open o : e.getValue()) {
                md.append("- ").append(o.triaged() ? "" : "⚑ ").append(Fmt.sourceMd(o.source())).append(' ')
                        .append(Fmt.md(o.method() + " " + o.mutator() + " (" + o.status() + ") — " + o.description()))
                        .append(" — ").append(o.triaged() ? "**" + o.verdict() + "**: " + Fmt.md(o.reason())
                                : o.verdict() == null ? "**untriaged**" : "**untriaged** (triaged killed-now, still "
                                        + o.status() + ")")
                        .append('\n');
            }
            md.append('\n');
        }
        return md.toString();
    }

    static String perClaim(List<ClaimMutants> claims, PitReport pit, MutantReport mutants) {
        StringBuilder md = new StringBuilder("## Per claim: curated mutants and PIT\n\n");
        md.append(Fmt.md(ClaimMutants.intro(claims, pit))).append("\n\n");
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
                        .append(Fmt.md(Fmt.simpleName(m.clazz()) + "." + m.method() + " " + m.mutator() + " (" + m.status()
                                + ") — " + m.description() + " — by " + String.join(", ", k.by()))).append('\n');
            }
            md.append("- open PIT mutations in the ").append(c.coveredClasses().size()).append(" classes it covers")
                    .append(c.coveredClasses().isEmpty() ? "" : " (" + Fmt.md(String.join(", ",
                            c.coveredClasses().stream().map(Fmt::simpleName).toList())) + ")")
                    .append(": ").append(c.open().size())
                    .append(c.untriaged() == 0 ? "" : ", " + c.untriaged() + " untriaged ⚑").append('\n');
            for (PitReport.Open o : c.open()) {
                md.append("  - ").append(o.triaged() ? "" : "⚑ ").append(Fmt.sourceMd(o.source())).append(' ')
                        .append(Fmt.md(Fmt.simpleName(o.clazz()) + "." + o.method() + " " + o.mutator() + " (" + o.status()
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

    /** The emulator's detection paths, each with the curated mutants that name it (⚑ where none was killed). */
    static String detectionPaths(MutantReport mutants) {
        List<String> unproven = DetectionPaths.unproven(mutants);
        StringBuilder md = new StringBuilder("### Native detection paths (what PIT cannot reach)\n\n")
                .append("Paths no killed curated mutant proves: ")
                .append(unproven.isEmpty() ? "none" : Fmt.md(String.join(", ", unproven))).append("\n\n")
                .append("| path | checker | what it detects | curated mutants (status) | proven |\n|---|---|---|---|---|\n");
        DetectionPaths.byPath(mutants).forEach((p, ms) -> md.append("| ").append(Fmt.md(p.key())).append(" | ")
                .append(Fmt.md(p.checker())).append(" | ").append(Fmt.md(p.what())).append(" | ")
                .append(Fmt.md(DetectionPaths.cell(ms, DetectionPaths.notRun(mutants, p)))).append(" | ")
                .append(DetectionPaths.proven(ms) ? "yes" : "⚑ no").append(" |\n"));
        return md.append('\n').toString();
    }

    /** A curated mutant's source cell: the link, or why there is none. */
    private static String sourceCell(MutantReport.Mutant m) {
        if (m.source() == null) {
            return Fmt.md("— (" + m.sourceNote() + ")");
        }
        return Fmt.sourceMd(m.source());
    }
}
