package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.claim.ClaimId;
import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ledger rendered from fixture evidence, mutant results and a PIT report: HTML, Markdown, JSON and pictures. */
class LedgerTest {
    @TempDir
    Path dir;

    private LedgerWriter.Written render(boolean mutants, boolean pit) {
        Path root = LedgerFixture.root(dir.resolve("repo"), mutants, pit);
        return LedgerWriter.write(Ledger.build(root, List.of()), dir.resolve("out"));
    }

    @Test
    void summaryCountsRowsAndNamesTheFailures() {
        Ledger l = Ledger.build(LedgerFixture.root(dir, true, true), List.of());
        assertEquals(14, l.lines().size());
        assertEquals(8, l.rows().size());
        assertTrue(l.summaryLine().startsWith("8 claims × backends: 1 FAIL (R1 cpu), 6 PASS, 1 SKIP; 14 evidence lines;"
                + " no evidence yet: U2, U3, U4, U6"), l.summaryLine());
        assertEquals(1, l.exitStatus());
        assertTrue(l.mutantsNote().startsWith("mutants: 3 of 6 killed (1 survived, 1 stale, 1 timeout); smallest kill"
                + " margin 1.39× (sink-in-numerator); 2 kills below 2.00× or without a decisive check line;"
                + " claims without teeth: U1, U2,"), l.mutantsNote());
        // U5 has teeth (window-off-by-one's U5 check line at 2.7e4×); U8's only kill is below 2×.
        assertFalse(l.mutants().claimsWithoutTeeth().contains("U5"));
        assertTrue(l.mutants().claimsWithoutTeeth().contains("U8"));
        assertFalse(l.mutants().claimsWithoutTeeth().contains("P1"), "performance claims are judged by the bench");
        assertEquals(Map.of("U5", Map.of("window-off-by-one", 26615.9), "U8", Map.of("sink-in-numerator", 1.394169835234474)),
                l.mutants().killMatrix());
        assertEquals("PIT: 10 mutations, 8 killed, 1 survived, 1 no coverage; mutation score 80.0%,"
                + " test strength 88.9%", l.pitNote());
        assertTrue(l.missing().contains("X1") && !l.missing().contains("U5"), l.missing().toString());
    }

    @Test
    void catalogMutantsMissingFromTheResultsAreCountedAsNotRun() throws IOException {
        Path root = LedgerFixture.root(dir, true, false);
        Path catalog = Files.createDirectories(root.resolve("mutants/catalog"));
        Ledger before = Ledger.build(root, List.of());
        // Degeneracy: the fixture's results hold mutants, and with no catalog patch beyond them nothing is missing.
        assertFalse(before.mutants().mutants().isEmpty());
        assertEquals(List.of(), before.mutants().notRun());
        assertFalse(before.mutantsNote().contains("not in this run"), before.mutantsNote());
        String ran = before.mutants().mutants().getFirst().id();
        Files.writeString(catalog.resolve(ran + ".patch"), "# id: " + ran + "\n");
        Files.writeString(catalog.resolve("99-swept.patch"), "# id: 99-swept\n# tier: sweep\n");
        Files.writeString(catalog.resolve("98-swept.patch"), "# id: 98-swept\n# tier: sweep\n");
        Ledger after = Ledger.build(root, List.of());
        assertEquals(List.of("98-swept", "99-swept"), after.mutants().notRun());
        assertTrue(after.mutantsNote().contains("; 2 catalog mutants not in this run (the sweep tier:"
                + " -Dmutants.tier=all, the campaigns workflow)"), after.mutantsNote());
    }

