package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.claim.ClaimId;
import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's per-claim view of curated mutants and PIT, rendered from a synthetic repository: the claims' tests
 * from their evidence, a mutations.xml, the triage, the test scope, the mutant campaign's results and the patches.
 */
class ClaimMutantsTest {
    private static final String RUN = "20261130T210000.000";
    private static final String PKG = "io.attnproof.attention.";
    private static final String SRC = "system-under-test/src/main/java/io/attnproof/attention/";

    @TempDir
    Path dir;

    // ------------------------------------------------------------------ the synthetic repository

    private static String evidence(String claim, String test) {
        return "{\"claim\":\"" + claim + "\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"max_abs_err\","
                + "\"value\":1.0e-6,\"cmp\":\"<=\",\"limit\":3.0e-4,\"passed\":true,\"seed\":7,\"test\":\"" + test
                + "\",\"run\":\"" + RUN + "\"}";
    }

    /** PIT's JUnit 5 name of {@code testClass#method}: a plain method, or a template's invocation. */
    private static String junit5(String testClass, String method, boolean template) {
        String fq = PKG + testClass;
        return fq + ".[engine:junit-jupiter]/[class:" + fq + "]/"
                + (template ? "[test-template:" + method + "(int, io.attnproof.fixtures.evidence.Evidence)]/"
                        + "[test-template-invocation:#6]" : "[method:" + method + "(io.attnproof.fixtures.evidence.Evidence)]");
    }

    private static String mutation(String status, String clazz, String method, int line, String mutator,
            String killing, String extra) {
        String simple = clazz.substring(clazz.lastIndexOf('.') + 1);
        int dollar = simple.indexOf('$');
        String file = (dollar < 0 ? simple : simple.substring(0, dollar)) + ".java";
        boolean detected = status.equals("KILLED") || status.equals("TIMED_OUT");
        return "<mutation detected='" + detected + "' status='" + status + "' numberOfTestsRun='1'><sourceFile>" + file
                + "</sourceFile><mutatedClass>" + PKG + clazz + "</mutatedClass><mutatedMethod>" + method
                + "</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>" + line
                + "</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators." + mutator
                + "</mutator><indexes><index>1</index></indexes><blocks><block>1</block></blocks>"
                + (killing == null ? "<killingTest/>" : "<killingTest>" + killing + "</killingTest>") + extra
                + "<description>changed something</description></mutation>\n";
    }

