package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.conformance.cli.Cli;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The small corpus ({@code corpus export --small}) and the system's outputs on it ({@code corpus run}), made once per
 * test JVM for the test classes that only read them; a test that changes a file works on its own copy. (A mutant of
 * the campaign loads this class afresh, so it exports and runs with the mutant's code.) With
 * {@code -Dattnproof.smallCorpus.fresh=true} (conformance's {@code pit.argLine}) nothing is shared: every
 * {@link #corpus()} exports anew and the next {@link #outputs()} runs on that export.
 */
final class SmallCorpus {
    // PIT hot-swaps every mutant of a class into one minion JVM: a cache kept across them would judge a mutant of the
    // export or run code on files an earlier mutant (or the unmutated code) wrote, so PIT turns it off.
    private static final boolean FRESH = Boolean.getBoolean("attnproof.smallCorpus.fresh");
    private static Path dir;
    private static Path corpus;
    private static Path outputs;

    private SmallCorpus() {
    }

    private static Path dir() {
        if (dir == null) {
            try {
                dir = Files.createTempDirectory("small-corpus");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return dir;
    }

    private static void deleteTree(Path root) {
        if (root == null) {
            return;
        }
        try (var walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The exported small corpus (read only). */
    static synchronized Path corpus() {
        if (corpus == null || FRESH) {
            if (FRESH) {
                deleteTree(dir);   // the previous test class's export and outputs (a minion runs thousands)
                dir = null;
                corpus = null;
                outputs = null;
            }
            Path c = dir().resolve("corpus");
            Cli e = Cli.run("corpus", "export", c.toString(), "--small");
            assertEquals(0, e.exit(), e.toString());
            corpus = c;
        }
        return corpus;
    }

    /** The system's outputs on {@link #corpus()}, one {@code .npy} per case (read only). */
    static synchronized Path outputs() {
        if (outputs == null) {
            Path o = dir().resolve("good");
            Cli r = Cli.run("corpus", "run", (corpus == null ? corpus() : corpus).toString(), "--out", o.toString());
            assertEquals(0, r.exit(), r.toString());
            outputs = o;
        }
        return outputs;
    }

    /**
     * Exports the small corpus of {@code claims} to {@code shared/corpus} and runs the system on it into
     * {@code shared/out}, both through the command line and exit 0: for a test class that needs a corpus of its own.
     */
    static void exportAndRun(Path shared, String claims) {
        Cli e = Cli.run("corpus", "export", shared.resolve("corpus").toString(), "--small", "--claims", claims);
        assertEquals(0, e.exit(), e.toString());
        Cli r = Cli.run("corpus", "run", shared.resolve("corpus").toString(), "--out", shared.resolve("out").toString());
        assertEquals(0, r.exit(), r.toString());
    }
}
