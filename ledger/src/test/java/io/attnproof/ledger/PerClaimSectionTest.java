package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The per-claim section in HTML and Markdown from hand-built claims: one with two tests, a decisive and a flagged
 * other kill, an aimed mutant, a PIT kill by two tests and two open mutations (a killed-now row still open, an
 * equivalent one) in two covered classes; one with nothing (no tests, no kill, one untriaged open mutation).
 */
class PerClaimSectionTest {
    private static final String X = "io.attnproof.ledger.X";
    private static final String Y = "io.attnproof.ledger.Y";
    private static final String SRC_X1 = "ledger/src/main/java/io/attnproof/ledger/X.java:1";
    private static final String SRC_X2 = "ledger/src/main/java/io/attnproof/ledger/X.java:2";
    private static final String SRC_Y3 = "ledger/src/main/java/io/attnproof/ledger/Y.java:3";
    private static final String PATCH = "system-under-test/src/main/java/A.java:9";

    private static List<ClaimMutants> claims() {
        PitReport.Mutation killed = new PitReport.Mutation(X, "a", "()V", 1, "NegateConditionalsMutator", "4", "KILLED",
                true, "negated conditional", "X.java", List.of("A#a", "B#b"), null);
        PitReport.Open killedNow = new PitReport.Open(X, "b", "()V", 2, "MathMutator", "5", "SURVIVED",
                "Replaced integer addition with subtraction", "X.java", "killed-now", "A#a kills it");
        PitReport.Open equivalent = new PitReport.Open(Y, "c", "()V", 3, "VoidMethodCallMutator", "6", "NO_COVERAGE",
                "removed call", "Y.java", "equivalent", "nothing reads it");
        ClaimMutants full = new ClaimMutants("U5", ClaimRow.sentence("U5"), List.of("A#a", "B#b"),
                List.of(new ClaimMutants.Curated("m-decisive", 2.5, true, null),
                        new ClaimMutants.Curated("m-other", 1.5, false, PATCH)),
                List.of("m-aimed"), List.of(new ClaimMutants.PitKill(killed, List.of("A#a", "B#b"))), "scope",
                List.of(X, Y), List.of(killedNow, equivalent));
        PitReport.Open untriaged = new PitReport.Open(Y, "d", "()V", 3, "VoidMethodCallMutator", "7", "SURVIVED",
                "removed call", "Y.java", null, null);
        ClaimMutants bare = new ClaimMutants("U6", ClaimRow.sentence("U6"), List.of(), List.of(), List.of(), List.of(),
                "scope", List.of(), List.of(untriaged));
        return List.of(full, bare);
    }

    private static final PitReport NO_MUTATIONS = null;

    /** A report with nothing in it: the section only asks whether PIT ran. */
    private static PitReport emptyPit() {
        return new PitReport(Path.of("mutations.xml"), 0, 0, 0, 0, 0, List.of(), List.of(), null, List.of(), List.of());
    }

    @Test
    void htmlShowsEveryPartOfAClaim() {
        List<ClaimMutants> claims = claims();
        MutantReport mutants = new MutantReport(Path.of("results.json"), List.of());
        PitReport pit = emptyPit();
        String h = HtmlLedger.perClaim(claims, pit, mutants);
        String expectedFull = "<section class=\"claim-mutants\" id=\"claim-mutants-U5\" data-claim=\"U5\">\n<h3>U5 — "
                + "<span class=\"sentence\">" + Fmt.html(ClaimRow.sentence("U5")) + "</span></h3>\n"
                + "<p class=\"tests\">tests (2): <code>A#a</code>, <code>B#b</code></p>\n"
                + "<table class=\"curated\">\n<thead><tr><th>curated mutant</th><th>kill</th><th>margin</th>"
                + "<th>source</th></tr></thead>\n<tbody>\n"
                + "<tr class=\"decisive\" data-mutant=\"m-decisive\"><td>m-decisive</td><td><b>decisive</b></td>"
                + "<td class=\"num\">2.50×</td><td>—</td></tr>\n"
                + "<tr class=\"other\" data-mutant=\"m-other\"><td>m-other</td><td>also fails its lines (decisive on"
                + " another claim)</td><td class=\"num\">1.50× ⚑</td><td>" + Fmt.sourceHtml(PATCH) + "</td></tr>\n"
                + "</tbody>\n</table>\n"
                + "<p class=\"aimed\">Aimed at it but failing none of its check or control lines: m-aimed</p>\n"
                + "<details class=\"pit-killed\"><summary>1 PIT mutations killed by its tests</summary>\n<ul>\n"
                + "<li>" + Fmt.sourceHtml(SRC_X1) + " X.a NegateConditionalsMutator (KILLED) — negated conditional — by"
                + " <code>A#a</code>, <code>B#b</code></li>\n</ul></details>\n"
                + "<details class=\"pit-open\" open><summary>2 open PIT mutations in the 2 classes it covers,"
                + " 1 untriaged ⚑</summary>\n<p class=\"covered\"><code>" + X + "</code>, <code>" + Y + "</code></p>\n"
                + "<ul>\n<li class=\"untriaged\">⚑ " + Fmt.sourceHtml(SRC_X2) + " X.b MathMutator (SURVIVED) — Replaced"
                + " integer addition with subtraction — <b>untriaged</b> (triaged killed-now, still SURVIVED)</li>\n"
                + "<li>" + Fmt.sourceHtml(SRC_Y3) + " Y.c VoidMethodCallMutator (NO_COVERAGE) — removed call —"
                + " <b>equivalent</b>: nothing reads it</li>\n</ul></details>\n</section>\n";
        String expectedBare = "<section class=\"claim-mutants\" id=\"claim-mutants-U6\" data-claim=\"U6\">\n<h3>U6 — "
                + "<span class=\"sentence\">" + Fmt.html(ClaimRow.sentence("U6")) + "</span></h3>\n"
                + "<p class=\"tests\">tests (0): none (no evidence line names a test)</p>\n"
                + "<p class=\"curated flag\">No curated mutant fails a check or control line of U6 ⚑</p>\n"
                + "<details class=\"pit-killed\"><summary>0 PIT mutations killed by its tests</summary>\n<ul>\n"
                + "</ul></details>\n"
                + "<details class=\"pit-open\" open><summary>1 open PIT mutations in the 0 classes it covers,"
                + " 1 untriaged ⚑</summary>\n<p class=\"covered\"></p>\n"
                + "<ul>\n<li class=\"untriaged\">⚑ " + Fmt.sourceHtml(SRC_Y3) + " Y.d VoidMethodCallMutator (SURVIVED) —"
                + " removed call — <b>untriaged</b></li>\n</ul></details>\n</section>\n";
        String intro = "<h2 id=\"per-claim\">Per claim: curated mutants and PIT</h2>\n<p>"
                + Fmt.html(ClaimMutants.intro(claims, pit)) + "</p>\n";
        assertEquals(intro + expectedFull + expectedBare, h);
    }

