package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cli.Cli;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
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
 * F2: {@code corpus check} refuses a tampered corpus (exit 2, one line naming the file and the field, no evidence
 * written) and judges the untampered one; editing a file and rewriting its digest in the seal does not help, since
 * the files must also be what attnproof regenerates from the sealed seed.
 */
@Claim("F2")
class SealTest {
    @TempDir
    static Path shared;
    static Path corpus;
    static Path outputs;

    @TempDir
    Path dir;

    @BeforeAll
    static void exportAndRun() {
        SmallCorpus.exportAndRun(shared, "U1");
        corpus = shared.resolve("corpus");
        outputs = shared.resolve("out");
    }

    private Path copy() throws IOException {
        Path c = dir.resolve("corpus");
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
        return c;
    }

    private static void replace(Path file, String from, String to) throws IOException {
        String text = Files.readString(file);
        int at = text.indexOf(from);
        assertTrue(at >= 0, () -> file + " lacks " + from);
        Files.writeString(file, text.substring(0, at) + to + text.substring(at + from.length()), StandardCharsets.UTF_8);
    }

    /** Rewrites the seal's digest of {@code rel} to the file's new one, as a careful tamperer would. */
    private static void reseal(Path c, String rel) throws IOException {
        String old = Files.readString(corpus.resolve(Seal.FILE));
        String was = Seal.sha256(Files.readAllBytes(corpus.resolve(rel)));
        String now = Seal.sha256(Files.readAllBytes(c.resolve(rel)));
        assertTrue(old.contains("\"" + rel + "\": \"" + was + "\""), old);
        Files.writeString(c.resolve(Seal.FILE), old.replace(was, now), StandardCharsets.UTF_8);
    }

    private Cli check(Path c) {
        return Cli.run("corpus", "check", c.toString(), "--outputs", outputs.toString(), "--engine", "x",
                "--evidence-out", dir.resolve("ev").toString());
    }

    /** The corpus is refused with exactly {@code line}, and nothing was judged. */
    private void refused(Evidence ev, String name, Cli r, String line) {
        ev.checkEqual("exit_code:" + name, r.exit(), 2);
        assertEquals("attnproof corpus check: " + line + System.lineSeparator(), r.err(), r.toString());
        assertEquals("", r.out(), r.toString());
        assertFalse(Files.exists(dir.resolve("ev/CorpusChecker.jsonl")), "no output may be judged: " + r);
    }

    @Test
    void theUntamperedCorpusIsJudged(Evidence ev) {
        Cli r = check(corpus);
        ev.checkEqual("exit_code:untampered", r.exit(), 0);
        assertTrue(r.out().contains("corpus check: PASS"), r.toString());
        assertEquals(13, Seal.verify(corpus).seed(), "the sealed parameters, as verified");
    }

    @Test
    void aDtypeChangedInCaseJsonIsRefusedEvenWithItsDigestRewritten(Evidence ev) throws IOException {
        Path c = copy();
        String rel = "cases/U1-tk16-F32/case.json";
        replace(c.resolve(rel), "\"dtype\": \"F32\"", "\"dtype\": \"BF16\"");
        refused(ev, "dtype-edited", check(c), c.resolve(rel) + ": \"config.dtype\": BF16, but attnproof regenerates F32"
                + " from seed 13 (small) (its SHA-256 differs from the seal's)");
        reseal(c, rel);
        refused(ev, "dtype-edited-resealed", check(c), c.resolve(rel) + ": \"config.dtype\": BF16, but attnproof"
                + " regenerates F32 from seed 13 (small)");
    }

    @Test
    void aFieldAddedToCaseJsonIsRefusedByName(Evidence ev) throws IOException {
        Path c = copy();
        String rel = "cases/U1-tk16-F32/case.json";
        replace(c.resolve(rel), "\"dtype\": \"F32\"", "\"dtype\": \"F32\", \"extra\": \"x\"");
        refused(ev, "field-added", check(c), c.resolve(rel) + ": \"config.extra\": x, but attnproof regenerates no such"
                + " field from seed 13 (small) (its SHA-256 differs from the seal's)");
    }

    @Test
    void aSealOfAnotherScaleIsRefused(Evidence ev) throws IOException {
        Path c = copy();
        replace(c.resolve(Seal.FILE), "\"scale\": \"small\"", "\"scale\": \"medium\"");
        refused(ev, "seal-scale-unknown", check(c), c.resolve(Seal.FILE) + ": \"scale\": medium must be small or full");
        replace(c.resolve(Seal.FILE), "\"scale\": \"medium\"", "\"scale\": \"full\"");
        Cli r = check(c);
        ev.checkEqual("exit_code:seal-scale-full", r.exit(), 2);
        assertTrue(r.err().contains("(full)"), "a small corpus under a full seal is judged against the full corpus: " + r);
    }