    private void write(Path relative, String text) throws IOException {
        Path p = dir.resolve(relative);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text, StandardCharsets.UTF_8);
    }

    /**
     * U1's tests: RawWindowTest#boundaries and the template RawWindowTest#edges; U5's: UnionOracleTest#matches. PIT
     * kills UnionMask:18 by boundaries, UnionMask:20 by an invocation of edges, UnionMask:22 by
     * RawWindowTest#notAClaimTest (a method of U1's test class that no evidence line names) and SoftmaxWithSinks:40
     * by matches; UnionMask:30 survives (triaged equivalent), UnionMaskMemo:61 has no coverage (untriaged),
     * SoftmaxWithSinks:44 survives (untriaged).
     */
    private Path repository(boolean fullMatrix) throws IOException {
        write(Path.of("system-under-test", "target", "evidence", "Synthetic.jsonl"), String.join("\n",
                evidence("U1", "RawWindowTest#boundaries"),
                evidence("U1", "RawWindowTest#edges(int)"),
                evidence("U1", "RawWindowTest#edges(int)"),
                evidence("U5", "UnionOracleTest#matches")) + "\n");
        String matrixU5 = fullMatrix ? "<succeedingTests>" + junit5("dsv4.UnionOracleTest", "matches", false)
                + "</succeedingTests>" : "";
        write(Ledger.PIT, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<mutations partial=\"true\">\n"
                + mutation("KILLED", "mask.UnionMask", "&lt;init&gt;", 18, "ConditionalsBoundaryMutator",
                        junit5("mask.RawWindowTest", "boundaries", false), "")
                + mutation("KILLED", "mask.UnionMask", "admits", 20, "NegateConditionalsMutator",
                        junit5("mask.RawWindowTest", "edges", true), "")
                + mutation("KILLED", "mask.UnionMask", "admits", 22, "MathMutator",
                        junit5("mask.RawWindowTest", "notAClaimTest", false), "")
                + mutation("SURVIVED", "mask.UnionMask", "admits", 30, "ConditionalsBoundaryMutator", null, "")
                + mutation("NO_COVERAGE", "mask.UnionMaskMemo", "get", 61, "ConditionalsBoundaryMutator", null, "")
                + mutation("KILLED", "sinks.SoftmaxWithSinks", "apply", 40, "MathMutator",
                        junit5("dsv4.UnionOracleTest", "matches", false), "")
                + mutation("SURVIVED", "sinks.SoftmaxWithSinks", "apply", 44, "MathMutator", null, "")
                + mutation("SURVIVED", "dsv4.Dsv4Attention$Step", "run", 90, "MathMutator", null, matrixU5)
                + "</mutations>\n");
        write(PitReport.TRIAGE, String.join(",", PitReport.TRIAGE_COLUMNS) + "\n" + PKG
                + "mask.UnionMask,admits,()V,ConditionalsBoundaryMutator,1,changed something,equivalent,"
                + "\"at j == p both sides admit\"\n");
        write(ClaimMutants.TEST_SCOPE, "# class<TAB>test classes\n"
                + PKG + "mask.UnionMask\t" + PKG + "mask.RawWindowTest\n"
                + PKG + "mask.UnionMaskMemo\t" + PKG + "mask.RawWindowTest," + PKG + "dsv4.UnionOracleTest\n"
                + PKG + "sinks.SoftmaxWithSinks\t" + PKG + "dsv4.UnionOracleTest\n");
        // 18 is decisive on U1 (50x) and also fails a U5 control line (3x); 20 is decisive on U5 (10x).
        write(Ledger.MUTANTS, """
                [
                 {"id": "18-window-off-by-one", "claims": ["U1", "U5"], "breaks": "W+1 keys", "origin": "o",
                  "status": "killed", "killers": [{"test": "RawWindowTest#boundaries", "message": "m"}],
                  "values": [
                   {"claim": "U1", "kind": "check", "metric": "cells", "test": "RawWindowTest#boundaries",
                    "fix": {"value": 0, "limit": 0.1, "passed": true}, "mutant": {"value": 5, "limit": 0.1, "passed": false},
                    "margin": 50.0},
                   {"claim": "U5", "kind": "control", "metric": "control_gap:x", "test": "UnionOracleTest#matches",
                    "fix": {"value": 0.3, "limit": 0.1, "passed": true}, "mutant": {"value": 0.3, "limit": 0.9, "passed": false},
                    "margin": 3.0}],
                  "seconds": 1.0},
                 {"id": "20-sink-in-numerator", "claims": ["U5", "U8"], "breaks": "sink in the numerator", "origin": "o",
                  "patch": "mutants/catalog/20-sink-in-numerator.patch",
                  "status": "killed", "killers": [{"test": "UnionOracleTest#matches", "message": "m"}],
                  "values": [
                   {"claim": "U5", "kind": "check", "metric": "max_abs_err", "test": "UnionOracleTest#matches",
                    "fix": {"value": 1e-6, "limit": 1e-5, "passed": true}, "mutant": {"value": 1e-4, "limit": 1e-5, "passed": false},
                    "margin": 10.0}],
                  "seconds": 1.0}
                ]
                """);
        // A line replaced after three context lines: native/cuda/sinks_attn.cu:85.
        write(Path.of("mutants", "catalog", "18-window-off-by-one.patch"), """
                # id: 18-window-off-by-one
                # claims: U1, U5
                # breaks: W+1 keys
                # origin: o
                diff --git a/native/cuda/sinks_attn.cu b/native/cuda/sinks_attn.cu
                index 1111111..2222222 100644
                --- a/native/cuda/sinks_attn.cu
                +++ b/native/cuda/sinks_attn.cu
                @@ -82,7 +82,7 @@ __device__ void sinks_rows(
                         __syncthreads();
                \s
                         const long long key = c0 + kk;
                -        const bool admitted = key >= diag - window + 1;
                +        const bool admitted = key >= diag - window;
                         float s = NEG_INF;
                """);
        // Lines inserted after three context lines (a second hunk and file after it): ScalarLanes.java:84.
        write(Path.of("mutants", "catalog", "20-sink-in-numerator.patch"), """
                # id: 20-sink-in-numerator
                # claims: U5, U8
                diff --git a/system-under-test/src/main/java/io/attnproof/attention/dsv4/ScalarLanes.java b/system-under-test/src/main/java/io/attnproof/attention/dsv4/ScalarLanes.java
                --- a/system-under-test/src/main/java/io/attnproof/attention/dsv4/ScalarLanes.java
                +++ b/system-under-test/src/main/java/io/attnproof/attention/dsv4/ScalarLanes.java
                @@ -81,6 +81,9 @@ final class ScalarLanes extends UnionLanes {
                                     s.p[i] = p;
                                     l = l + p;
                                 }
                +                for (int i = 0; i < tn; i++) {
                +                    s.p[i] += sink;
                +                }
                                 for (int e = 0; e < d; e++) {
                @@ -120,3 +123,3 @@
                -                x
                +                y
                diff --git a/native/cuda/sinks_attn.cu b/native/cuda/sinks_attn.cu
                --- a/native/cuda/sinks_attn.cu
                +++ b/native/cuda/sinks_attn.cu
                @@ -1,1 +1,1 @@
                -a
                +b
                """);
        return dir;
    }

    private static ClaimMutants claim(Ledger l, String id) {
        return l.perClaim().stream().filter(c -> c.claim().equals(id)).findFirst().orElseThrow();
    }

    private static List<Integer> lines(List<ClaimMutants.PitKill> kills) {
        return kills.stream().map(k -> k.mutation().line()).toList();
    }

    // ------------------------------------------------------------------ the join

    @Test
    void aClaimIsCreditedExactlyTheKillsOfItsOwnTestMethods() throws IOException {
        Ledger l = Ledger.build(repository(false), List.of());
        assertEquals(ClaimId.values().length, l.perClaim().size(), "one section per catalog claim");
        assertEquals(List.of(ClaimId.values()).stream().map(Enum::name).toList(),
                l.perClaim().stream().map(ClaimMutants::claim).toList(), "catalog order");
        ClaimMutants u1 = claim(l, "U1");
        assertEquals(List.of("RawWindowTest#boundaries", "RawWindowTest#edges"), u1.tests(),
                "distinct Class#method of its evidence, parameter lists cut");
        assertEquals(List.of(18, 20), lines(u1.pitKilled()));
        assertEquals(List.of("RawWindowTest#edges"), u1.pitKilled().get(1).by(), "a template invocation is its method");
        assertEquals(List.of(40), lines(claim(l, "U5").pitKilled()));

        // Negative case: UnionMask:22 is killed by RawWindowTest#notAClaimTest, a method of U1's own test class
        // that no evidence line names. It is in the report, killed, and credited to no claim.
        PitReport.Mutation m22 = l.pit().all().stream().filter(m -> m.line() == 22).findFirst().orElseThrow();
        assertEquals("KILLED", m22.status());
        assertEquals(PKG + "mask.RawWindowTest#notAClaimTest", ClaimMutants.pitTest(m22.killingTests().getFirst()));
        assertTrue(u1.tests().stream().anyMatch(t -> t.startsWith("RawWindowTest#")), "same test class as U1's");
        for (ClaimMutants c : l.perClaim()) {
            assertTrue(!lines(c.pitKilled()).contains(22), c.claim() + " was credited a kill of a method not its own");
        }
        assertEquals(3, l.perClaim().stream().mapToInt(c -> c.pitKilled().size()).sum());
        assertEquals(3, ClaimMutants.attributed(l.perClaim()), "UnionMask:18, :20 and SoftmaxWithSinks:40");
        assertEquals(4, l.pit().killed());
        assertEquals(List.of(), claim(l, "U2").pitKilled(), "a claim without evidence has no tests, so no kills");
    }

    @Test
    void coveredSurvivorsCarryTheirVerdictAndUntriagedOnesAreFlagged() throws IOException {
        Ledger l = Ledger.build(repository(false), List.of());
        ClaimMutants u1 = claim(l, "U1");
        assertTrue(u1.coverage().startsWith("pit/test-scope.tsv"), u1.coverage());
        assertEquals(List.of(PKG + "mask.UnionMask", PKG + "mask.UnionMaskMemo"), u1.coveredClasses());
        assertEquals(List.of("UnionMaskMemo:61", "UnionMask:30"), u1.open().stream()
                .map(o -> o.clazz().substring(o.clazz().lastIndexOf('.') + 1) + ":" + o.line()).toList(),
                "untriaged first");
        assertNull(u1.open().get(0).verdict());
        assertEquals("equivalent", u1.open().get(1).verdict());
        assertEquals(1, u1.untriaged());
        ClaimMutants u5 = claim(l, "U5");
        assertEquals(List.of(PKG + "mask.UnionMaskMemo", PKG + "sinks.SoftmaxWithSinks"), u5.coveredClasses());
        assertEquals(2, u5.untriaged());
        assertTrue(u5.open().stream().noneMatch(o -> o.clazz().endsWith("UnionMask")),
                "UnionMask's survivor is outside U5's classes");
        assertTrue(u5.open().stream().noneMatch(o -> o.clazz().contains("Dsv4Attention")),
                "without the full matrix the test scope decides, and it does not list Dsv4Attention");
    }

    @Test
    void theFullMutationMatrixIsPreferredAndCreditsEveryKillingTest() throws IOException {
        repository(true);
        // Under the matrix, a mutation killed by two tests of two claims is credited to both.
        String xml = Files.readString(dir.resolve(Ledger.PIT)).replace("</mutations>",
                mutation("KILLED", "sinks.SoftmaxWithSinks", "apply", 48, "MathMutator", null,
                        "<killingTests>" + junit5("mask.RawWindowTest", "boundaries", false) + "|"
                                + junit5("dsv4.UnionOracleTest", "matches", false) + "</killingTests><succeedingTests/>")
                        + "</mutations>");
        Files.writeString(dir.resolve(Ledger.PIT), xml);
        Ledger l = Ledger.build(dir, List.of());
        assertTrue(l.pit().matrix());
        ClaimMutants u1 = claim(l, "U1");
        ClaimMutants u5 = claim(l, "U5");
        assertTrue(u5.coverage().startsWith("PIT's full mutation matrix"), u5.coverage());
        assertEquals(List.of(18, 20, 48), lines(u1.pitKilled()));
        assertEquals(List.of(40, 48), lines(u5.pitKilled()));
        // The matrix puts U5's test on Dsv4Attention$Step (the test scope does not) and no U5 test on
        // UnionMaskMemo (the test scope does): the matrix wins both ways.
        assertEquals(List.of(PKG + "dsv4.Dsv4Attention$Step", PKG + "sinks.SoftmaxWithSinks"), u5.coveredClasses());
        assertEquals("system-under-test/src/main/java/io/attnproof/attention/dsv4/Dsv4Attention.java:90",
                u5.open().stream().filter(o -> o.line() == 90).findFirst().orElseThrow().source());
        assertEquals(List.of(PKG + "mask.UnionMask", PKG + "sinks.SoftmaxWithSinks"), u1.coveredClasses(),
                "U1 covers SoftmaxWithSinks by its kill of :48; UnionMaskMemo no more (no matrix test of U1 on it)");
    }

    // ------------------------------------------------------------------ curated mutants and their source lines

    @Test
    void theKillMatrixRowMarksDecisiveKillsApartWithTheLineEachPatchChanges() throws IOException {
        Ledger l = Ledger.build(repository(false), List.of());
        MutantReport.Mutant m18 = l.mutants().byId().get("18-window-off-by-one");
        assertEquals("native/cuda/sinks_attn.cu:85", m18.source(), "a replaced line: the '-' line's number");
        assertEquals("system-under-test/src/main/java/io/attnproof/attention/dsv4/ScalarLanes.java:84",
                l.mutants().byId().get("20-sink-in-numerator").source(), "an insertion: the line it goes before");
        assertEquals(List.of(new ClaimMutants.Curated("18-window-off-by-one", 50.0, true, m18.source())),
                claim(l, "U1").curated());
        List<ClaimMutants.Curated> u5 = claim(l, "U5").curated();
        assertEquals(List.of("20-sink-in-numerator", "18-window-off-by-one"),
                u5.stream().map(ClaimMutants.Curated::id).toList(), "decisive kills first");
        assertTrue(u5.get(0).decisive() && !u5.get(1).decisive(), u5.toString());
        assertEquals(List.of("20-sink-in-numerator"), claim(l, "U8").aimed(), "names U8, fails none of its lines");
    }

    @Test
    void patchLinesFromHunkHeaders() throws IOException {
        assertEquals("a/b.c:10", PatchLine.of(List.of("--- a/a/b.c", "+++ b/a/b.c", "@@ -10 +10 @@", "-x", "+y"), "p",
                null));
        assertEquals("new.txt:1", PatchLine.of(List.of("--- /dev/null", "+++ b/new.txt", "@@ -0,0 +1,2 @@", "+x"), "p",
                null));
        assertEquals("gone.txt:1", PatchLine.of(List.of("--- a/gone.txt", "+++ /dev/null", "@@ -1,2 +0,0 @@", "-x"), "p",
                null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PatchLine.of(List.of("# id: x", "no diff here"), "mutants/catalog/x.patch", null));
        assertTrue(e.getMessage().startsWith("mutants/catalog/x.patch: no file header"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> PatchLine.of(List.of("--- a/f", "+++ b/f", "@@ -3,2 +3,2 @@", " a", " b"), "p.patch", null));
        assertTrue(e.getMessage().contains("p.patch:3: the first hunk changes no line"), e.getMessage());

        // The code moved 3 lines down since the patch was written: the link follows it, as git apply's offset does.
        write(Path.of("src", "f.c"), "1\n2\n3\n4\n5\nctx\nold\nafter\n");
        List<String> patch = List.of("--- a/src/f.c", "+++ b/src/f.c", "@@ -3,3 +3,3 @@", " ctx", "-old", "+new",
                " after");
        assertEquals("src/f.c:4", PatchLine.of(patch, "p", null), "the header alone");
        assertEquals("src/f.c:7", PatchLine.of(patch, "p", dir), "the old lines found 3 lines further down");
        write(Path.of("src", "f.c"), "1\n2\nctx\nrewritten\nafter\n");
        assertEquals("src/f.c:4", PatchLine.of(patch, "p", dir), "old lines nowhere: the header's line");
    }

    @Test
    void pitTestNames() {
        assertEquals("io.x.FooTest#bar", ClaimMutants.pitTest(
                "io.x.FooTest.[engine:junit-jupiter]/[class:io.x.FooTest]/[method:bar(int[], java.lang.String)]"));
        assertEquals("io.x.FooTest#bar", ClaimMutants.pitTest("io.x.FooTest.[engine:junit-jupiter]/[class:io.x.FooTest]"
                + "/[test-template:bar(int)]/[test-template-invocation:#6]"));
        assertEquals("io.x.FooTest$Inner#baz", ClaimMutants.pitTest("io.x.FooTest.[engine:junit-jupiter]/"
                + "[class:io.x.FooTest]/[nested-class:Inner]/[method:baz()]"));
        assertEquals("io.x.FooTest#bar", ClaimMutants.pitTest("io.x.FooTest.bar(io.x.FooTest)"));
        assertNull(ClaimMutants.pitTest("io.x.FooTest.[engine:junit-jupiter]/[class:io.x.FooTest]"));
        assertEquals("FooTest#bar", ClaimMutants.claimTest("FooTest#bar(int, int)[3] metal-emu"));
        assertNull(ClaimMutants.claimTest("no method"));
    }

    // ------------------------------------------------------------------ the rendered ledger

    @Test
    void markdownHtmlAndJsonLinkEveryEntryToItsSourceLine() throws IOException {
        LedgerWriter.Written w = LedgerWriter.write(Ledger.build(repository(false), List.of()), dir.resolve("out"));
        String md = Files.readString(w.markdown());
        String html = Files.readString(w.html());
        assertTrue(md.contains("Of PIT's 4 killed mutations, 3 are killed by a claim's test;"), md);
        String u1md = md.substring(md.indexOf("### U1 — "), md.indexOf("### U2 — "));
        assertTrue(u1md.contains("**decisive** 18-window-off-by-one 50.0× [`native/cuda/sinks_attn.cu:85`]"
                + "(../../../native/cuda/sinks_attn.cu#L85)"), u1md);
        assertTrue(u1md.contains("- PIT mutations its tests kill: 2\n  - [`" + SRC + "mask/UnionMask.java:18`](../../../"
                + SRC + "mask/UnionMask.java#L18) UnionMask.<init> ConditionalsBoundaryMutator (KILLED)"), u1md);
        assertTrue(u1md.contains("  - ⚑ [`" + SRC + "mask/UnionMaskMemo.java:61`]"), u1md);
        assertTrue(u1md.contains("**equivalent**: at j == p both sides admit"), u1md);
        assertTrue(u1md.contains(": 2, 1 untriaged ⚑"), u1md);
        // The mutants table and the kill matrix link each curated mutant too.
        assertTrue(md.contains("| 18-window-off-by-one | [`native/cuda/sinks_attn.cu:85`](../../../native/cuda/"
                + "sinks_attn.cu#L85) | killed |"), md);

        String u1 = html.substring(html.indexOf("<section class=\"claim-mutants\" id=\"claim-mutants-U1\""));
        u1 = u1.substring(0, u1.indexOf("</section>"));
        assertTrue(u1.contains("<tr class=\"decisive\" data-mutant=\"18-window-off-by-one\">"), u1);
        assertTrue(u1.contains("<a class=\"src\" href=\"../../../native/cuda/sinks_attn.cu#L85\""), u1);
        assertTrue(u1.contains("<details class=\"pit-killed\"><summary>2 PIT mutations killed by its tests</summary>"), u1);
        assertTrue(u1.contains("<a class=\"src\" href=\"../../../" + SRC + "mask/UnionMask.java#L20\""), u1);
        assertTrue(u1.contains("<details class=\"pit-open\" open><summary>2 open PIT mutations in the 2 classes it"
                + " covers, 1 untriaged ⚑</summary>"), u1);
        assertTrue(u1.contains("<li class=\"untriaged\">⚑ <a class=\"src\" href=\"../../../" + SRC
                + "mask/UnionMaskMemo.java#L61\""), u1);
        String u5 = html.substring(html.indexOf("id=\"claim-mutants-U5\""));
        u5 = u5.substring(0, u5.indexOf("</section>"));
        assertTrue(u5.contains("<tr class=\"other\" data-mutant=\"18-window-off-by-one\">"), u5);
        assertTrue(html.contains("<tr class=\"killed\" id=\"mutant-20-sink-in-numerator\"><td>20-sink-in-numerator</td>"
                + "<td><a class=\"src\" href=\"../../../" + SRC + "dsv4/ScalarLanes.java#L84\""), html);
        // Every href of a source link names a file of the repository root with its line.
        Matcher a = Pattern.compile("<a class=\"src\" href=\"\\.\\./\\.\\./\\.\\./([^\"#]+)#L(\\d+)\" title=\"([^\"]+)\"")
                .matcher(html);
        int links = 0;
        while (a.find()) {
            assertEquals(a.group(1) + ":" + a.group(2), a.group(3));
            links++;
        }
        assertTrue(links >= 12, "source links found: " + links);

        Map<String, Object> json = JsonTrees.parseObject(Files.readString(w.json()));
        List<?> perClaim = (List<?>) json.get("per_claim");
        Map<?, ?> u1json = (Map<?, ?>) perClaim.getFirst();
        assertEquals("U1", u1json.get("claim"));
        Map<?, ?> killed = (Map<?, ?>) u1json.get("pit_killed");
        assertEquals(2.0, JsonTrees.toDouble(killed.get("count")));
        assertEquals(SRC + "mask/UnionMask.java:18", ((Map<?, ?>) ((List<?>) killed.get("mutations")).getFirst())
                .get("source"));
        List<String> verdicts = new ArrayList<>();
        for (Object o : (List<?>) u1json.get("open")) {
            verdicts.add((String) ((Map<?, ?>) o).get("verdict"));
        }
        assertEquals(List.of("untriaged", "equivalent"), verdicts);
        Map<?, ?> curated = (Map<?, ?>) ((List<?>) u1json.get("curated")).getFirst();
        assertEquals("native/cuda/sinks_attn.cu:85", curated.get("source"));
        assertEquals(Boolean.TRUE, curated.get("decisive"));
        Map<?, ?> mutant = (Map<?, ?>) ((List<?>) ((Map<?, ?>) json.get("mutants")).get("mutants")).getFirst();
        assertEquals("native/cuda/sinks_attn.cu:85", mutant.get("source"));
    }

    @Test
    void withoutCampaignOrPitEachClaimSaysNotRunRatherThanNone() {
        Ledger l = Ledger.build(LedgerFixture.root(dir, false, false), List.of());
        String md = MarkdownLedger.ledger(l);
        String u5 = md.substring(md.indexOf("### U5 — "), md.indexOf("### U6 — "));
        assertTrue(u5.contains("- tests (1): `UnionOracleTest#matches`\n- curated mutants it kills: not run (no "
                + Ledger.MUTANTS + ")\n- PIT: not run (no " + Ledger.PIT + ")"), u5);
        String html = HtmlLedger.ledger(l);
        assertTrue(html.contains("<p class=\"pit\">PIT: not run (no " + Ledger.PIT + ")</p>"), html);
    }

    // ------------------------------------------------------------------ smoke: an excerpt of a real PIT run

    @Test
    void aRealPitExcerptJoinsWithoutASecondParser() throws IOException {
        Path repo = Path.of("").toAbsolutePath();
        while (repo != null && !Files.isRegularFile(repo.resolve(ClaimMutants.TEST_SCOPE))) {
            repo = repo.getParent();
        }
        assertNotNull(repo, ClaimMutants.TEST_SCOPE + " above " + Path.of("").toAbsolutePath());
        // Nine mutations copied from a whole-module run (the full reports are CI artifacts, not committed).
        Path xml = dir.resolve("pit-claims-excerpt.xml");
        try (java.io.InputStream in = ClaimMutantsTest.class.getResourceAsStream("/ledger/pit-claims-excerpt.xml")) {
            Files.copy(in, xml);
        }
        String text = Files.readString(xml);
        PitReport pit = PitReport.read(xml, null);
        int mutationElements = count(text, "<mutation ");
        assertEquals(mutationElements, pit.all().size());
        assertEquals(pit.mutations(), pit.all().size());
        for (PitReport.Mutation m : pit.all()) {
            assertTrue(m.source().matches("system-under-test/src/main/java/io/attnproof/attention/[a-z0-9/]+/"
                    + "[A-Za-z0-9]+\\.java:[1-9][0-9]*"), m.source());
        }
        // Two claims whose tests kill many mutations there: a plain method and a test template.
        String localMinus = "CallerMaskTest#localMinusInfinityWins";
        String deadPrefix = "RaggedCohortTest#aRaggedDecodeNeverAttendsTheDeadPrefix";
        List<EvidenceLine> lines = List.of(line("U4", localMinus + "(Evidence)"), line("R9", deadPrefix));
        Map<String, List<String>> scope = ClaimMutants.readTestScope(repo.resolve(ClaimMutants.TEST_SCOPE));
        List<ClaimMutants> claims = ClaimMutants.of(lines, null, pit, scope);
        ClaimMutants u4 = claims.stream().filter(c -> c.claim().equals("U4")).findFirst().orElseThrow();
        ClaimMutants r9 = claims.stream().filter(c -> c.claim().equals("R9")).findFirst().orElseThrow();
        // The expected counts straight from the XML text: killingTest elements naming each method.
        int u4Expected = count(text, "[method:localMinusInfinityWins(");
        int r9Expected = count(text, "[test-template:aRaggedDecodeNeverAttendsTheDeadPrefix(");
        assertTrue(u4Expected > 0 && r9Expected > 0, "degenerate baseline: " + u4Expected + ", " + r9Expected);
        assertEquals(u4Expected, u4.pitKilled().size());
        assertEquals(r9Expected, r9.pitKilled().size());
        assertTrue(u4.coveredClasses().contains("io.attnproof.attention.mask.CallerMasks"), u4.coveredClasses().toString());
        assertEquals(0, claims.stream().filter(c -> !c.claim().equals("U4") && !c.claim().equals("R9"))
                .mapToInt(c -> c.pitKilled().size()).sum(), "claims without tests are credited nothing");
        String html = HtmlLedger.perClaim(claims, pit, null);
        assertEquals(u4Expected + r9Expected + claims.stream().mapToInt(c -> c.open().size()).sum(),
                count(html, "<li") , "one list entry per kill and per covered open mutation");
    }

    private static EvidenceLine line(String claim, String test) {
        return EvidenceLine.parse(evidence(claim, test), "smoke:1");
    }

    private static int count(String text, String needle) {
        int n = 0;
        for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
            n++;
        }
        return n;
    }
}
