package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's verdicts on a curated mutant, at their edges: which failing line is decisive (a degeneracy line never;
 * the first of equal margins), the 2× flag and the kill matrix's teeth exactly at 2×, the kill cells, the summary's
 * counts and the order of the mutants read back.
 */
class MutantVerdictTest {

    @TempDir
    Path dir;

    private static MutantReport.Value line(String claim, String kind, String metric, boolean mutantPassed,
            double margin) {
        return new MutantReport.Value(claim, kind, metric, "T#" + metric, new MutantReport.Side(0, 1, true),
                new MutantReport.Side(5, 1, mutantPassed), margin);
    }

    private static MutantReport.Mutant mutant(String id, String status, List<String> claims,
            MutantReport.Value... values) {
        return new MutantReport.Mutant(id, claims, "b", "o", status, List.of(), List.of(values), 1.0,
                "mutants/catalog/" + id + ".patch", null, "no patch", List.of());
    }

    @Test
    void aDegeneracyLineOrAPassingLineIsNeverDecisive() {
        MutantReport.Mutant m = mutant("1-deg", "killed", List.of("U1"),
                line("U1", "degeneracy", "cells", false, 50.0), line("U1", "check", "err", true, 40.0));
        assertNull(m.decisive(), "killed only by a degeneracy line: no decisive line");
        assertTrue(Double.isNaN(m.killMargin()));
        assertTrue(m.flagged(), "a kill without a decisive line is flagged");
        assertFalse(line("U1", "degeneracy", "x", false, 9.0).decisive());
        assertTrue(line("U1", "control", "control_gap:x", false, 9.0).decisive());
        assertFalse(line("U1", "check", "x", false, Double.NaN).decisive(), "a NaN margin is no decisive line");
    }

    @Test
    void ofEqualMarginsTheFirstLineIsDecisiveAndAMarginOfExactlyTwoIsNotFlagged() {
        MutantReport.Mutant m = mutant("2-tie", "killed", List.of("U1"),
                line("U1", "check", "first", false, 2.0), line("U1", "control", "control_gap:second", false, 2.0),
                line("U5", "check", "other-claim", false, 90.0));
        assertEquals("first", m.decisive().metric(), "a tie keeps the first line; a line of another claim is not"
                + " the mutant's decisive line");
        assertEquals(2.0, m.killMargin());
        assertFalse(m.flagged(), "2× is the flag's bar itself: not below it");
        assertEquals("first", m.strongest("U1").metric(), "strongest keeps the first of equal margins too");
        assertEquals("other-claim", m.strongest("U5").metric());
        assertNull(m.strongest("S1"));
        MutantReport.Mutant weak = mutant("3-weak", "killed", List.of("U1"), line("U1", "check", "w", false, 1.99));
        assertTrue(weak.flagged());
        MutantReport.Mutant alive = mutant("4-alive", "survived", List.of("U1"));
        assertFalse(alive.flagged(), "only a kill is flagged");
    }

    @Test
    void aClaimsCuratedKillIsFlaggedBelowTwoOrWithoutAMargin() {
        assertFalse(new ClaimMutants.Curated("a", 2.0, true, null).flagged(), "exactly 2x is not below 2x");
        assertTrue(new ClaimMutants.Curated("a", 1.99, true, null).flagged());
        assertTrue(new ClaimMutants.Curated("a", Double.NaN, false, null).flagged());
    }

