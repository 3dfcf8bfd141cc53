package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cases.CaseException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code manifest.json} as read, from hand-built manifests: an output shape is 4 positive integers; a pair compares
 * slices of equal element counts whatever their shapes (and may slice either side); a slice is a non-empty
 * {@code [from, to)} inside its case's extent, up to the extent itself; an oracle check's slice is refused naming the
 * axis sliced.
 */
class ManifestReadRulesTest {
    @TempDir
    Path dir;

    private static Manifest.Entry entry(String id, int... shape) {
        return new Manifest.Entry(id, "V1", "union", "F32", 7, "cases/" + id + "/case.json", shape, "d");
    }

    private static CheckSpec pair(String id, CheckSpec.Sel a, CheckSpec.Sel b) {
        return new CheckSpec(id, "V1", "same-bits", "pass", a, b, null, "n");
    }

    private static CheckSpec.Sel all(String id) {
        return new CheckSpec.Sel(id, -1, -1, -1, -1);
    }

    private Manifest roundTrip(List<Manifest.Entry> cases, List<CheckSpec> checks) throws IOException {
        Manifest m = new Manifest(13, "small", cases, checks);
        Path c = Files.createDirectories(dir.resolve("c" + System.nanoTime()));
        Files.writeString(c.resolve(Manifest.FILE), m.toJson());
        Manifest back = Manifest.read(c);
        assertEquals(m.toJson(), back.toJson(), "read gives back what was written");
        return back;
    }

    private void refused(List<Manifest.Entry> cases, List<CheckSpec> checks, String field, String detail) {
        CaseException e = assertThrows(CaseException.class, () -> roundTrip(cases, checks));
        assertEquals(field, e.field(), e.getMessage());
        assertTrue(e.getMessage().endsWith("\"" + field + "\": " + detail), e.getMessage());
    }

    @Test
    void anOutputShapeIsFourPositiveIntegers() {
        refused(List.of(entry("A", 1, 0, 4, 8)), List.of(), "cases[A].output_shape",
                "[1, 0, 4, 8] must be 4 positive integers [B, H, T, D]");
    }

    @Test
    void aPairComparesSlicesOfEqualElementCountsWhateverTheirShapes() throws IOException {
        // 4 x 1 x 2 x 16 = 1 x 4 x 4 x 8 = 128 elements, with every axis different.
        Manifest m = roundTrip(List.of(entry("A", 4, 1, 2, 16), entry("B", 1, 4, 4, 8)),
                List.of(pair("same", all("A"), all("B"))));
        assertEquals(1, m.checks().size());
        refused(List.of(entry("A", 2, 1, 2, 16), entry("B", 1, 4, 4, 8)), List.of(pair("same", all("A"), all("B"))),
                "checks[same].b", "the slices of A and B hold 64 and 128 elements: a pair compares equal slices");
    }

    @Test
    void eitherSideOfAPairMaySliceUpToItsExtentButNotToNothing() throws IOException {
        List<Manifest.Entry> cases = List.of(entry("A", 2, 2, 4, 8), entry("B", 1, 2, 4, 8), entry("C", 1, 2, 1, 8));
        // b sliced: batch row 1 of A, up to A's batch extent 2; query row 3, up to A's query extent 4.
        Manifest m = roundTrip(cases, List.of(pair("b-sliced", all("B"), new CheckSpec.Sel("A", 1, 2, -1, -1)),
                pair("r-sliced", all("C"), new CheckSpec.Sel("B", -1, -1, 3, 4))));
        assertEquals(new CheckSpec.Sel("A", 1, 2, -1, -1), m.checks().get(0).b());
        assertEquals(new CheckSpec.Sel("B", -1, -1, 3, 4), m.checks().get(1).b());
        refused(cases, List.of(pair("empty", new CheckSpec.Sel("A", 1, 1, -1, -1), all("B"))), "checks[empty].a.b",
                "[1, 1] must be [from, to) with 0 <= from < to <= 2, the batch extent of case A's output_shape"
                        + " [2, 2, 4, 8]");
    }

    @Test
    void anOracleCheckSliceIsRefusedNamingTheAxisSliced() {
        List<Manifest.Entry> cases = List.of(entry("A", 2, 2, 4, 8));
        String detail = "an oracle or degenerate check judges the whole output: slices are for same-bits and"
                + " same-within-rule";
        refused(cases, List.of(new CheckSpec("rows", "V1", "oracle", "pass", new CheckSpec.Sel("A", -1, -1, 0, 1), null,
                null, "n")), "checks[rows].a.r", detail);
        refused(cases, List.of(new CheckSpec("batch", "V1", "oracle", "pass", new CheckSpec.Sel("A", 0, 1, -1, -1),
                null, null, "n")), "checks[batch].a.b", detail);
    }
}