    @Test
    void rowsShowTheLineNearestItsLimitWithItsMargin() {
        Ledger l = Ledger.build(LedgerFixture.root(dir, false, false), List.of());
        Map<String, ClaimRow> rows = new java.util.HashMap<>();
        l.rows().forEach(r -> rows.put(r.claim() + "/" + r.backend(), r));
        ClaimRow u5 = rows.get("U5/cpu");
        assertEquals(ClaimRow.Status.PASS, u5.status());
        assertEquals(4, u5.lines());
        assertEquals(3.75e-6, u5.worst().value());
        assertEquals(7.89 / 3.75, u5.margin().factor(), 1e-12);
        assertEquals("(b=0, h=0, r=62, c=8)", u5.worst().worst().toString());
        assertEquals(5894L, u5.worst().seed());
        assertEquals(ClaimId.U5.sentence(), u5.sentence());
        assertEquals(ClaimRow.Status.SKIP, rows.get("U5/cuda").status());
        assertEquals("skipped: no CUDA driver", Fmt.describe(rows.get("U5/cuda").worst()));
        ClaimRow r1 = rows.get("R1/cpu");
        assertEquals(ClaimRow.Status.FAIL, r1.status());
        assertEquals(1.89e-6 / 3.0e-5, r1.margin().factor(), 1e-12);
        assertEquals(Margin.Kind.EXACT, rows.get("U1/cpu").margin().kind());
        assertEquals(1.6, rows.get("M7/cpu").margin().factor(), 1e-12);     // a minimum count: value ÷ limit
        assertEquals(1.5, rows.get("R8/cpu").margin().factor(), 1e-12);     // exponent 0.5 under 0.75
        assertEquals("(not in the catalog of docs/claims.md)", rows.get("Z9/cpu").sentence());
        // Catalog order, then backends by name; ids outside the catalog last.
        assertEquals(List.of("U1/cpu", "U5/cpu", "U5/cuda", "U5/cuda-emu", "R1/cpu", "R8/cpu", "M7/cpu", "Z9/cpu"),
                l.rows().stream().map(r -> r.claim() + "/" + r.backend()).toList());
    }

    @Test
    void theMarginRule() {
        assertEquals(4.0, margin("max_abs_err", 1, 4, true).factor());
        assertEquals(0.25, margin("max_abs_err", 4, 1, false).factor());
        assertEquals(Double.POSITIVE_INFINITY, margin("max_abs_err", 0, 1, true).factor());
        assertEquals(8.0, margin("control_gap:x", 8, 1, true).factor());
        assertEquals(0.5, margin("control_gap:x", 0.5, 1, false).factor());
        assertEquals(2.0, margin("lookups", 20, 10, true).factor());
        assertEquals(0.5, margin("lookups", 5, 10, false).factor());
        assertEquals(Margin.Kind.EXACT, margin("bits_differing", 0, 0, true).kind());
        assertEquals(0.0, margin("bits_differing", 3, 0, false).factor());
        assertEquals(Margin.Kind.EXACT, margin("slots", 4, 4, true).kind());
        assertEquals(Margin.Kind.NONE, margin("degeneracy:x", 1, 1, true).kind());
        assertTrue(Double.isNaN(margin("max_abs_err", Double.NaN, 1, false).factor()));
        // Ordering for the row's line: finite factors (NaN first), then exact checks, then infinite factors.
        List<Margin> sorted = new java.util.ArrayList<>(List.of(Margin.NONE, margin("max_abs_err", 0, 1, true),
                Margin.EXACT, margin("max_abs_err", 1, 3, true), margin("max_abs_err", Double.NaN, 1, false)));
        java.util.Collections.sort(sorted);
        assertEquals(List.of("NaN", "3.00×", "exact", "∞", ""), sorted.stream().map(Margin::text).toList());
        assertEquals("2.10×", Fmt.times(2.1));
        assertEquals("exact", Margin.EXACT.text());
    }

