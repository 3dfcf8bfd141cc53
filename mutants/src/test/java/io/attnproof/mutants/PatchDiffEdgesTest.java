package io.attnproof.mutants;

import static io.attnproof.mutants.PatchParserTest.message;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every diff-body rule of a catalog patch, each by its exact message and line (the header is lines 1-4, so a diff
 * starts on line 5), and where a hunk lands: a pure insertion at either end, a match a whole file away, the second
 * hunk placed by the first hunk's drift when its context occurs more than once, and a stale hunk's description at
 * the end of the file. Exact messages: a rule that silently let a patch through would read a different mutant.
 * Degenerate if the repeated context did not repeat: the drift test's line "r" occurs three times, so only the
 * drift-corrected position picks the right one.
 */
class PatchDiffEdgesTest {
    private static final String OK = "# id: 07-x\n# claims: R1\n# breaks: b\n# origin: o\n";
    private static final String P = PatchParserTest.P;
    private static final String C = PatchParser.CONFORMANCE_ROOT + "io/attnproof/conformance/corpus/Seal.java";
    private static final String HUNK = "@@ -3,4 +3,3 @@ class Example {\n     int a() {\n-        return 1;\n-    }\n"
            + "+        return 2; }\n }\n";

    private static Mutant parse(String text) throws Exception {
        return PatchParser.parse(Path.of("07-x.patch"), text);
    }

    private static String plain(String path) {
        return "--- a/" + path + "\n+++ b/" + path + "\n" + HUNK;
    }

    @Test
    void diffHeadersAreReadByTheirRules() throws Exception {
        assertEquals("07-x.patch:5: malformed 'diff --git a/PATH b/PATH' line",
                message("07-x.patch", OK + "diff --git a/" + P + "\n" + plain(P)));
        assertEquals("07-x.patch:5: renames are not supported (a/" + P + " -> b/" + C + ")",
                message("07-x.patch", OK + "diff --git a/" + P + " b/" + C + "\n" + plain(P)));
        assertEquals("07-x.patch:7: expected '--- a/PATH'",
                message("07-x.patch", OK + "diff --git a/" + P + " b/" + P + "\nindex 1..2 100644\n"));
        for (String mode : List.of("new file mode 100644", "deleted file mode 100644")) {
            assertEquals("07-x.patch:6: a curated mutant may not create or delete a file",
                    message("07-x.patch", OK + "diff --git a/" + P + " b/" + P + "\n" + mode + "\n" + plain(P)), mode);
        }
        assertEquals("07-x.patch:6: unexpected line in the diff header: \"similarity index 90%\"",
                message("07-x.patch", OK + "diff --git a/" + P + " b/" + P + "\nsimilarity index 90%\n" + plain(P)));
        Mutant modes = parse(OK + "diff --git a/" + P + " b/" + P + "\nold mode 100644\nnew mode 100755\nindex 1..2\n"
                + plain(P));
        assertEquals(P, modes.files().getFirst().path(), "mode and index lines are allowed");
        assertEquals("07-x.patch:7: the old and new paths differ (" + P + " vs " + P + "): renames are not supported",
                message("07-x.patch", OK + "diff --git a/" + C + " b/" + C + "\n--- a/" + P + "\n+++ b/" + P + "\n" + HUNK));
        assertEquals("07-x.patch:6: the old and new paths differ (" + P + " vs " + C + "): renames are not supported",
                message("07-x.patch", OK + "--- a/" + P + "\n+++ b/" + C + "\n" + HUNK));
        assertEquals("07-x.patch:6: expected '+++ b/PATH' after '--- a/" + P + "'",
                message("07-x.patch", OK + "--- a/" + P + "\n"));
        assertEquals("07-x.patch:7: " + P + " has no hunk (expected '@@ -START,COUNT +START,COUNT @@')",
                message("07-x.patch", OK + "--- a/" + P + "\n+++ b/" + P + "\n"));
        assertEquals(P, parse(OK + "--- a/" + P + "\t2026-01-01 00:00\n+++ b/" + P + "\t2026-01-01\n" + HUNK)
                .files().getFirst().path(), "a tab ends the path (git's timestamps)");
        assertEquals("07-x.patch:6: path \"c/" + P + "\" must start with b/ (git diff style, relative to the repository"
                + " root)", message("07-x.patch", OK + "--- a/" + P + "\n+++ c/" + P + "\n" + HUNK));
        assertTrue(message("07-x.patch", OK + plain("fixtures/src/main/java/X.java")).startsWith(
                "07-x.patch:6: path fixtures/src/main/java/X.java must be a .java file under "));
        assertEquals("07-x.patch:5: path \"\" must start with a/ (git diff style, relative to the repository root)",
                message("07-x.patch", OK + "--- \ta/" + P + "\n+++ b/" + P + "\n" + HUNK));
    }

