package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's evidence sections in Markdown, HTML and JSON, from a small evidence file whose every cell is known:
 * the matrix with lanes, a missing cell, a blank margin and the pairs column (and without pairs), the failing lines
 * with and without seed and worst element, the unreadable files, the skip reason. Expected texts are written from
 * the evidence by hand.
 */
class LedgerSectionsTest {
    @TempDir
    Path dir;

    private Path evidence;

    /** U1 on cpu, cuda-emu and one pair; U2 failing on cpu (no seed, no worst); U3 skipped on cuda; a broken file. */
    private Ledger ledger(boolean withPair) throws IOException {
        evidence = Files.createDirectories(dir.resolve("oracles").resolve("target").resolve("evidence"));
        String pair = withPair ? """
                {"claim":"U1","backend":"cpu-vs-cuda-emu","kind":"check","metric":"bits","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"A#p","run":"1"}
                """ : "";
        Files.writeString(evidence.resolve("A.jsonl"), """
                {"claim":"U1","backend":"cpu","kind":"check","metric":"cells","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"A#a","run":"1"}
                {"claim":"U1","backend":"cuda-emu","kind":"check","metric":"cells","value":0.0,"cmp":"==","limit":0.0,"passed":true,"test":"A#a","run":"1"}
                {"claim":"U2","backend":"cpu","kind":"check","metric":"max_abs_err","value":3.0,"cmp":"<=","limit":2.0,"passed":false,"test":"A#b","run":"1"}
                {"claim":"U3","backend":"cuda","kind":"skip","metric":"skipped","value":0.0,"skipped":"no CUDA driver","test":"A#c","run":"1"}
                """ + pair);
        Files.writeString(evidence.resolve("B.jsonl"), "not json\n");
        return Ledger.build(dir, List.of());
    }

    private static String s(String id) {
        return Fmt.md(ClaimRow.sentence(id));
    }

    @Test
    void theMatrixHasAColumnPerLaneAndOnePairsColumn() throws IOException {
        Ledger l = ledger(true);
        assertEquals("## Claims × lanes and engines\n\n| claim | sentence | cpu | cuda-emu | cuda | pairs |\n"
                + "|---|---|---|---|---|---|\n"
                + "| U1 | " + s("U1") + " | PASS exact | PASS exact | — | PASS (1 pair) |\n"
                + "| U2 | " + s("U2") + " | FAIL 0.667× | — | — | — |\n"
                + "| U3 | " + s("U3") + " | — | — | SKIP | — |\n\n", MarkdownLedger.matrix(l));
        String html = HtmlLedger.matrix(l);
        assertTrue(html.contains("<th>claim</th><th>sentence</th><th>cpu</th><th>cuda-emu</th><th>cuda</th>"
                + "<th>pairs</th></tr>"), html);
        assertTrue(html.contains("<tr data-claim=\"U1\"><td>U1</td><td class=\"sentence\">"
                + Fmt.html(ClaimRow.sentence("U1")) + "</td><td class=\"status PASS\" data-backend=\"cpu\"><a href=\""
                + "#detail-U1-cpu\">PASS exact</a></td><td class=\"status PASS\" data-backend=\"cuda-emu\"><a href=\""
                + "#detail-U1-cuda-emu\">PASS exact</a></td><td class=\"none\">—</td><td class=\"status PASS\""
                + " data-backend=\"pairs\"><a href=\"#detail-U1-cpu-vs-cuda-emu\">PASS (1 pair)</a></td></tr>"), html);
        assertTrue(html.contains("<td class=\"none\">—</td><td class=\"status SKIP\" data-backend=\"cuda\"><a href=\""
                + "#detail-U3-cuda\">SKIP</a></td><td class=\"none\">—</td></tr>"), html);
    }

    @Test
    void withoutPairsThereIsNoPairsColumn() throws IOException {
        Ledger l = ledger(false);
        assertTrue(MarkdownLedger.matrix(l).startsWith("## Claims × lanes and engines\n\n"
                + "| claim | sentence | cpu | cuda-emu | cuda |\n|---|---|---|---|---|\n| U1 | " + s("U1")
                + " | PASS exact | PASS exact | — |\n"), MarkdownLedger.matrix(l));
        String html = HtmlLedger.matrix(l);
        assertTrue(html.contains("<th>cuda</th></tr>"), html);
        assertFalse(html.contains("pairs"), html);
    }

