package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Applying hunks: at the stated line, at an offset when the code above moved, and stale when the context changed. */
class PatchApplierTest {
    static final String P = PatchParser.SOURCE_ROOT + "io/attnproof/attention/X.java";
    static final String ORIGINAL = "a\nb\nc\nd\ne\nf\ng\nh\n";

    static Mutant.FilePatch patch(String before, String after) throws Exception {
        String text = TestPatches.header("01-x", "R1") + TestPatches.diff(P, before, after);
        return PatchParser.parse(Path.of("01-x.patch"), text).files().getFirst();
    }

    @Test
    void appliesAtTheStatedLine() throws Exception {
        String mutated = ORIGINAL.replace("e\n", "E\n");
        assertEquals(mutated, PatchApplier.apply(patch(ORIGINAL, mutated), ORIGINAL));
    }

    @Test
    void appliesAtAnOffsetWhenLinesWereAddedAbove() throws Exception {
        String mutated = ORIGINAL.replace("e\n", "E\n");
        String moved = "x\ny\n" + ORIGINAL;
        assertEquals("x\ny\n" + mutated, PatchApplier.apply(patch(ORIGINAL, mutated), moved));
    }

    /** Lines removed above: the context is found before its stated line, the nearest match taken. */
    @Test
    void appliesAtAnOffsetWhenLinesWereRemovedAbove() throws Exception {
        String mutated = ORIGINAL.replace("e\n", "E\n");
        assertEquals(mutated.substring(2), PatchApplier.apply(patch(ORIGINAL, mutated), ORIGINAL.substring(2)));
    }

    @Test
    void aChangedContextLineMakesItStale() throws Exception {
        Mutant.FilePatch p = patch(ORIGINAL, ORIGINAL.replace("e\n", "E\n"));
        StaleException e = assertThrows(StaleException.class,
                () -> PatchApplier.apply(p, ORIGINAL.replace("d\n", "D\n")));
        assertEquals("hunk 1 of 1 (@@ -2,7 +2,7 @@) of " + P + " does not apply: line 4 is \"D\" where the patch"
                + " expects \"d\", and its 7 context/removed lines match nowhere else in the file", e.getMessage());
    }

    @Test
    void aRemovedLineThatIsGoneMakesItStale() throws Exception {
        Mutant.FilePatch p = patch(ORIGINAL, ORIGINAL.replace("e\n", ""));
        assertThrows(StaleException.class, () -> PatchApplier.apply(p, ORIGINAL.replace("e\n", "")));
    }
}