    private static Margin margin(String metric, double value, double limit, boolean passed) {
        io.attnproof.fixtures.evidence.LineKind kind = metric.startsWith("degeneracy:")
                ? io.attnproof.fixtures.evidence.LineKind.DEGENERACY : metric.startsWith("control_gap")
                ? io.attnproof.fixtures.evidence.LineKind.CONTROL : io.attnproof.fixtures.evidence.LineKind.CHECK;
        io.attnproof.fixtures.evidence.Comparison cmp = kind == io.attnproof.fixtures.evidence.LineKind.CONTROL
                ? io.attnproof.fixtures.evidence.Comparison.GT : metric.equals("lookups")
                ? io.attnproof.fixtures.evidence.Comparison.GE : limit == value && limit != 0 || metric.startsWith("degeneracy")
                ? io.attnproof.fixtures.evidence.Comparison.EQ : limit == 0
                ? io.attnproof.fixtures.evidence.Comparison.EQ : io.attnproof.fixtures.evidence.Comparison.LE;
        return Margin.of(new EvidenceLine("U5", "cpu", kind, metric, value, cmp, limit, passed, null, null, "T#t", null,
                "R", "x:1"));
    }

    @Test
    void htmlHoldsTheClaimTableMutantsPitAndPictures() throws IOException {
        LedgerWriter.Written w = render(true, true);
        String html = Files.readString(w.html());
        assertTrue(html.contains("<table id=\"claims\">"), html);
        assertTrue(html.contains("<tr class=\"FAIL\" data-claim=\"R1\" data-backend=\"cpu\">"), html);
        assertTrue(html.contains("<td class=\"status\">SKIP</td>"), html);
        assertTrue(html.contains("max_abs_err 3.75e-06 &lt;= 7.89e-06</td><td class=\"num\">2.10×</td><td class=\"num\">"
                + "5894</td><td class=\"worst\">(b=0, h=0, r=62, c=8)</td>"), html);
        assertTrue(html.contains(Fmt.html(ClaimId.R1.sentence())), html);
        assertTrue(html.contains("<b>X1</b>: " + Fmt.html(ClaimId.X1.sentence())), html);
        assertTrue(html.contains("R1 cpu RaggedCohortTest#eachRowEqualsItselfAlone: max_abs_err 3.00e-05 not &lt;= 1.89e-06"
                + " seed 1001 at (b=2, h=3, r=1, c=9)"), html);
        assertTrue(html.contains("<table id=\"mutants\">"), html);
        assertTrue(html.contains("<tr class=\"survived\" id=\"mutant-memo-key-drops-window\"><td>memo-key-drops-window"
                + "</td><td>— (no patch at mutants/catalog/memo-key-drops-window.patch)</td>"), html);
        assertTrue(html.contains("U8 max_abs_err: fix 1.00e-06 vs 7.89e-06 ✓ → mutant 1.10e-05 vs 7.89e-06 ✗"), html);
        assertTrue(html.contains("<td class=\"num\">1.39×</td><td class=\"flag\">⚑ below 2.00×</td>"), html);
        assertTrue(html.contains("<td class=\"num\">2.7e+04×</td><td class=\"flag\"></td>"), html);
        assertTrue(html.contains("patch does not apply: hunk #1 FAILED"), html);
        assertTrue(html.contains("PIT: 10 mutations, 8 killed, 1 survived, 1 no coverage; mutation score 80.0%,"
                + " test strength 88.9%"), html);
        assertTrue(html.contains("<code>system-under-test/src/main/java/io/attnproof/attention/mask/UnionMaskMemo.java:61"
                + "</code></a> get ConditionalsBoundaryMutator"), html);
        assertTrue(html.contains(Fmt.html(LedgerWriter.MARGIN_RULE)), html);
        List<String> pictures = w.pictures().stream().map(p -> p.getFileName().toString()).toList();
        assertEquals(List.of("mask-uniform-prefill.svg", "mask-uniform-chunk.svg", "mask-ragged.svg",
                "r8-dead-prefix.svg", "errors-cpu.svg", "errors-cuda-emu.svg"), pictures);
        for (String p : pictures) {
            assertTrue(html.contains("<img src=\"pictures/" + p + "\""), p);
        }
    }

