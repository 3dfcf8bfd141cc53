package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A patch's first changed line at the edges of the lookup: code moved up to the file's first line, down to the
 * last place the block fits, a patch read from disk, and the errors for a missing or malformed hunk header.
 */
class PatchLineTest {
    @TempDir
    Path dir;

    private static final List<String> PATCH = List.of("--- a/f.c", "+++ b/f.c", "@@ -3,2 +3,2 @@", " ctx", "-old",
            "+new");

    @Test
    void codeMovedUpToTheFirstLineIsFound() throws IOException {
        Files.writeString(dir.resolve("f.c"), "ctx\nold\nx\ny\nz\n");
        assertEquals("f.c:2", PatchLine.of(PATCH, "p", dir), "old lines at 1..2, the change on line 2");
    }

    @Test
    void codeMovedDownToTheLastPlaceItFitsIsFound() throws IOException {
        Files.writeString(dir.resolve("f.c"), "a\nb\nc\nd\nctx\nold\n");
        assertEquals("f.c:6", PatchLine.of(PATCH, "p", dir), "old lines at 5..6 (the file's end)");
        // Negative control: the block nowhere, the header's line.
        Files.writeString(dir.resolve("f.c"), "a\nb\nc\nd\nctx\n");
        assertEquals("f.c:4", PatchLine.of(PATCH, "p", dir));
    }

    @Test
    void aPatchFileIsReadFromDisk() throws IOException {
        Path patch = Files.write(dir.resolve("m.patch"), PATCH);
        assertEquals("f.c:4", PatchLine.of(patch), "the header alone: line 3 plus one context line");
    }

    @Test
    void aMissingOrMalformedHunkIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PatchLine.of(List.of("--- a/f.c", "+++ b/f.c"), "p.patch", null));
        assertEquals("p.patch: no file header (--- a/..., +++ b/...) followed by a hunk (@@ -a,b +c,d @@)",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> PatchLine.of(List.of("# id: x", "--- a/f.c", "+++ b/f.c", "@@ nonsense", "-x"), "p.patch", null));
        assertEquals("p.patch:4: malformed hunk header: @@ nonsense", e.getMessage());
    }
}
