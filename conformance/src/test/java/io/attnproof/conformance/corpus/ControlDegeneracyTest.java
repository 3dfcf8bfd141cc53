package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A check's degeneracy lines can fail it: a control whose own case is the case it must miss (its oracle equals the
 * truth's) and a degenerate check whose case has no degenerate row are judged FAIL naming the degeneracy line, even
 * on outputs that pass everything else. Negative control: the untouched corpus passes the same checks.
 */
class ControlDegeneracyTest {
    static Path corpus;
    static Path good;
    static Manifest manifest;

    @TempDir
    Path dir;

    @BeforeAll
    static void exportAndRun() {
        corpus = SmallCorpus.corpus();
        good = SmallCorpus.outputs();
        manifest = Manifest.read(corpus);
    }

    private static Manifest.Entry entry(String id) {
        return manifest.cases().stream().filter(x -> x.id().equals(id)).findFirst().orElseThrow();
    }

    /** A copy of the corpus in which case {@code into}'s files are those of case {@code from}. */
    private Path withCaseReplaced(String into, String from) throws IOException {
        Path c = dir.resolve("corpus-" + into);
        try (Stream<Path> walk = Files.walk(corpus)) {
            for (Path p : walk.sorted().toList()) {
                Path t = c.resolve(corpus.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t);
                }
            }
        }
        Path to = c.resolve(entry(into).caseFile()).getParent();
        Path src = corpus.resolve(entry(from).caseFile()).getParent();
        try (Stream<Path> files = Files.list(src)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return c;
    }

    private CorpusChecker.Outcome judge(Path c, CheckSpec check) {
        CorpusChecker.Result r = CorpusChecker.checkUnsealed(c, good, "x", dir.resolve("ev"), new HashMap<>(),
                x -> x.id().equals(check.id()));
        return r.outcomes().getFirst();
    }

    private CheckSpec first(String type, boolean control, boolean against) {
        return manifest.checks().stream().filter(c -> c.type().equals(type) && c.control() == control
                && (c.against() != null) == against).findFirst().orElseThrow();
    }

    @Test
    void aControlWhoseCaseIsTheTruthFailsItsOracleGapLine() throws IOException {
        CheckSpec check = first("oracle", true, true);
        assertTrue(judge(corpus, check).passed(), "negative control: the untouched corpus passes " + check.id());
        CorpusChecker.Outcome o = judge(withCaseReplaced(check.a().caseId(), check.against()), check);
        assertFalse(o.passed(), o.toString());
        assertTrue(o.detail().contains("control_oracle_gap"), o.detail());
        assertEquals(0.0, o.margin(), "a failed degeneracy line, which has no margin of its own, counts as 0");
    }

    @Test
    void aDegenerateControlWhoseCaseIsTheTruthFailsItsLiveRowsLine() throws IOException {
        CheckSpec check = first("degenerate", true, true);
        assertTrue(judge(corpus, check).passed(), "negative control: the untouched corpus passes " + check.id());
        CorpusChecker.Outcome o = judge(withCaseReplaced(check.a().caseId(), check.against()), check);
        assertFalse(o.passed(), o.toString());
        assertTrue(o.detail().contains("control_rows_live"), o.detail());
    }

    @Test
    void aDegenerateCheckWithoutADegenerateRowFailsItsRowsLine() throws IOException {
        CheckSpec check = first("degenerate", false, false);
        String a = check.a().caseId();
        assertTrue(judge(corpus, check).passed(), "negative control: the untouched corpus passes " + check.id());
        // A case of the same output shape whose oracle has no row with max-abs <= 1e-3.
        String live = null;
        for (Manifest.Entry e : manifest.cases()) {
            if (!e.id().equals(a) && Arrays.equals(e.outputShape(), entry(a).outputShape()) && noDegenerateRow(e)) {
                live = e.id();
                break;
            }
        }
        assertTrue(live != null, "degeneracy: the small corpus holds a live case shaped like " + a);
        CorpusChecker.Outcome o = judge(withCaseReplaced(a, live), check);
        assertFalse(o.passed(), o.toString());
        assertTrue(o.detail().contains("degenerate_rows"), o.detail());
    }

    private static boolean noDegenerateRow(Manifest.Entry e) {
        double[][][][] o = CaseChecker.reference(CaseReader.readAny(corpus.resolve(e.caseFile()))).oracle();
        for (double[][][] b : o) {
            for (double[][] h : b) {
                for (double[] row : h) {
                    double max = 0;
                    for (double x : row) {
                        max = Math.max(max, Math.abs(x));
                    }
                    if (max <= 1e-3) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    @Test
    void aPairControlWithEqualOraclesFailsItsOracleGapLine() throws IOException {
        List<CheckSpec> pairs = manifest.checks().stream().filter(c -> c.control() && c.against() == null
                && c.a().whole() && c.b() != null && c.b().whole()).toList();
        assertFalse(pairs.isEmpty(), "degeneracy: the small corpus holds a pair control over whole outputs");
        CheckSpec check = pairs.getFirst();
        assertTrue(judge(corpus, check).passed(), "negative control: the untouched corpus passes " + check.id());
        CorpusChecker.Outcome o = judge(withCaseReplaced(check.a().caseId(), check.b().caseId()), check);
        assertFalse(o.passed(), o.toString());
        assertTrue(o.detail().contains("control_oracle_gap"), o.detail());
    }
}