    @Test
    void picturesAreWellFormedSvgShowingWhatTheyClaim() throws Exception {
        LedgerWriter.Written w = render(false, false);
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        for (Path p : w.pictures()) {
            var doc = f.newDocumentBuilder().parse(p.toFile());
            assertEquals("svg", doc.getDocumentElement().getTagName(), p.toString());
        }
        String ragged = Files.readString(w.pictures().get(2));
        for (String colour : new String[] {Pictures.RAW, Pictures.COMPRESSED, Pictures.DEAD, Pictures.DEAD_IN_WINDOW,
            Pictures.BEYOND_OWN_THRESHOLD}) {
            assertTrue(ragged.contains("fill=\"" + colour + "\""), "ragged mask shows " + colour);
        }
        assertTrue(ragged.contains("row 3: live 12, rowQ0 6, dead prefix 28; admits 1..3 of 10 blocks (batch-wide rule: 8..10)"), ragged);
        String prefill = Files.readString(w.pictures().get(0));
        assertTrue(prefill.contains("t_q 40, t_k 40, W 16, R 4 (q0 0, keep 40, base 0, t_c 10)"), prefill);
        assertFalse(prefill.contains("fill=\"" + Pictures.DEAD + "\""), "no dead prefix in a uniform batch");
        String chunk = Files.readString(w.pictures().get(1));
        assertTrue(chunk.contains("fill=\"" + Pictures.OUTSIDE + "\""), "the chunk narrows away keys before base");
        String r8 = Files.readString(w.pictures().get(3));
        assertTrue(r8.contains("per-row lengths: slope 0.50"), r8);
        assertTrue(r8.contains("shared cache_len (curated mutant 31, measured): slope 1.00"), r8);
        String errors = Files.readString(w.pictures().get(4));
        assertTrue(errors.contains("cpu: max_abs error ÷ limit over 4 lines (worst 15.9)"), errors);
        assertTrue(errors.contains("&gt; 1 (fail): 1 lines"), errors);
    }

