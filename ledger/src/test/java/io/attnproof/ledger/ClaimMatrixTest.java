package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.EvidenceSink;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's first view: one row per claim with its sentence once, one column per lane and engine (an engine's
 * evidence folder under conformance/target/evidence-engines is read by {@code ledger}), each cell status and margin linking
 * to the claim's detail row (that the links resolve in headless Chromium: {@link LedgerInChromiumTest}).
 */
class ClaimMatrixTest {
    @TempDir
    Path dir;

    private Path repoWithEngine() {
        return repoWithEngine(dir);
    }

    /** The fixture repository under {@code dir} plus a numpy engine's evidence folder (U5 and R1 lines). */
    static Path repoWithEngine(Path dir) {
        Path root = LedgerFixture.root(dir.resolve("repo"), true, true);
        Path engine = root.resolve("conformance/target/evidence-engines/numpy");
        Evidence ev = Evidence.of("U5", ClaimMatrixTest.class, "engine", new EvidenceSink(engine)).backend("numpy");
        ev.check("max_abs_err", 1e-7, 4e-7, null);
        ev.claim("R1").check("max_abs_err", 2e-7, 5e-7, null);
        return root;
    }

    @Test
    void oneRowPerClaimOneColumnPerLaneAndEngineEachCellLinkingToItsDetails() throws IOException {
        Path root = repoWithEngine();
        LedgerWriter.write(Ledger.build(root, List.of(root.resolve("conformance/target/evidence-engines/numpy"))),
                dir.resolve("out"));
        String html = Files.readString(dir.resolve("out/index.html"), StandardCharsets.UTF_8);
        int matrix = html.indexOf("<table id=\"matrix\">");
        assertTrue(matrix > 0 && matrix < html.indexOf("<table id=\"claims\">"), "the matrix comes first");
        String table = html.substring(matrix, html.indexOf("</table>", matrix));
        Ledger l = Ledger.build(root, List.of(root.resolve("conformance/target/evidence-engines/numpy")));
        long claims = l.rows().stream().map(ClaimRow::claim).distinct().count();
        assertEquals(claims, table.split("<tr data-claim=").length - 1, "one row per claim");
        assertEquals(List.of("cpu", "cuda-emu", "cuda", "numpy"), ClaimMatrix.columns(l.rows()), "lanes in ledger order,"
                + " then engines");
        assertTrue(table.contains("<th>cpu</th><th>cuda-emu</th><th>cuda</th><th>numpy</th>"), table);
        String u5 = ClaimRow.sentence("U5");
        assertEquals(1, table.split(Pattern.quote(Fmt.html(u5)), -1).length - 1, "the sentence once");
        assertTrue(table.contains("<a href=\"#detail-U5-numpy\">PASS 4.00×</a>"), table);
        assertTrue(table.contains("<a href=\"#detail-R1-cpu\">FAIL"), table);
        Matcher m = Pattern.compile("href=\"#(detail-[^\"]+)\"").matcher(table);
        int links = 0;
        while (m.find()) {
            links++;
        }
        assertEquals(l.rows().size(), links, "one link per (claim, backend) row");
        String md = Files.readString(dir.resolve("out/ledger.md"), StandardCharsets.UTF_8);
        assertTrue(md.indexOf("## Claims × lanes and engines") < md.indexOf("## Claims × backends"), md);
    }

    @Test
    void crossLanePairsAreOneCellOfX1sRowNotColumns() {
        java.util.function.BiFunction<String, Double, io.attnproof.fixtures.evidence.EvidenceLine> x1 = (backend, value) ->
                io.attnproof.fixtures.evidence.EvidenceLine.judged("X1", backend,
                        io.attnproof.fixtures.evidence.LineKind.CHECK, "max_abs_err", value,
                        io.attnproof.fixtures.evidence.Comparison.LE, 1e-4, value <= 1e-4, 7L, null, "CrossLaneTest#t", "R");
        List<ClaimRow> rows = ClaimRow.of(List.of(x1.apply("cpu", 1e-6), x1.apply("cpu-vs-cuda-emu", 1e-6),
                x1.apply("cpu-vs-metal-emu", 5e-4), x1.apply("cuda-emu-vs-metal-emu", 2e-6)));
        assertEquals(List.of("cpu"), ClaimMatrix.columns(rows), "no column per pair");
        ClaimMatrix.Pairs pairs = ClaimMatrix.pairs(ClaimMatrix.cells(rows).get("X1"));
        assertEquals(ClaimRow.Status.FAIL, pairs.status(), "one failing pair fails the cell");
        assertEquals("cpu-vs-metal-emu", pairs.link().backend(), "the cell links to the failing pair");
        assertEquals("FAIL (3 pairs)", pairs.text());
        assertEquals(null, ClaimMatrix.pairs(ClaimMatrix.cells(List.of(rows.getFirst())).get("X1")));
    }
}
