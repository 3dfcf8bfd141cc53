package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's list of the emulator's detection paths: a path is proven only by a killed curated mutant whose catalog
 * header names it ({@code # detects:}), a survivor or no mutant leaves it flagged, an unknown key is refused.
 */
class DetectionPathsTest {

    @TempDir
    Path dir;

    private static final String DIFF = """
            diff --git a/native/emu/emu_check.h b/native/emu/emu_check.h
            --- a/native/emu/emu_check.h
            +++ b/native/emu/emu_check.h
            @@ -1,1 +1,1 @@
            -a
            +b
            """;

    private void patch(String id, String detects) throws IOException {
        Path p = dir.resolve("mutants/catalog/" + id + ".patch");
        Files.createDirectories(p.getParent());
        Files.writeString(p, "# id: " + id + "\n# claims: N1\n# breaks: b\n# origin: o\n"
                + (detects == null ? "" : "# detects: " + detects + "\n") + DIFF, StandardCharsets.UTF_8);
    }

    private MutantReport report(String... idStatus) throws IOException {
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < idStatus.length; i += 2) {
            json.append(i == 0 ? "" : ",").append("{\"id\":\"").append(idStatus[i]).append("\",\"claims\":[\"N1\"],")
                    .append("\"status\":\"").append(idStatus[i + 1]).append("\",\"killers\":[],\"values\":[]}");
        }
        Path file = dir.resolve("results.json");
        Files.writeString(file, json.append(']').toString(), StandardCharsets.UTF_8);
        return MutantReport.read(file, dir);
    }

    @Test
    void aCatalogMutantTheRunDidNotHoldIsListedAsNotInThisRunAndProvesNothing() throws IOException {
        patch("117-waw-missed", "race.write-after-write");
        patch("116-reads-dropped", "race.read-after-write");
        patch("18-window", null);
        MutantReport r = report("116-reads-dropped", "killed");
        assertEquals(Map.of("117-waw-missed", List.of("race.write-after-write")), r.notRunDetects());
        DetectionPaths.Path waw = DetectionPaths.of("race.write-after-write");
        assertEquals("117-waw-missed (not in this run)", DetectionPaths.cell(DetectionPaths.byPath(r).get(waw),
                DetectionPaths.notRun(r, waw)));
        assertEquals(List.of("race.write-after-write", "race.write-after-read", "bounds.global", "bounds.shared",
                "launch.limits", "barrier.deadlock", "barrier.block-scope", "warp.misuse"), DetectionPaths.unproven(r));
        assertTrue(MarkdownLedger.detectionPaths(r).contains("| race.write-after-write | race checker | "), "row");
        assertTrue(MarkdownLedger.detectionPaths(r).contains(" | 117-waw-missed (not in this run) | ⚑ no |"),
                MarkdownLedger.detectionPaths(r));
        DetectionPaths.Path raw = DetectionPaths.of("race.read-after-write");
        assertEquals("116-reads-dropped (killed)", DetectionPaths.cell(DetectionPaths.byPath(r).get(raw),
                DetectionPaths.notRun(r, raw)));
    }

    @Test
    void aPathIsProvenOnlyByAKilledMutantThatNamesIt() throws IOException {
        patch("116-reads-dropped", "race.read-after-write, race.write-after-read");
        patch("48-barrier-removed", "race.read-after-write");
        patch("87-deadlock", "barrier.deadlock");
        patch("18-window", null);
        MutantReport r = report("116-reads-dropped", "killed", "48-barrier-removed", "survived", "87-deadlock",
                "survived", "18-window", "killed");
        assertEquals(List.of("race.read-after-write", "race.write-after-read"),
                r.byId().get("116-reads-dropped").detects());
        assertEquals(List.of(), r.byId().get("18-window").detects(), "a header without detects names no path");
        Map<DetectionPaths.Path, List<MutantReport.Mutant>> by = DetectionPaths.byPath(r);
        assertEquals(DetectionPaths.ALL, List.copyOf(by.keySet()), "every path, in the catalog order");
        assertEquals("116-reads-dropped (killed), 48-barrier-removed (survived)",
                DetectionPaths.cell(by.get(DetectionPaths.of("race.read-after-write"))));
        assertEquals("none", DetectionPaths.cell(by.get(DetectionPaths.of("bounds.shared"))));
        // Proven: the two read paths (116 killed). Not: the survivor's deadlock path and every path nobody names.
        List<String> expected = DetectionPaths.ALL.stream().map(DetectionPaths.Path::key)
                .filter(k -> !k.equals("race.read-after-write") && !k.equals("race.write-after-read")).toList();
        assertEquals(expected, DetectionPaths.unproven(r));
        assertTrue(expected.contains("barrier.deadlock"), "a survivor proves nothing");
    }

    @Test
    void theLedgerListsEveryPathWithItsMutantsAndFlagsTheUnproven() throws IOException {
        patch("116-reads-dropped", "race.read-after-write");
        patch("87-deadlock", "barrier.deadlock");
        MutantReport r = report("116-reads-dropped", "killed", "87-deadlock", "survived");
        String md = MarkdownLedger.detectionPaths(r);
        assertTrue(md.contains("| race.read-after-write | race checker | "), md);
        assertTrue(md.contains(" | 116-reads-dropped (killed) | yes |\n"), md);
        assertTrue(md.contains(" | 87-deadlock (survived) | ⚑ no |\n"), md);
        assertTrue(md.contains("| warp.misuse | scheduler (fibers) | "), md);
        assertTrue(md.contains(" | none | ⚑ no |\n"), md);
        assertEquals(DetectionPaths.ALL.size(), md.lines().filter(l -> l.startsWith("| ") && !l.startsWith("| path"))
                .count(), "one row per path");
        assertTrue(md.contains("Paths no killed curated mutant proves: race.write-after-write, race.write-after-read,"),
                md);
    }

    @Test
    void anUnknownPathIsRefusedNamingThePatchAndTheKey() throws IOException {
        patch("99-x", "race.read-after-write, race.sideways");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> report("99-x", "killed"));
        assertTrue(e.getMessage().contains("mutants/catalog/99-x.patch: detects = \"race.sideways\" must be one of"
                + " [race.write-after-write, "), e.getMessage());
    }

    /** Every {@code # detects:} line of the real catalog names known paths (the ledger would refuse it otherwise). */
    @Test
    void theCatalogsDetectsHeadersNameKnownPaths() throws IOException {
        Path catalog = Path.of(System.getProperty("user.dir")).resolve("../mutants/catalog").normalize();
        List<Path> patches;
        try (Stream<Path> s = Files.list(catalog)) {
            patches = s.filter(p -> p.toString().endsWith(".patch")).sorted().toList();
        }
        assertTrue(patches.size() > 100, "the catalog at " + catalog);
        long naming = 0;
        for (Path p : patches) {
            naming += MutantReport.detects(Files.readAllLines(p, StandardCharsets.UTF_8), p.toString()).isEmpty() ? 0 : 1;
        }
        assertTrue(naming >= 8, naming + " catalog mutants name a detection path");
    }
}