    @Test
    void markdownAndJsonCarryTheSameLedger() throws IOException {
        LedgerWriter.Written w = render(true, true);
        String md = Files.readString(w.markdown());
        assertTrue(md.contains("- **8 claims × backends: 1 FAIL (R1 cpu), 6 PASS, 1 SKIP;"), md);
        assertTrue(md.contains("| U5 | cpu | PASS | 4 | max_abs_err 3.75e-06 <= 7.89e-06 | 2.10× | 5894 |"
                + " (b=0, h=0, r=62, c=8) | UnionOracleTest#matches |"), md);
        assertTrue(md.contains("| R1 | cpu | **FAIL** | 3 |"), md);
        assertTrue(md.contains("| sink-in-numerator | — (no patch at mutants/catalog/sink-in-numerator.patch) | killed"
                + " | U8, U5 |"), md);
        assertTrue(md.contains("⚑ below 2.00×"), md);
        assertTrue(md.contains("![R8: mean dead prefix vs speculative step (log-log)](pictures/r8-dead-prefix.svg)"), md);

        @SuppressWarnings("unchecked")
        Map<String, Object> json = (Map<String, Object>) JsonTrees.parse(Files.readString(w.json()));
        @SuppressWarnings("unchecked")
        Map<String, Object> summary = (Map<String, Object>) json.get("summary");
        assertEquals(14.0, summary.get("lines"));
        assertEquals(1.0, summary.get("fail"));
        assertEquals(1.0, summary.get("exit_status"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> claims = (List<Map<String, Object>>) json.get("claims");
        Map<String, Object> u5 = claims.get(1);
        assertEquals("U5", u5.get("claim"));
        assertEquals(7.89 / 3.75, (Double) u5.get("margin"), 1e-12);
        assertEquals(Map.of("b", 0.0, "h", 0.0, "r", 62.0, "c", 8.0), u5.get("worst"));
        assertEquals("exact", claims.get(0).get("margin"));
        assertTrue(((List<?>) json.get("no_evidence")).contains("X1"));
        @SuppressWarnings("unchecked")
        Map<String, Object> mutants = (Map<String, Object>) json.get("mutants");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows = (List<Map<String, Object>>) mutants.get("mutants");
        assertEquals(6, rows.size());
        Map<String, Object> sink = rows.stream().filter(r -> r.get("id").equals("sink-in-numerator")).findFirst()
                .orElseThrow();
        assertEquals(Boolean.TRUE, sink.get("flagged"));
        assertEquals(1.394169835234474, (Double) sink.get("kill_margin"), 1e-12);
        @SuppressWarnings("unchecked")
        Map<String, Object> pit = (Map<String, Object>) json.get("pit");
        assertEquals(0.8, (Double) pit.get("mutation_score"), 1e-12);
        assertEquals(8.0 / 9, (Double) pit.get("test_strength"), 1e-12);
    }

    @Test
    void absentMutantsAndPitSayNotRun() throws IOException {
        LedgerWriter.Written w = render(false, false);
        String html = Files.readString(w.html());
        assertTrue(html.contains("mutants: not run (no mutants/target/mutants/results.json)"), html);
        assertTrue(html.contains("PIT: not run (no system-under-test/target/pit-reports/mutations.xml"), html);
        assertFalse(html.contains("<table id=\"mutants\">"), html);
        @SuppressWarnings("unchecked")
        Map<String, Object> json = (Map<String, Object>) JsonTrees.parse(Files.readString(w.json()));
        assertEquals("not run", ((Map<?, ?>) json.get("mutants")).get("status"));
        assertEquals("not run", ((Map<?, ?>) json.get("pit")).get("status"));
    }

    @Test
    void unreadableEvidenceIsListedAndFails() throws IOException {
        Path extra = Files.createDirectories(dir.resolve("extra"));
        Files.writeString(extra.resolve("Broken.jsonl"), "{\"claim\":\"U1\",\"backend\":\"cpu\"}\nnot json\n");
        Path root = Files.createDirectories(dir.resolve("empty-root"));
        Ledger l = Ledger.build(root, List.of(extra));
        assertEquals(2, l.problems().size(), l.problems().toString());
        assertTrue(l.problems().get(0).contains("Broken.jsonl:1: malformed evidence: \"kind\""), l.problems().toString());
        assertEquals(2, l.exitStatus());   // nothing readable at all
        Ledger none = Ledger.build(root, List.of());
        assertEquals(2, none.exitStatus());
        assertTrue(none.summaryLine().startsWith("no evidence found"), none.summaryLine());
        assertNull(none.r8());
    }

    /**
     * Only the latest run counts: a line without a run id is stale, never the latest; each line keeps its file and
     * line number (blank lines counted), files read in name order.
     */
    @Test
    void aLineWithoutARunIdIsStaleAndEveryLineKeepsItsSource() throws IOException {
        Path evidence = Files.createDirectories(dir.resolve("oracles").resolve("target").resolve("evidence"));
        Files.writeString(evidence.resolve("B.jsonl"), """
                {"claim":"U1","backend":"cpu","kind":"check","metric":"b","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"B#b","run":"2"}
                """);
        Files.writeString(evidence.resolve("A.jsonl"), """

                {"claim":"U1","backend":"cpu","kind":"check","metric":"a","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"A#a","run":"2"}
                {"claim":"U1","backend":"cpu","kind":"check","metric":"old","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"A#o"}
                """);
        Ledger l = Ledger.build(dir, List.of());
        assertEquals(List.of("a", "b"), l.lines().stream().map(EvidenceLine::metric).toList());
        assertEquals(List.of("old"), l.stale().stream().map(EvidenceLine::metric).toList());
        assertTrue(l.lines().get(0).source().endsWith("A.jsonl:2"), l.lines().get(0).source());
    }

    /** A line whose recorded verdict contradicts its numbers fails the row and the summary, even with no FAIL row. */
    @Test
    void anInconsistentRowCountsAsAFailureInTheSummary() throws IOException {
        Ledger l = ledgerOf("""
                {"claim":"U1","backend":"cpu","kind":"check","metric":"cells","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"A#a","run":"1"}
                {"claim":"U2","backend":"cpu","kind":"check","metric":"max_abs_err","value":3.0,"cmp":"<=","limit":2.0,"passed":true,"test":"A#b","run":"1"}
                """);
        assertEquals(1, l.count(ClaimRow.Status.INCONSISTENT));
        assertEquals(1, l.exitStatus());
        assertTrue(l.summaryLine().startsWith("2 claims × backends: 1 FAIL (U2 cpu), 1 PASS, 0 SKIP; 2 evidence lines;"),
                l.summaryLine());
    }

    /** The ledger of one evidence file, {@code oracles/target/evidence/A.jsonl} holding {@code jsonl}. */
    private Ledger ledgerOf(String jsonl) throws IOException {
        Path evidence = Files.createDirectories(dir.resolve("oracles").resolve("target").resolve("evidence"));
        Files.writeString(evidence.resolve("A.jsonl"), jsonl);
        return Ledger.build(dir, List.of());
    }

    @Test
    void anAllPassingLedgerSaysSo() throws IOException {
        Ledger l = ledgerOf("""
                {"claim":"U1","backend":"cpu","kind":"check","metric":"cells","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"A#a","run":"1"}
                {"claim":"U2","backend":"cpu","kind":"skip","metric":"skipped","value":0.0,"skipped":"n/a","test":"A#b","run":"1"}
                {"claim":"U2","backend":"cpu","kind":"check","metric":"max_abs_err","value":1.0,"cmp":"<=","limit":2.0,"passed":true,"test":"A#b","run":"1"}
                """);
        assertEquals(0, l.exitStatus());
        assertTrue(l.summaryLine().startsWith("2 claims × backends: all pass; 3 evidence lines; no evidence yet: U3,"),
                l.summaryLine());
    }

    /**
     * A test class removed (or a -Dtest run) leaves its old file behind: a rebuild without clean writes the new run's
     * lines elsewhere, and the old run's lines are listed as stale, never counted as PASS.
     */
    @Test
    void onlyTheLatestRunCountsAndOlderLinesAreStale() throws IOException {
        Path evidence = Files.createDirectories(dir.resolve("system-under-test").resolve("target").resolve("evidence"));
        Files.writeString(evidence.resolve("RemovedTest.jsonl"), """
                {"claim":"U1","backend":"cpu","kind":"check","metric":"cells","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"RemovedTest#a","run":"20261130T100000.000"}
                """);
        Files.writeString(evidence.resolve("KeptTest.jsonl"), """
                {"claim":"U2","backend":"cpu","kind":"check","metric":"cells","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"KeptTest#a","run":"20261130T110000.000"}
                """);
        Ledger l = Ledger.build(dir, List.of());
        assertEquals(List.of("U2"), l.rows().stream().map(ClaimRow::claim).toList());
        assertEquals(1, l.stale().size());
        assertEquals("RemovedTest#a", l.stale().getFirst().test());
        assertTrue(l.missing().contains("U1"), "a stale claim has no evidence: " + l.missing());
        assertTrue(l.summaryLine().contains("1 stale (older runs, not counted)"), l.summaryLine());
        // An extra evidence directory (a GPU runner's) is judged by its own latest run.
        Path extra = Files.createDirectories(dir.resolve("gpu"));
        Files.writeString(extra.resolve("G.jsonl"), """
                {"claim":"U5","backend":"cuda","kind":"check","metric":"max_abs_err","value":1e-3,"cmp":"<=","limit":1e-6,"passed":true,"test":"G#a","run":"20261129T000000.000"}
                """);
        Ledger withGpu = Ledger.build(dir, List.of(extra));
        ClaimRow gpu = withGpu.rows().stream().filter(r -> r.backend().equals("cuda")).findFirst().orElseThrow();
        assertEquals(ClaimRow.Status.INCONSISTENT, gpu.status(), "a line claiming PASS with 1e-3 > 1e-6 is judged by its numbers");
        assertEquals(1, withGpu.exitStatus());
    }
}