    @Test
    void aDeletedCheckIsRefused(Evidence ev) throws IOException {
        Path c = copy();
        Path m = c.resolve(Manifest.FILE);
        String text = Files.readString(m);
        int from = text.indexOf("    {\"id\": \"U1:oracle:U1-tk7-F32\"");
        int to = text.indexOf('\n', from) + 1;
        Files.writeString(m, text.substring(0, from) + text.substring(to), StandardCharsets.UTF_8);
        reseal(c, Manifest.FILE);
        refused(ev, "check-deleted", check(c), m + ": \"checks[U1:oracle:U1-tk7-F32]\": missing: attnproof regenerates"
                + " this check from seed 13 (small)");
    }

    @Test
    void anOracleCheckRewrittenAsASelfCompareIsRefused(Evidence ev) throws IOException {
        Path c = copy();
        Path m = c.resolve(Manifest.FILE);
        replace(m, "\"type\": \"oracle\", \"expect\": \"pass\", \"a\": {\"case\": \"U1-tk7-F32\"}",
                "\"type\": \"same-bits\", \"expect\": \"pass\", \"a\": {\"case\": \"U1-tk7-F32\"}, \"b\": {\"case\":"
                        + " \"U1-tk7-F32\"}");
        reseal(c, Manifest.FILE);
        refused(ev, "self-compare", check(c), m + ": \"checks[U1:oracle:U1-tk7-F32].type\": same-bits, but attnproof"
                + " regenerates oracle from seed 13 (small)");
    }

    @Test
    void aDuplicatedCheckIdIsRefused(Evidence ev) throws IOException {
        Path c = copy();
        Path m = c.resolve(Manifest.FILE);
        String text = Files.readString(m);
        int from = text.indexOf("    {\"id\": \"U1:oracle:U1-tk7-F32\"");
        int to = text.indexOf('\n', from) + 1;
        Files.writeString(m, text.substring(0, to) + text.substring(from, to) + text.substring(to),
                StandardCharsets.UTF_8);
        reseal(c, Manifest.FILE);
        refused(ev, "duplicate-id", check(c), m + ": \"checks[U1:oracle:U1-tk7-F32].id\": check id U1:oracle:U1-tk7-F32"
                + " appears twice");
    }

    @Test
    void anInputNpyChangedIsRefusedByItsDigest(Evidence ev) throws IOException {
        Path c = copy();
        String rel = "cases/U1-tk16-F32/q.npy";
        byte[] q = Files.readAllBytes(c.resolve(rel));
        String want = Seal.sha256(q);
        q[q.length - 1] ^= 1;
        Files.write(c.resolve(rel), q);
        refused(ev, "npy-edited", check(c), c.resolve(rel) + ": \"sha256\": " + Seal.sha256(q) + ", but attnproof"
                + " regenerates " + want + " from seed 13 (small) (its SHA-256 differs from the seal's)");
    }

    @Test
    void aFileAddedOrRemovedOrTheSealMissingIsRefused(Evidence ev) throws IOException {
        Path c = copy();
        Files.writeString(c.resolve("cases/U1-tk16-F32/extra.npy"), "x");
        refused(ev, "file-added", check(c), c.resolve("cases/U1-tk16-F32/extra.npy") + ": not in the seal: a sealed"
                + " corpus holds only the files export wrote");
        Files.delete(c.resolve("cases/U1-tk16-F32/extra.npy"));
        Files.delete(c.resolve("cases/U1-tk16-F32/sinks.npy"));
        refused(ev, "file-removed", check(c), c.resolve("cases/U1-tk16-F32/sinks.npy") + ": missing: the seal lists it");
        Files.delete(c.resolve(Seal.FILE));
        refused(ev, "seal-removed", check(c), c.resolve(Seal.FILE) + ": no seal: corpus check judges only a corpus as"
                + " `attnproof corpus export` wrote it (manifest.json, cases/, seal.json)");
    }

    @Test
    void aSealNamingAnotherSeedIsRefused(Evidence ev) throws IOException {
        Path c = copy();
        replace(c.resolve(Seal.FILE), "\"seed\": 13", "\"seed\": 14");
        Cli r = check(c);
        refused(ev, "seal-seed-edited", r, c.resolve(Manifest.FILE) + ": \"seed\": 13, but the seal's corpus is from"
                + " seed 14 (small)");
    }
}
