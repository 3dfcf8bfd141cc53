package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mutants and PIT sections in Markdown, HTML and JSON: the fixture repository plus a ledger-module report whose
 * open mutations are untriaged, triaged killed-now (still open), equivalent and accepted, a conformance report with
 * nothing open, and a curated mutant killed with a margin of exactly 2 (the flag's edge). Expected texts are
 * written from the fixture files by hand.
 */
class LedgerPitSectionsTest {
    @TempDir
    Path dir;

    private static final String LEDGER_XML = """
            <?xml version="1.0" encoding="UTF-8"?>
            <mutations>
            <mutation detected='false' status='SURVIVED' numberOfTestsRun='1'><sourceFile>X.java</sourceFile><mutatedClass>io.attnproof.ledger.X</mutatedClass><mutatedMethod>a</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>10</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.NegateConditionalsMutator</mutator><indexes><index>1</index></indexes><blocks><block>0</block></blocks><killingTest/><description>negated conditional</description></mutation>
            <mutation detected='false' status='SURVIVED' numberOfTestsRun='1'><sourceFile>X.java</sourceFile><mutatedClass>io.attnproof.ledger.X</mutatedClass><mutatedMethod>b</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>11</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.MathMutator</mutator><indexes><index>2</index></indexes><blocks><block>0</block></blocks><killingTest/><description>Replaced integer addition with subtraction</description></mutation>
            <mutation detected='false' status='NO_COVERAGE' numberOfTestsRun='0'><sourceFile>X.java</sourceFile><mutatedClass>io.attnproof.ledger.X</mutatedClass><mutatedMethod>c</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>12</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.VoidMethodCallMutator</mutator><indexes><index>3</index></indexes><blocks><block>0</block></blocks><killingTest/><description>removed call</description></mutation>
            <mutation detected='false' status='SURVIVED' numberOfTestsRun='1'><sourceFile>Y.java</sourceFile><mutatedClass>io.attnproof.ledger.Y</mutatedClass><mutatedMethod>d</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>5</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.VoidMethodCallMutator</mutator><indexes><index>4</index></indexes><blocks><block>0</block></blocks><killingTest/><description>removed call</description></mutation>
            <mutation detected='true' status='KILLED' numberOfTestsRun='1'><sourceFile>X.java</sourceFile><mutatedClass>io.attnproof.ledger.X</mutatedClass><mutatedMethod>e</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>13</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.VoidMethodCallMutator</mutator><indexes><index>5</index></indexes><blocks><block>0</block></blocks><killingTest>XTest</killingTest><description>removed call</description></mutation>
            </mutations>
            """;

    private static final String CONFORMANCE_XML = """
            <?xml version="1.0" encoding="UTF-8"?>
            <mutations>
            <mutation detected='true' status='KILLED' numberOfTestsRun='1'><sourceFile>Z.java</sourceFile><mutatedClass>io.attnproof.conformance.Z</mutatedClass><mutatedMethod>z</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>3</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.VoidMethodCallMutator</mutator><indexes><index>1</index></indexes><blocks><block>0</block></blocks><killingTest>ZTest</killingTest><description>removed call</description></mutation>
            </mutations>
            """;

    private static final String TRIAGE = String.join("\n", String.join(",", PitReport.TRIAGE_COLUMNS),
            "io.attnproof.ledger.X,b,()V,MathMutator,2,Replaced integer addition with subtraction,killed-now,XTest#b",
            "io.attnproof.ledger.X,c,()V,VoidMethodCallMutator,3,removed call,equivalent,reason e",
            "io.attnproof.ledger.Y,d,()V,VoidMethodCallMutator,4,removed call,accepted,reason a") + "\n";

    /** A curated mutant of U3 killed with a margin of exactly {@link MutantReport#FLAG_BELOW}. */
    private static final String EXACTLY_TWO = """
             {
              "id": "exactly-two",
              "claims": ["U3"],
              "breaks": "b",
              "origin": "o",
              "status": "killed",
              "killers": [{"test": "T#t", "message": "m"}],
              "values": [{"claim": "U3", "kind": "check", "metric": "max_abs_err", "test": "T#t",
                "fix": {"value": 1.0, "limit": 2.0, "passed": true}, "mutant": {"value": 4.0, "limit": 2.0, "passed": false},
                "margin": 2.0}],
              "seconds": 1.0
             }
            ]""";

    private Ledger ledger() throws IOException {
        Path root = LedgerFixture.root(dir, true, true);
        Path results = root.resolve(Ledger.MUTANTS);
        String json = Files.readString(results).strip();
        Files.writeString(results, json.substring(0, json.length() - 1) + "," + EXACTLY_TWO);
        write(root.resolve(Ledger.PIT_MODULES.get("ledger")), LEDGER_XML);
        write(root.resolve(Ledger.PIT_MODULES.get("conformance")), CONFORMANCE_XML);
        write(root.resolve(PitReport.TRIAGE), TRIAGE);
        return Ledger.build(root, List.of());
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }

    private static String src(String clazz, int line) {
        return "ledger/src/main/java/io/attnproof/ledger/" + clazz + ".java:" + line;
    }

    @Test
    void eachModuleHasARowAndEveryModuleButTheSystemItsOpenMutations() throws IOException {
        Ledger l = ledger();
        Ledger.PitModule sut = l.pitModules().get(0);
        assertEquals("system-under-test", sut.module());
        assertEquals(l.pitNote(), sut.note(), "the system under test's row is the PIT section's own report");
        Ledger.PitModule ledgerModule = l.pitModules().stream().filter(m -> m.module().equals("ledger")).findFirst()
                .orElseThrow();
        assertNotNull(ledgerModule.report());
        assertEquals(5, ledgerModule.report().mutations(), "the ledger's own report, not the system's");
        String md = MarkdownLedger.modules(l.pitModules());
        assertTrue(md.contains("| system-under-test | `system-under-test/target/pit-reports/mutations.xml` | 10 | 8 | 1"
                + " | 1 | 80.0% | 88.9% | 2 ⚑ |\n"), md);
        assertTrue(md.contains("| oracles | `system-under-test/target/pit-reports-oracles/mutations.xml` | PIT: not run"
                + " (no system-under-test/target/pit-reports-oracles/mutations.xml) | | | | | | |\n"), md);
        assertTrue(md.contains("| ledger | `ledger/target/pit-reports/mutations.xml` | 5 | 1 | 3 | 1 | 20.0% | 25.0%"
                + " | 2 ⚑ |\n"), md);
        assertTrue(md.contains("| conformance | `conformance/target/pit-reports/mutations.xml` | 1 | 1 | 0 | 0 | 100.0%"
                + " | 100.0% | 0 |\n"), md);
        assertTrue(md.contains("#### ledger\n\n"), md);
        assertFalse(md.contains("#### system-under-test"), md);
        String html = HtmlLedger.modules(l.pitModules());
        assertTrue(html.contains("<tr><td>ledger</td><td><code>ledger/target/pit-reports/mutations.xml</code></td>"
                + "<td>5</td><td>1</td><td>3</td><td>1</td><td>20.0%</td><td>25.0%</td><td>2 ⚑</td></tr>\n"), html);
        assertTrue(html.contains("<td>1</td><td>1</td><td>0</td><td>0</td><td>100.0%</td><td>100.0%</td><td>0</td>"),
                html);
        assertTrue(html.contains("<tr><td>oracles</td><td><code>system-under-test/target/pit-reports-oracles/"
                + "mutations.xml</code></td><td colspan=\"7\">PIT: not run (no system-under-test/target/"
                + "pit-reports-oracles/mutations.xml)</td></tr>\n"), html);
        assertTrue(html.contains("<h4>ledger</h4>\n"), html);
        assertFalse(html.contains("<h4>system-under-test</h4>"), html);
    }

    @Test
    void openMutationsAreGroupedByClassWithTheirVerdicts() throws IOException {
        PitReport p = ledger().pitModules().stream().filter(m -> m.module().equals("ledger")).findFirst().orElseThrow()
                .report();
        String md = MarkdownLedger.pit(p);
        assertTrue(md.endsWith("\n\n### io.attnproof.ledger.X — 3 open, 2 untriaged ⚑\n\n"
                + "- ⚑ " + Fmt.sourceMd(src("X", 10)) + " a NegateConditionalsMutator (SURVIVED) — negated conditional"
                + " — **untriaged**\n"
                + "- ⚑ " + Fmt.sourceMd(src("X", 11)) + " b MathMutator (SURVIVED) — Replaced integer addition with"
                + " subtraction — **untriaged** (triaged killed-now, still SURVIVED)\n"
                + "- " + Fmt.sourceMd(src("X", 12)) + " c VoidMethodCallMutator (NO_COVERAGE) — removed call —"
                + " **equivalent**: reason e\n\n"
                + "### io.attnproof.ledger.Y — 1 open\n\n"
                + "- " + Fmt.sourceMd(src("Y", 5)) + " d VoidMethodCallMutator (SURVIVED) — removed call —"
                + " **accepted**: reason a\n\n"), md);
        String html = HtmlLedger.pit(p);
        assertTrue(html.endsWith("</p>\n<details open><summary><code>io.attnproof.ledger.X</code> — 3 open,"
                + " 2 untriaged ⚑</summary>\n<ul>\n"
                + "<li>⚑ " + Fmt.sourceHtml(src("X", 10)) + " a NegateConditionalsMutator (SURVIVED) — negated"
                + " conditional — <b>untriaged</b></li>\n"
                + "<li>⚑ " + Fmt.sourceHtml(src("X", 11)) + " b MathMutator (SURVIVED) — Replaced integer addition with"
                + " subtraction — <b>untriaged</b> (triaged killed-now, still SURVIVED)</li>\n"
                + "<li>" + Fmt.sourceHtml(src("X", 12)) + " c VoidMethodCallMutator (NO_COVERAGE) — removed call —"
                + " <b>equivalent</b>: reason e</li>\n</ul></details>\n"
                + "<details><summary><code>io.attnproof.ledger.Y</code> — 1 open</summary>\n<ul>\n"
                + "<li>" + Fmt.sourceHtml(src("Y", 5)) + " d VoidMethodCallMutator (SURVIVED) — removed call —"
                + " <b>accepted</b>: reason a</li>\n</ul></details>\n"), html);
        List<Map<String, Object>> open = JsonLedger.open(p);
        assertEquals(List.of("untriaged", "untriaged", "equivalent", "accepted"),
                open.stream().map(o -> o.get("verdict")).toList());
        assertNull(open.get(1).get("reason"), "a killed-now row that has not killed gives no reason yet");
        assertEquals("reason e", open.get(2).get("reason"));
        assertEquals(src("X", 12), open.get(2).get("source"));
    }

    @Test
    void theMutantsTableShowsKillersValuesMarginsAndFlags() throws IOException {
        Ledger l = ledger();
        String md = MarkdownLedger.ledger(l);
        assertTrue(md.contains("| window-off-by-one | — (no patch at mutants/catalog/window-off-by-one.patch) | killed"
                + " | U1, U5 | the raw window admits W+1 keys (p - W <= j <= p) | RawWindowTest#boundaries (+1)"
                + " | cells_differing_from_oracle = 12 elements differ; limit 0 | U5 max_abs_err: fix 3.75e-06 vs"
                + " 7.89e-06 ✓ → mutant 0.210 vs 7.89e-06 ✗ (2.7e+04×) | 2.7e+04× |  |\n"), md);
        assertTrue(md.contains("| sink-in-numerator | — (no patch at mutants/catalog/sink-in-numerator.patch) | killed"
                + " | U8, U5 | the sink term is added to the numerator as well | SinkSemanticsTest#denominatorOnly"
                + " | max_abs_err = 1.1e-05 > limit 7.89e-06 | U8 max_abs_err: fix 1.00e-06 vs 7.89e-06 ✓ → mutant"
                + " 1.10e-05 vs 7.89e-06 ✗ (1.39×) | 1.39× | ⚑ below 2.00× |\n"), md);
        assertTrue(md.contains("| memo-key-drops-window | — (no patch at mutants/catalog/memo-key-drops-window.patch)"
                + " | **survived** | M3 | the memo key omits the window |  |  | M3 key_fields_tested: fix 9 vs 9 ✓ →"
                + " mutant 9 vs 9 ✓ | — |  |\n"), md);
        assertTrue(md.contains("| exactly-two | — (no patch at mutants/catalog/exactly-two.patch) | killed | U3 | b"
                + " | T#t | m | U3 max_abs_err: fix 1 vs 2 ✓ → mutant 4 vs 2 ✗ (2.00×) | 2.00× |  |\n"), md);
        assertTrue(md.contains("Claims without teeth: U1, U2, U4,"), md);
        String html = HtmlLedger.ledger(l);
        assertTrue(html.contains("<p>Claims without teeth: U1, U2, U4,"), html);
        assertTrue(html.contains("<tr class=\"toothless\"><td>U2</td>"), html);
        assertTrue(html.contains("<tr><td>U3</td>"), "a margin of exactly 2 gives teeth: " + html);
        assertTrue(html.contains("<tr><td>U5</td>"), html);
        assertTrue(html.contains("<tr class=\"toothless\"><td>U8</td>"), "U8's only kill is below 2: " + html);
        List<String> unproven = DetectionPaths.unproven(l.mutants());
        assertFalse(unproven.isEmpty(), "degeneracy: no fixture mutant names a detection path");
        assertTrue(html.contains("<p>Paths no killed curated mutant proves: " + Fmt.html(String.join(", ", unproven))
                + "</p>"), html);
        DetectionPaths.Path first = DetectionPaths.byPath(l.mutants()).keySet().iterator().next();
        assertTrue(html.contains("<tbody>\n<tr><td>" + Fmt.html(first.key()) + "</td><td>" + Fmt.html(first.checker())
                + "</td>"), html);
        assertTrue(html.contains("<td class=\"flag\">⚑ no</td></tr>"), html);
        assertFalse(html.contains("<td class=\"flag\">yes</td>"), html);
        assertFalse(html.contains("<p>R8 plot:"), "the fixture has its R8 series");
    }

    @Test
    void theJsonMutantsCarryTheirSidesNotesAndPaths() throws IOException {
        Ledger l = ledger();
        @SuppressWarnings("unchecked")
        Map<String, Object> mutants = (Map<String, Object>) JsonLedger.ledger(l).get("mutants");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows = (List<Map<String, Object>>) mutants.get("mutants");
        Map<String, Object> sink = rows.stream().filter(r -> r.get("id").equals("sink-in-numerator")).findFirst()
                .orElseThrow();
        assertEquals("no patch at mutants/catalog/sink-in-numerator.patch", sink.get("source_note"));
        @SuppressWarnings("unchecked")
        Map<String, Object> value = ((List<Map<String, Object>>) sink.get("values")).getFirst();
        assertEquals(Map.of("value", 1e-6, "limit", 7.89e-6, "passed", true), value.get("fix"));
        assertEquals(Map.of("value", 1.1e-5, "limit", 7.89e-6, "passed", false), value.get("mutant"));
        List<?> paths = (List<?>) mutants.get("detection_paths");
        assertEquals(DetectionPaths.byPath(l.mutants()).size(), paths.size());
        assertFalse(paths.isEmpty());
        assertEquals(DetectionPaths.byPath(l.mutants()).keySet().iterator().next().key(),
                ((Map<?, ?>) paths.getFirst()).get("path"));
    }
}
