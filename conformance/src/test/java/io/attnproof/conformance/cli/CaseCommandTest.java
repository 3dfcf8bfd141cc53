package io.attnproof.conformance.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.ragged.RaggedCohort;
import io.attnproof.oracles.Precision;
import io.attnproof.conformance.cases.AttnCase;
import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.CaseWriter;
import io.attnproof.conformance.cases.ExampleCase;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code attnproof run} and {@code check}: a correct external output passes, a wrong one fails. */
class CaseCommandTest {
    @TempDir
    Path dir;

    private Path example() {
        Path c = dir.resolve("tiny").resolve("case.json");
        ExampleCase.write(c);
        return c;
    }

    private Cli runThenCheck(Path caseFile) {
        Path out = dir.resolve("out-" + caseFile.getParent().getFileName() + ".npy");
        Cli run = Cli.run("run", "--case", caseFile.toString(), "--out", out.toString());
        assertEquals(0, run.exit(), run.toString());
        assertTrue(run.out().startsWith("run: wrote " + out), run.toString());
        return Cli.run("check", "--case", caseFile.toString(), "--actual", out.toString());
    }

    private static void assertPass(Cli check) {
        assertEquals(0, check.exit(), check.toString());
        assertTrue(check.out().startsWith("check: PASS  max_abs_err "), check.toString());
        assertTrue(check.out().contains(" at (b="), check.toString());
        assertTrue(check.out().contains("(margin "), check.toString());
        assertTrue(check.err().isEmpty(), check.toString());
    }

    private static double margin(Cli check) {
        Matcher m = Pattern.compile("\\(margin ([0-9.e+-]+)x\\)").matcher(check.out());
        assertTrue(m.find(), check.toString());
        return Double.parseDouble(m.group(1));
    }

    private Path write(String name, float[] values, int... shape) {
        Path file = dir.resolve(name);
        Npy.write(file, Npy.DType.F4, shape, values);
        return file;
    }

