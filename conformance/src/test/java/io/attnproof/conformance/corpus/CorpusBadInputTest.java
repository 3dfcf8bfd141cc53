package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cli.Cli;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input to {@code corpus check}: a malformed manifest or a missing outputs folder is one line on stderr naming the
 * check and the field (or the option), exit 2, nothing judged; extra files in the outputs folder are a warning.
 */
class CorpusBadInputTest {
    @TempDir
    static Path shared;
    static Path corpus;
    static Path outputs;

    @TempDir
    Path dir;

    @BeforeAll
    static void exportAndRun() {
        SmallCorpus.exportAndRun(shared, "U1,R9");
        corpus = shared.resolve("corpus");
        outputs = shared.resolve("out");
    }

    /** A copy of the corpus whose manifest has {@code from} replaced by {@code to} (once, and it must occur). */
    private Path edited(String from, String to) throws IOException {
        Path c = dir.resolve("edited");
        try (Stream<Path> walk = Files.walk(corpus)) {
            for (Path p : walk.sorted(Comparator.naturalOrder()).toList()) {
                Path t = c.resolve(corpus.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t);
                }
            }
        }
        Path m = c.resolve(Manifest.FILE);
        String text = Files.readString(m);
        int at = text.indexOf(from);
        assertTrue(at >= 0, () -> "the manifest lacks " + from);
        Files.writeString(m, text.substring(0, at) + to + text.substring(at + from.length()), StandardCharsets.UTF_8);
        return c;
    }

    private Cli check(Path c, Path out) {
        return Cli.run("corpus", "check", c.toString(), "--outputs", out.toString(), "--engine", "x", "--evidence-out",
                dir.resolve("ev").toString());
    }

    private void refused(Cli r, String line) {
        assertEquals(2, r.exit(), r.toString());
        assertEquals("attnproof corpus check: " + line + System.lineSeparator(), r.err(), r.toString());
        assertEquals("", r.out(), r.toString());
    }

    @Test
    void aControlWithoutAgainstNamesTheCheckAndTheField() throws IOException {
        Path c = edited(", \"against\": \"U1-tk16-F32\"", "");
        refused(check(c, outputs), c.resolve("manifest.json") + ": \"checks[U1:control:U1-tk16-window+1-F32].against\":"
                + " missing: a control (expect fail) of type oracle names the case whose oracle its output must miss");
    }

    @Test
    void aQueryRowSlicePastTheOutputNamesTheCheckAndTheField() throws IOException {
        Path c = edited("\"r\": [0, 1]", "\"r\": [0, 99]");
        refused(check(c, outputs), c.resolve("manifest.json") + ": \"checks[R9:same-within-rule:R9-r4-ragged-F32[b0,r0]"
                + ":R9-r4-row0-alone-F32].a.r\": [0, 99] must be [from, to) with 0 <= from < to <= 1, the query-row"
                + " extent of case R9-r4-ragged-F32's output_shape [4, 2, 1, 16]");
    }

    @Test
    void anEmptyBatchSliceNamesTheCheckAndTheField() throws IOException {
        Path c = edited("\"b\": [0, 1]", "\"b\": [1, 0]");
        refused(check(c, outputs), c.resolve("manifest.json") + ": \"checks[R9:same-within-rule:R9-r4-ragged-F32[b0,r0]"
                + ":R9-r4-row0-alone-F32].a.b\": [1, 0] must be [from, to) with 0 <= from < to <= 4, the batch extent"
                + " of case R9-r4-ragged-F32's output_shape [4, 2, 1, 16]");
    }

    @Test
    void aCheckNamingAnUnknownCaseNamesTheCheck() throws IOException {
        Path c = edited("\"a\": {\"case\": \"U1-tk7-F32\"}", "\"a\": {\"case\": \"U1-tk70-F32\"}");
        refused(check(c, outputs), c.resolve("manifest.json") + ": \"checks[U1:oracle:U1-tk7-F32].a.case\": U1-tk70-F32"
                + " is not a case of the manifest");
    }

    @Test
    void aMissingOrNonFolderOutputsIsOneLine() throws IOException {
        Path nowhere = dir.resolve("nowhere");
        refused(check(corpus, nowhere), "--outputs " + nowhere + ": must be a folder holding <case id>.npy (no such"
                + " folder)");
        Path file = Files.writeString(dir.resolve("file.npy"), "x");
        refused(check(corpus, file), "--outputs " + file + ": must be a folder holding <case id>.npy (it is a file)");
    }

    @Test
    void extraFilesInTheOutputsAreListedAsAWarning() throws IOException {
        Path out = dir.resolve("out");
        Files.createDirectories(out);
        try (Stream<Path> s = Files.list(outputs)) {
            for (Path p : s.toList()) {
                Files.copy(p, out.resolve(p.getFileName().toString()));
            }
        }
        Files.writeString(out.resolve("notes.txt"), "x");
        Files.copy(outputs.resolve("U1-tk7-F32.npy"), out.resolve("U1-tk7-F16.npy"));
        Cli r = check(corpus, out);
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains(System.lineSeparator() + "warning: 2 files in " + out + " are not outputs of this"
                + " corpus (ignored): U1-tk7-F16.npy, notes.txt" + System.lineSeparator()), r.toString());
        Cli clean = check(corpus, outputs);
        assertEquals(0, clean.exit(), clean.toString());
        assertTrue(!clean.out().contains("warning"), clean.toString());
    }
}