    @Test
    void markdownShowsEveryPartOfAClaim() {
        List<ClaimMutants> claims = claims();
        MutantReport mutants = new MutantReport(Path.of("results.json"), List.of());
        PitReport pit = emptyPit();
        String md = MarkdownLedger.perClaim(claims, pit, mutants);
        String expected = "## Per claim: curated mutants and PIT\n\n" + Fmt.md(ClaimMutants.intro(claims, pit)) + "\n\n"
                + "### U5 — " + Fmt.md(ClaimRow.sentence("U5")) + "\n\n"
                + "- tests (2): `A#a`, `B#b`\n"
                + "- curated mutants it kills: **decisive** m-decisive 2.50× · **also fails its lines** (decisive on"
                + " another claim) m-other 1.50× ⚑ " + Fmt.sourceMd(PATCH) + "\n"
                + "- aimed at it but failing none of its check or control lines: m-aimed\n"
                + "- PIT mutations its tests kill: 1\n"
                + "  - " + Fmt.sourceMd(SRC_X1) + " X.a NegateConditionalsMutator (KILLED) — negated conditional — by"
                + " A#a, B#b\n"
                + "- open PIT mutations in the 2 classes it covers (X, Y): 2, 1 untriaged ⚑\n"
                + "  - ⚑ " + Fmt.sourceMd(SRC_X2) + " X.b MathMutator (SURVIVED) — Replaced integer addition with"
                + " subtraction — **untriaged** (triaged killed-now, still SURVIVED)\n"
                + "  - " + Fmt.sourceMd(SRC_Y3) + " Y.c VoidMethodCallMutator (NO_COVERAGE) — removed call —"
                + " **equivalent**: nothing reads it\n\n"
                + "### U6 — " + Fmt.md(ClaimRow.sentence("U6")) + "\n\n"
                + "- tests (0): none (no evidence line names a test)\n"
                + "- curated mutants it kills: none ⚑\n"
                + "- PIT mutations its tests kill: 0\n"
                + "- open PIT mutations in the 0 classes it covers: 1, 1 untriaged ⚑\n"
                + "  - ⚑ " + Fmt.sourceMd(SRC_Y3) + " Y.d VoidMethodCallMutator (SURVIVED) — removed call —"
                + " **untriaged**\n\n";
        assertEquals(expected, md);
    }

    @Test
    void withoutMutantsOrPitTheSectionSaysNotRun() {
        List<ClaimMutants> claims = List.of(claims().get(1));
        String h = HtmlLedger.perClaim(claims, NO_MUTATIONS, null);
        assertEquals("<h2 id=\"per-claim\">Per claim: curated mutants and PIT</h2>\n<p>"
                + Fmt.html(ClaimMutants.intro(claims, null)) + "</p>\n"
                + "<section class=\"claim-mutants\" id=\"claim-mutants-U6\" data-claim=\"U6\">\n<h3>U6 — "
                + "<span class=\"sentence\">" + Fmt.html(ClaimRow.sentence("U6")) + "</span></h3>\n"
                + "<p class=\"tests\">tests (0): none (no evidence line names a test)</p>\n"
                + "<p class=\"curated\">Curated mutants: not run (no " + Ledger.MUTANTS + ")</p>\n"
                + "<p class=\"pit\">PIT: not run (no " + Ledger.PIT + ")</p>\n</section>\n", h);
        String md = MarkdownLedger.perClaim(claims, null, null);
        assertEquals("## Per claim: curated mutants and PIT\n\n" + Fmt.md(ClaimMutants.intro(claims, null)) + "\n\n"
                + "### U6 — " + Fmt.md(ClaimRow.sentence("U6")) + "\n\n"
                + "- tests (0): none (no evidence line names a test)\n"
                + "- curated mutants it kills: not run (no " + Ledger.MUTANTS + ")\n"
                + "- PIT: not run (no " + Ledger.PIT + ")\n\n", md);
    }
}
