package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writing the ledger removes the pictures of an earlier run, and reading the mutant results at their place under
 * a root resolves the catalog against that root (a catalog patch without a result is "not run"; a
 * file that is no patch is nothing).
 */
class LedgerWriterTest {
    @TempDir
    Path dir;

    @Test
    void stalePicturesAreRemoved() throws IOException {
        Path out = dir.resolve("out");
        Path stale = Files.createDirectories(out.resolve("pictures")).resolve("old-picture.svg");
        Files.writeString(stale, "<svg/>");
        Path kept = out.resolve("pictures").resolve("notes.txt");
        Files.writeString(kept, "not a picture");
        LedgerWriter.Written w = LedgerWriter.write(Ledger.build(LedgerFixture.root(dir.resolve("repo"), false, false),
                List.of()), out);
        assertFalse(Files.exists(stale), "an earlier run's picture is gone");
        assertTrue(Files.exists(kept), "only pictures are removed");
        assertFalse(w.pictures().isEmpty());
    }

    @Test
    void resultsUnderARootResolveItsCatalog() throws IOException {
        Path root = LedgerFixture.root(dir.resolve("repo"), true, false);
        Path catalog = Files.createDirectories(root.resolve("mutants").resolve("catalog"));
        Files.writeString(catalog.resolve("zz-extra.patch"), "# id: zz-extra\n");
        Files.writeString(catalog.resolve("README.md"), "not a patch\n");
        MutantReport r = MutantReport.read(root.resolve(Ledger.MUTANTS));
        assertEquals(List.of("zz-extra"), r.notRun());
        assertEquals(6, r.mutants().size());
    }
}