    @Test
    void fileDiffsAreSeparatedOnlyByBlankLines() throws Exception {
        assertEquals(List.of(P, C), parse(OK + plain(P) + "\n\n" + plain(C)).files().stream()
                .map(Mutant.FilePatch::path).toList());
        String eighty = "x".repeat(80);
        assertEquals("07-x.patch:13: unexpected line between file diffs: \"" + eighty + "\" (expected 'diff --git a/..."
                + " b/...')", message("07-x.patch", OK + plain(P) + eighty + "\n"));
        assertEquals("07-x.patch:13: unexpected line between file diffs: \"" + "x".repeat(77) + "...\" (expected"
                + " 'diff --git a/... b/...')", message("07-x.patch", OK + plain(P) + eighty + "y\n"));
        assertEquals("07-x.patch:14: " + P + " is patched twice; merge its hunks into one diff",
                message("07-x.patch", OK + plain(P) + plain(P)));
        String cu = "native/cuda/sinks_attn.cu";
        assertEquals("07-x.patch:14: " + cu + ": a native mutant changes exactly one kernel source or emulator file and"
                + " nothing else (its libraries are rebuilt and run per mutant)",
                message("07-x.patch", OK + plain(P) + plain(cu)));
        assertEquals("07-x.patch:14: " + P + ": a native mutant changes exactly one kernel source or emulator file and"
                + " nothing else (its libraries are rebuilt and run per mutant)",
                message("07-x.patch", OK + plain(cu) + plain(P)));
    }

    @Test
    void hunkBodiesHoldExactlyWhatTheirHeadersPromise() throws Exception {
        String head = "--- a/" + P + "\n+++ b/" + P + "\n";
        assertEquals("07-x.patch:10: hunk at line 7 holds more lines than its header promises (1 old, 2 new)",
                message("07-x.patch", OK + head + "@@ -1,1 +1,2 @@\n-a\n+b\n c\n"));
        assertEquals("07-x.patch:7: hunk changes nothing (context lines only)",
                message("07-x.patch", OK + head + "@@ -1,2 +1,2 @@\n a\n b\n"));
        Mutant.Hunk h = parse(OK + head + "@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n"
                + "\\ No newline at end of file\n" + "@@ -5,1 +5,1 @@\n-e\n+E\n").files().getFirst().hunks().getFirst();
        assertEquals(List.of("-a", "+b"), h.lines(), "'\\ No newline' markers are skipped inside and after a hunk");
    }

    private static Mutant.FilePatch patch(String hunks) throws Exception {
        return parse(OK + "--- a/" + P + "\n+++ b/" + P + "\n" + hunks).files().getFirst();
    }

    @Test
    void hunksLandWhereTheirContextAndTheFirstHunksDriftPutThem() throws Exception {
        assertEquals("new\na\nb\n", PatchApplier.apply(patch("@@ -0,0 +1,1 @@\n+new\n"), "a\nb\n"));
        assertEquals("a\nb\nlast\n", PatchApplier.apply(patch("@@ -2,0 +3,1 @@\n+last\n"), "a\nb\n"));
        StaleException past = assertThrows(StaleException.class,
                () -> PatchApplier.apply(patch("@@ -5,0 +6,1 @@\n+z\n"), "a\nb\n"));
        assertEquals("hunk 1 of 1 (@@ -5,0 +6,1 @@) of " + P + " does not apply: its 0 context/removed lines match"
                + " nowhere in the file", past.getMessage());
        assertEquals("B\n", PatchApplier.apply(patch("@@ -2,1 +2,1 @@\n-b\n+B\n"), "b\n"), "a match a file away");
        // Three lines inserted above: the first hunk finds b three lines down (drift 3), so the second hunk's "r"
        // is taken at its own line 8 + 3, not at the nearer copies of "r" at lines 4 and 11.
        String original = "a\nb\nc\nr\nd\ne\nf\nr\ng\nh\nr\ni\n";
        String moved = "x1\nx2\nx3\n" + original;
        String expected = "x1\nx2\nx3\na\nB\nc\nr\nd\ne\nf\nR\ng\nh\nr\ni\n";
        assertEquals(expected, PatchApplier.apply(patch("@@ -2,1 +2,1 @@\n-b\n+B\n@@ -8,1 +8,1 @@\n-r\n+R\n"), moved));
        StaleException end = assertThrows(StaleException.class,
                () -> PatchApplier.apply(patch("@@ -1,3 +1,3 @@\n a\n b\n-c\n+C\n"), "a\nb\n"));
        assertEquals("hunk 1 of 1 (@@ -1,3 +1,3 @@) of " + P + " does not apply: line 3 is the end of the file where"
                + " the patch expects \"c\", and its 3 context/removed lines match nowhere else in the file",
                end.getMessage());
    }
}