    @Test
    void failingLinesProblemsAndMissingIdsHaveTheirSections() throws IOException {
        Ledger l = ledger(true);
        String md = MarkdownLedger.ledger(l);
        assertTrue(md.contains("\n## Failing evidence lines\n\n- U2 cpu A#b: max_abs_err 3 not <= 2\n\n"), md);
        assertTrue(md.contains("\n## Unreadable evidence\n\n- " + evidence.resolve("B.jsonl") + ":1: malformed evidence"),
                md);
        assertTrue(md.contains("\n## Catalog ids without evidence\n\n- U4: " + s("U4") + "\n"), md);
        String html = HtmlLedger.ledger(l);
        assertTrue(html.contains("<ul id=\"failing\">\n<li>U2 cpu A#b: max_abs_err 3 not &lt;= 2 ("
                + evidence.resolve("A.jsonl") + ":3)</li>\n</ul>"), html);
        assertTrue(html.contains("<ul id=\"problems\">\n<li>" + evidence.resolve("B.jsonl") + ":1: malformed evidence"),
                html);
        assertTrue(html.contains("<ul id=\"no-evidence\">\n"), html);
        assertTrue(html.contains("<p>R8 plot: no " + Ledger.R8_CSV + " in the evidence directories"
                + " (DeadPrefixGrowthTest writes it)</p>\n"), html);
        Map<String, Object> json = JsonLedger.ledger(l);
        assertEquals(List.of("U2 cpu A#b: max_abs_err 3 not <= 2"), json.get("failing_lines"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> claims = (List<Map<String, Object>>) json.get("claims");
        Map<String, Object> u3 = claims.stream().filter(c -> c.get("claim").equals("U3")).findFirst().orElseThrow();
        assertEquals("no CUDA driver", u3.get("skipped"));
        assertFalse(claims.getFirst().containsKey("skipped"), "a judged row has no skip reason");
        assertEquals(1, ((List<?>) json.get("problems")).size());
    }

    @Test
    void aCleanLedgerHasNoFailingOrProblemSections() throws IOException {
        Path clean = Files.createDirectories(dir.resolve("clean").resolve("oracles").resolve("target").resolve("evidence"));
        Files.writeString(clean.resolve("A.jsonl"), """
                {"claim":"U1","backend":"cpu","kind":"check","metric":"cells","value":0.0,"cmp":"==","limit":0.0,"passed":true,"seed":7,"worst":{"b":1,"h":2,"r":3,"c":4},"test":"A#a","run":"1"}
                """);
        Ledger l = Ledger.build(dir.resolve("clean"), List.of());
        String md = MarkdownLedger.ledger(l);
        assertFalse(md.contains("## Failing evidence lines"), md);
        assertFalse(md.contains("## Unreadable evidence"), md);
        assertTrue(md.contains("| U1 | cpu | PASS | 1 | cells 0 == 0 | exact | 7 | (b=1, h=2, r=3, c=4) | A#a |"), md);
        String html = HtmlLedger.ledger(l);
        assertFalse(html.contains("id=\"failing\""), html);
        assertFalse(html.contains("id=\"problems\""), html);
    }

    @Test
    void aClaimWhosePairsAllSkippedShowsSkip() throws IOException {
        Path e = Files.createDirectories(dir.resolve("skips").resolve("oracles").resolve("target").resolve("evidence"));
        Files.writeString(e.resolve("A.jsonl"), """
                {"claim":"X1","backend":"cpu-vs-cuda","kind":"skip","metric":"skipped","value":0.0,"skipped":"no CUDA driver","test":"A#x","run":"1"}
                """);
        Ledger l = Ledger.build(dir.resolve("skips"), List.of());
        assertTrue(MarkdownLedger.matrix(l).contains("| X1 | " + s("X1") + " | SKIP (1 pair) |\n"),
                MarkdownLedger.matrix(l));
    }
}