    @Test
    void theKillMatrixKeepsEachClaimsStrongestLineAndAClaimHasTeethAtTwo() {
        MutantReport r = new MutantReport(dir.resolve("results.json"), List.of(
                mutant("18-a", "killed", List.of("U1"), line("U1", "check", "weak", false, 3.0),
                        line("U1", "check", "strong", false, 7.0), line("U5", "check", "u5", false, 2.0)),
                mutant("19-b", "survived", List.of("U2"), line("U2", "check", "x", false, 50.0)),
                mutant("20-c", "killed", List.of("U3"), line("U3", "check", "x", false, 1.5))));
        Map<String, Map<String, Double>> matrix = r.killMatrix();
        assertEquals(Map.of("18-a", 7.0), matrix.get("U1"), "the strongest line of the claim");
        assertEquals(Map.of("18-a", 2.0), matrix.get("U5"));
        assertNull(matrix.get("U2"), "a survivor is in no cell");
        List<String> toothless = r.claimsWithoutTeeth();
        assertFalse(toothless.contains("U1"));
        assertFalse(toothless.contains("U5"), "a margin of exactly 2× is teeth");
        assertTrue(toothless.contains("U3"), "1.5× is below the bar");
        assertTrue(toothless.contains("U2"));
        assertFalse(toothless.stream().anyMatch(c -> c.startsWith("P")), "the bench judges the P family");
        assertEquals("<18-a 7.00×>, <20-c 1.50× ⚑>", r.killCells(new java.util.TreeMap<>(Map.of("18-a", 7.0,
                "20-c", 1.5)), s -> "<" + s + ">", s -> "link"),
                "a cell per mutant with its margin, ⚑ below 2×, escaped; no link without a source line");
        MutantReport linked = new MutantReport(dir.resolve("results.json"), List.of(new MutantReport.Mutant("21-d",
                List.of("U1"), "b", "o", "killed", List.of(), List.of(), 1.0, "p", "x/Y.java:3", "n", List.of())));
        assertEquals("21-d 2.00× <x/Y.java:3>", linked.killCells(Map.of("21-d", 2.0), s -> s, s -> "<" + s + ">"),
                "exactly 2× is not flagged; a mutant with a source line links it");
        assertEquals("", r.killCells(Map.of(), s -> s, s -> "x"));
    }

    @Test
    void theSummaryCountsEachStatusAndNamesTheSmallestKill() {
        MutantReport r = new MutantReport(dir.resolve("results.json"), List.of(
                mutant("1-a", "killed", List.of("U1"), line("U1", "check", "x", false, 3.0)),
                mutant("2-b", "killed", List.of("U1"), line("U1", "check", "x", false, 2.0)),
                mutant("3-c", "survived", List.of("U1"), line("U1", "check", "x", false, 1.1)),
                mutant("4-d", "stale", List.of("U1")), mutant("5-e", "odd", List.of("U1"))));
        String s = r.summary();
        assertTrue(s.startsWith("mutants: 2 of 5 killed (1 survived, 1 stale, 1 with another status);"
                + " smallest kill margin 2.00× (2-b); 0 kills below 2.00×"), "a survivor's margin is no kill's: " + s);
        String clean = new MutantReport(dir.resolve("results.json"), List.of(
                mutant("1-a", "killed", List.of("U1"), line("U1", "check", "x", false, 3.0)))).summary();
        assertTrue(clean.startsWith("mutants: 1 of 1 killed; smallest kill margin 3.00× (1-a)"), clean);
    }

    @Test
    void mutantsAreReadBackInIdOrderWithTheirSeconds() throws IOException {
        Path file = dir.resolve("results.json");
        Files.writeString(file, "[{\"id\":\"20-b\",\"status\":\"killed\",\"seconds\":2.5},"
                + "{\"id\":\"18-a\",\"status\":\"SURVIVED\",\"seconds\":1.25}]", StandardCharsets.UTF_8);
        MutantReport r = MutantReport.read(file, dir);
        assertEquals(List.of("18-a", "20-b"), r.mutants().stream().map(MutantReport.Mutant::id).toList());
        assertEquals(1.25, r.mutants().get(0).seconds());
        assertEquals("survived", r.mutants().get(0).status(), "statuses are read case-blind");
        assertEquals("no patch at mutants/catalog/18-a.patch", r.mutants().get(0).sourceNote());
        Files.writeString(file, "[{\"id\":\"1-a\",\"status\":\"killed\"}]", StandardCharsets.UTF_8);
        assertTrue(Double.isNaN(MutantReport.read(file, dir).mutants().get(0).seconds()), "no seconds: NaN, not 0");
    }
}