    @Test
    void theCommittedExampleIsWhatTheGeneratorWrites() throws IOException {
        Path committed = Path.of(System.getProperty("user.dir")).resolve("../examples/tiny").normalize();
        Path fresh = example().getParent();
        List<String> names;
        try (Stream<Path> files = Files.list(fresh)) {
            names = files.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertEquals(List.of("case.json", "compressed_kv.npy", "k.npy", "q.npy", "sinks.npy"), names);
        for (String name : names) {
            assertArrayEquals(Files.readAllBytes(fresh.resolve(name)), Files.readAllBytes(committed.resolve(name)),
                    "examples/tiny/" + name + " differs from ExampleCase's output: regenerate it with ExampleCase");
        }
    }

    @Test
    void checkAcceptsTheSystemsOwnOutputAndTheOracleRoundedToF32() {
        Path caseFile = example();
        Cli check = runThenCheck(caseFile);
        assertPass(check);
        assertTrue(margin(check) > 1, check.toString());

        AttnCase c = CaseReader.read(caseFile);
        Path oracle = write("oracle.npy", ExampleCase.flat(CaseChecker.reference(c).oracle()), c.outputShape());
        Cli fromOracle = Cli.run("check", "--case", caseFile.toString(), "--actual", oracle.toString());
        assertPass(fromOracle);
    }

    @Test
    void checkRejectsAWindowOffByOneAndAMissingSink() {
        Path caseFile = example();
        AttnCase c = CaseReader.read(caseFile);
        Dsv4Config wider = Dsv4Config.of(c.ratio(), c.window() + 1, c.rawPrefix());
        Tensor offByOne = Dsv4Attention.attention(c.q(), c.k(), c.v(), c.compressedKv(), null, c.sinks(), wider);
        Path wrongWindow = write("window-plus-one.npy", offByOne.toFloatArray(), offByOne.shape());
        Cli w = Cli.run("check", "--case", caseFile.toString(), "--actual", wrongWindow.toString());
        assertEquals(1, w.exit(), w.toString());
        assertTrue(w.out().startsWith("check: FAIL  max_abs_err "), w.toString());
        assertTrue(w.out().contains(" > limit "), w.toString());
        assertTrue(margin(w) < 1, w.toString());

        Tensor noSink = Dsv4Attention.attention(c.q(), c.k(), c.v(), c.compressedKv(), null, null, c.config());
        Path wrongSink = write("no-sink.npy", noSink.toFloatArray(), noSink.shape());
        Cli s = Cli.run("check", "--case", caseFile.toString(), "--actual", wrongSink.toString());
        assertEquals(1, s.exit(), s.toString());
        assertTrue(s.out().startsWith("check: FAIL"), s.toString());
    }

    /** A ragged cohort with NaN canaries in every padded slot; rows are checked alone, dead prefix absent. */
    private Path raggedCase(String name, double pad, boolean withRowQ0) {
        return raggedCase(name, pad, withRowQ0, 0);
    }

    /** The same, with the first {@code rawPrefix} cache columns absent from k (an already-evicted prefix). */
    private Path raggedCase(String name, double pad, boolean withRowQ0, int rawPrefix) {
        RaggedCohort cohort = new RaggedCohort(new int[] {37, 50, 10, 44}, 3, 16, 4, 4, 16);
        RaggedCohort.Inputs in = cohort.inputs(1001, Precision.F32, pad);
        int b = cohort.batch();
        Map<String, CaseWriter.Data> t = new LinkedHashMap<>();
        t.put("q", CaseWriter.Data.f4(ExampleCase.flat(in.q()), b, 4, 3, 16));
        double[][][] k = new double[b][][];
        for (int i = 0; i < b; i++) {
            k[i] = java.util.Arrays.copyOfRange(in.k()[i], rawPrefix, cohort.width());
        }
        t.put("k", CaseWriter.Data.f4(ExampleCase.flat(k), b, 1, cohort.width() - rawPrefix, 16));
        t.put("sinks", CaseWriter.Data.f4(ExampleCase.flat(in.sinks()), 4));
        t.put("compressed_kv", CaseWriter.Data.f4(ExampleCase.flat(in.compressed()), b, 1, cohort.tc(), 16));
        Path caseFile = dir.resolve(name).resolve("case.json");
        // The cohort's padded slots (dead prefixes, blocks a row never generated) hold the pad: mark NaN ones canaries.
        Map<String, java.util.List<int[]>> canary = new LinkedHashMap<>();
        for (String field : new String[] {"k", "compressed_kv"}) {
            CaseWriter.Data data = t.get(field);
            int[] shape = data.shape();
            java.util.List<int[]> slots = new java.util.ArrayList<>();
            for (int i = 0; i < shape[0]; i++) {
                for (int j = 0; j < shape[2]; j++) {
                    if (Float.isNaN(data.values()[(i * shape[2] + j) * shape[3]])) {
                        slots.add(new int[] {i, 0, j});
                    }
                }
            }
            if (!slots.isEmpty()) {
                canary.put(field, slots);
            }
        }
        CaseWriter.write(caseFile, null, t, new CaseWriter.Config(4, 16, rawPrefix, withRowQ0 ? cohort.rowQ0() : null,
                "F32"), canary);
        return caseFile;
    }

    @Test
    void aRaggedCaseChecksEachRowAloneAndTheBatchWidePositionFails() {
        Path ragged = raggedCase("ragged", Double.NaN, true);
        assertPass(runThenCheck(ragged));
        // Raw prefix 20 of the 50 cache columns evicted: row 2's dead prefix (40) reaches past it, rows 0 and 3's do not.
        assertPass(runThenCheck(raggedCase("ragged-prefix", Double.NaN, true, 20)));

        // Negative control (R1's): the same cohort, zero-padded, run at the batch-wide position.
        Path zeros = raggedCase("ragged-zeros", 0.0, true);
        Path batchWide = raggedCase("batch-wide", 0.0, false);
        Path out = dir.resolve("batch-wide.npy");
        assertEquals(0, Cli.run("run", "--case", batchWide.toString(), "--out", out.toString()).exit());
        Cli check = Cli.run("check", "--case", zeros.toString(), "--actual", out.toString());
        assertEquals(1, check.exit(), check.toString());
        assertTrue(check.out().startsWith("check: FAIL"), check.toString());
    }

    private Path seededCase(String name, Precision p, Npy.DType storage, String dtype, int rawPrefix, int tk,
            Map<String, CaseWriter.Data> extra) {
        UnionInputs in = UnionInputs.generate(77, 2, 3, 5, tk, (rawPrefix + tk) / 4, 8, p, 2.0);
        Map<String, CaseWriter.Data> t = new LinkedHashMap<>();
        t.put("q", new CaseWriter.Data(new int[] {2, 3, 5, 8}, ExampleCase.flat(in.q()), storage));
        t.put("k", new CaseWriter.Data(new int[] {2, 1, tk, 8}, ExampleCase.flat(in.k()), storage));
        t.put("v", new CaseWriter.Data(new int[] {2, 1, tk, 8}, ExampleCase.flat(in.v()), storage));
        t.put("sinks", new CaseWriter.Data(new int[] {3}, ExampleCase.flat(in.sinks()), storage));
        t.put("compressed_kv", new CaseWriter.Data(new int[] {2, 1, in.tc(), 8}, ExampleCase.flat(in.compressed()),
                storage));
        t.putAll(extra);
        Path caseFile = dir.resolve(name).resolve("case.json");
        CaseWriter.write(caseFile, name, t, new CaseWriter.Config(4, 8, rawPrefix, null, dtype));
        return caseFile;
    }

    @Test
    void sixteenBitCasesAndADistinctVAndARawPrefixPass() {
        assertPass(runThenCheck(seededCase("f16", Precision.F16, Npy.DType.F2, "F16", 0, 24, Map.of())));
        assertPass(runThenCheck(seededCase("bf16", Precision.BF16, Npy.DType.F4, "BF16", 0, 24, Map.of())));
        assertPass(runThenCheck(seededCase("prefix", Precision.F32, Npy.DType.F4, "F32", 9, 12, Map.of())));
    }

    @Test
    void callerMasksReachTheOracleAsTheSystemComposesThem() {
        SplittableRandom rng = new SplittableRandom(5);
        int tkFull = 24;
        int tc = 6;
        // Rank 2 over raw + compressed columns: some -inf, some finite biases.
        float[] m2 = new float[5 * (tkFull + tc)];
        for (int i = 0; i < m2.length; i++) {
            double u = rng.nextDouble();
            m2[i] = u < 0.2 ? Float.NEGATIVE_INFINITY : u < 0.5 ? (float) -rng.nextDouble() : 0f;
        }
        Path rank2 = seededCase("mask2", Precision.F32, Npy.DType.F4, "F32", 0, tkFull,
                Map.of("mask", CaseWriter.Data.f4(m2, 5, tkFull + tc)));
        assertPass(runThenCheck(rank2));
        // Rank 4, per batch row and head, raw columns only (zero over the compressed ones).
        float[] m4 = new float[2 * 3 * 5 * tkFull];
        for (int i = 0; i < m4.length; i++) {
            m4[i] = rng.nextDouble() < 0.25 ? Float.NEGATIVE_INFINITY : (float) (0.5 * rng.nextGaussian());
        }
        Path rank4 = seededCase("mask4", Precision.F32, Npy.DType.F4, "F32", 0, tkFull,
                Map.of("mask", CaseWriter.Data.f4(m4, 2, 3, 5, tkFull)));
        assertPass(runThenCheck(rank4));
    }

    /**
     * {@code check} prints five lines, flushed before it returns: the verdict, the case (file and description), the
     * actual output (file, dtype, shape), how the limit was formed, and the detail (non-finite positions, cosine).
     */
    @Test
    void checkPrintsTheCaseTheActualTheRuleAndTheDetailAndFlushesThem() {
        Path c = example();
        Path out = dir.resolve("out.npy");
        assertEquals(0, Cli.run("run", "--case", c.toString(), "--out", out.toString()).exit());
        Cli check = Cli.runBuffered("check", "--case", c.toString(), "--actual", out.toString());
        assertEquals(0, check.exit(), check.toString());
        List<String> lines = check.out().lines().toList();
        assertEquals(5, lines.size(), check.toString());
        assertTrue(lines.get(0).startsWith("check: PASS  max_abs_err "), check.toString());
        assertTrue(lines.get(1).startsWith("  case   " + c + " ("), check.toString());
        assertTrue(lines.get(2).startsWith("  actual " + out + " '<f4' "), check.toString());
        assertTrue(lines.get(3).startsWith("  limit = 2 x naive "), check.toString());
        assertTrue(lines.get(4).contains("cosine difference"), check.toString());
    }

    /** {@link Attnproof#execute} returns the command's exit code (here 2: a bad option value), which main exits with. */
    @Test
    void executeReturnsTheCommandsExitCode() {
        Path c = example();
        assertEquals(2, Attnproof.execute("check", "--case", c.toString(), "--actual",
                dir.resolve("missing.npy").toString()));
    }
}
