package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cases.CaseChecker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The NumPy reference adapter ({@code examples/engines/numpy_engine.py}) passes the small corpus, and each planted
 * bug fails exactly the claims it breaks: window+1 the claims whose cases bind the window (U1, U3, U5, S6,
 * and B4's windowed decode), sink-in-numerator the claims whose cases carry live sinks, batch-position the ragged claims
 * (R5 through its control: an engine that ignores rowQ0 passes R5's equality vacuously), no-sinks-as-zero B6 alone
 * (the only claim with a case whose sinks field is absent). Skipped, with the reason, without python3 and numpy.
 */
class NumpyAdapterTest {
    @TempDir
    static Path dir;
    static Path corpus;
    static final Map<String, CaseChecker.Reference> REFERENCES = new HashMap<>();
    static final Path ADAPTER = Path.of("..", "examples", "engines", "numpy_engine.py");

    @BeforeAll
    static void exportSmall() {
        REFERENCES.clear();   // not kept across runs of the class in one JVM (PIT hot-swaps mutants into one minion)
        corpus = SmallCorpus.corpus();
    }

    private static String python(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("python3"));
        cmd.addAll(args);
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("python3 is not installed here: " + e.getMessage());
            return null;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python3 " + args + " timed out");
        if (p.exitValue() != 0 && out.contains("No module named 'numpy'")) {
            Assumptions.abort("numpy is not installed for python3: " + out.strip());
        }
        assertEquals(0, p.exitValue(), "python3 " + args + ":\n" + out);
        return out;
    }

    private static Set<String> failingClaims(String bug) throws IOException, InterruptedException {
        Path out = dir.resolve(bug == null ? "numpy" : "numpy-" + bug);
        List<String> args = new ArrayList<>(List.of(ADAPTER.toString(), corpus.toString(), out.toString()));
        if (bug != null) {
            args.addAll(List.of("--bug", bug));
        }
        python(args);
        CorpusChecker.Result r = CorpusChecker.check(corpus, out, bug == null ? "numpy" : "numpy-" + bug,
                dir.resolve("ev-" + (bug == null ? "numpy" : bug)), REFERENCES);
        Set<String> failing = new LinkedHashSet<>();
        r.failures().forEach(f -> failing.add(f.check().claim()));
        return failing;
    }

    @Test
    void theAdapterPassesTheSmallCorpus() throws IOException, InterruptedException {
        python(List.of("-c", "import numpy"));
        assertEquals(Set.of(), failingClaims(null));
    }

    @ParameterizedTest(name = "--bug {0} fails {1}")
    @CsvSource(delimiter = ';', value = {
        "window+1; U1 U3 U5 S6 B4",
        "sink-in-numerator; U5 U6 U8 R1 R9 S1 S2 S6 B2 B4 B5 B6",
        "no-sinks-as-zero; B6",
        "batch-position; R1 R5 R9"})
    void aPlantedBugFailsExactlyTheClaimsItBreaks(String bug, String claims) throws IOException, InterruptedException {
        python(List.of("-c", "import numpy"));
        assertEquals(Set.of(claims.split(" ")), failingClaims(bug), "--bug " + bug);
    }
}
