package io.attnproof.conformance.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The sinks kind of case (dense with a mask, packed varlen) through {@code run} and {@code check}, with the same
 * bad-input discipline as the union kind; NaN inputs refused by element unless a canary slot; '<f8' and big-endian
 * outputs read; NaN positions and the cosine difference reported.
 */
class SinksCaseTest {
    @TempDir
    static Path corpus;

    @TempDir
    Path dir;

    @BeforeAll
    static void export() {
        assertEquals(0, Cli.run("corpus", "export", corpus.resolve("c").toString(), "--claims", "S1,S6,U3", "--dtype",
                "F32").exit());
    }

    private Path copy(String caseId) throws IOException {
        Path from = corpus.resolve("c").resolve("cases").resolve(caseId);
        Path to = dir.resolve(caseId);
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path p : s.toList()) {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
        return to.resolve("case.json");
    }

    private Cli runThenCheck(Path caseFile, Path out) {
        Cli run = Cli.run("run", "--case", caseFile.toString(), "--out", out.toString());
        assertEquals(0, run.exit(), run.toString());
        return Cli.run("check", "--case", caseFile.toString(), "--actual", out.toString());
    }

    @Test
    void denseMaskedAndVarlenCasesRunAndPass() throws IOException {
        for (String id : new String[] {"S1-d64-masked-F32", "S6-varlen-w3-F32"}) {
            Cli check = runThenCheck(copy(id), dir.resolve(id + ".npy"));
            assertEquals(0, check.exit(), check.toString());
            assertTrue(check.out().startsWith("check: PASS"), check.toString());
            assertTrue(check.out().contains("NaN/inf positions match the oracle's; cosine difference"), check.toString());
        }
    }

    /**
     * A dense case may have more query rows than keys (bottom-right alignment, kv_offset = tk - tq < 0): rows
     * r < tq - tk admit no key and are zero, with a -inf sink (head 0) or a live one (head 1); the rows with keys are
     * not. Control: one NaN in a keyless row fails the check.
     */
    @Test
    void aDenseCaseWithMoreQueriesThanKeysRunsAndItsKeylessRowsAreZero() throws IOException {
        Path d = Files.createDirectories(dir.resolve("keyless"));
        java.util.SplittableRandom r = new java.util.SplittableRandom(29_200);
        float[] q = new float[2 * 6 * 64];
        float[] k = new float[2 * 64];
        for (float[] x : new float[][] {q, k}) {
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) r.nextGaussian();
            }
        }
        Npy.write(d.resolve("q.npy"), Npy.DType.F4, new int[] {1, 2, 6, 64}, q);
        Npy.write(d.resolve("k.npy"), Npy.DType.F4, new int[] {1, 1, 2, 64}, k);
        Npy.write(d.resolve("sinks.npy"), Npy.DType.F4, new int[] {2}, new float[] {Float.NEGATIVE_INFINITY, 0.5f});
        Path c = d.resolve("case.json");
        Files.writeString(c, "{\"description\": \"tq 6 over tk 2\", \"kind\": \"sinks\", \"q\": \"q.npy\", \"k\":"
                + " \"k.npy\", \"sinks\": \"sinks.npy\", \"config\": {\"window\": 0, \"dtype\": \"F32\"}}\n",
                StandardCharsets.UTF_8);
        Path out = dir.resolve("keyless.npy");
        Cli check = runThenCheck(c, out);
        assertEquals(0, check.exit(), check.toString());
        float[] o = Npy.read(out).data();
        for (int h = 0; h < 2; h++) {
            for (int row = 0; row < 6; row++) {
                double max = 0;
                for (int x = 0; x < 64; x++) {
                    max = Math.max(max, Math.abs(o[(h * 6 + row) * 64 + x]));
                }
                assertEquals(row < 4, max == 0, "head " + h + " row " + row + ": max |output| " + max);
            }
        }
        o[2 * 64] = Float.NaN; // head 0, row 2: keyless
        Path nan = dir.resolve("keyless-nan.npy");
        Npy.write(nan, Npy.DType.F4, new int[] {1, 2, 6, 64}, o);
        Cli bad = Cli.run("check", "--case", c.toString(), "--actual", nan.toString());
        assertEquals(1, bad.exit(), bad.toString());
        assertTrue(bad.out().contains("1 NaN/inf positions differ from the oracle's, first at (b=0, h=0, r=2, c=0)"),
                bad.toString());
    }

    @Test
    void float64AndBigEndianOutputsAreReadAndNaNPositionsMustMatch() throws IOException {
        Path c = copy("S6-varlen-w0-F32");
        Path out = dir.resolve("o.npy");
        assertEquals(0, runThenCheck(c, out).exit());
        Npy.Array a = Npy.read(out);
        for (Npy.DType t : new Npy.DType[] {Npy.DType.F8, Npy.DType.F4_BE, Npy.DType.F8_BE}) {
            Path o = dir.resolve("o-" + t + ".npy");
            Npy.write(o, t, a.shape(), a.data());
            Cli check = Cli.run("check", "--case", c.toString(), "--actual", o.toString());
            assertEquals(0, check.exit(), t + ": " + check);
            assertTrue(check.out().contains("'" + t.descr() + "'"), check.toString());
        }
        float[] nan = a.data().clone();
        nan[5] = Float.NaN;
        Path o = dir.resolve("nan.npy");
        Npy.write(o, Npy.DType.F4, a.shape(), nan);
        Cli check = Cli.run("check", "--case", c.toString(), "--actual", o.toString());
        assertEquals(1, check.exit(), check.toString());
        assertTrue(check.out().contains("1 NaN/inf positions differ from the oracle's, first at (b=0, h=0, r=0, c=5)"),
                check.toString());
        // NaN everywhere: no position where both are finite, so the error over them is 0; the verdict line says so and
        // counts the positions, never "exact".
        float[] allNaN = new float[nan.length];
        java.util.Arrays.fill(allNaN, Float.NaN);
        Path o2 = dir.resolve("all-nan.npy");
        Npy.write(o2, Npy.DType.F4, a.shape(), allNaN);
        Cli all = Cli.run("check", "--case", c.toString(), "--actual", o2.toString());
        assertEquals(1, all.exit(), all.toString());
        String verdict = all.out().lines().filter(l -> l.startsWith("check: ")).findFirst().orElseThrow();
        assertTrue(verdict.startsWith("check: FAIL  max_abs_err 0.000e+00") && verdict.contains(
                "at (no position where both are finite)") && verdict.endsWith(allNaN.length
                + " NaN/inf positions differ from the oracle's, first at (b=0, h=0, r=0, c=0)"), verdict);
    }

    @Test
    void canarySlotsMayHoldNaNAndAnyOtherNonFiniteInputIsRefusedByElement() throws IOException {
        Path whole = copy("U3-whole-F32");
        Cli ok = runThenCheck(whole, dir.resolve("w.npy"));
        assertEquals(0, ok.exit(), ok.toString());
        String text = Files.readString(whole);
        Files.writeString(whole, text.replaceAll("\"canary\": \\{[^}]*\\},\\n", ""), StandardCharsets.UTF_8);
        Path out = dir.resolve("refused.npy");
        Cli run = Cli.run("run", "--case", whole.toString(), "--out", out.toString());
        assertEquals(2, run.exit(), run.toString());
        assertTrue(run.err().contains("\"k\": ") && run.err().contains("element (0, 0, 0, 0) = NaN is not finite"),
                run.toString());
        assertFalse(Files.exists(out));
    }

    record Breakage(String name, Consumer<Path> edit, String field, String detail) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static void rewrite(Path caseDir, String from, String to) {
        try {
            Path c = caseDir.resolve("case.json");
            String text = Files.readString(c);
            if (!text.contains(from)) {
                throw new AssertionError("case.json lacks " + from + ":\n" + text);
            }
            Files.writeString(c, text.replace(from, to), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static Stream<Arguments> breakages() {
        return Stream.of(
                new Breakage("unknown kind", d -> rewrite(d, "\"kind\": \"sinks\"", "\"kind\": \"paged\""), "kind",
                        "must be \"union\" (the default) or \"sinks\""),
                new Breakage("cu_seqlens short of the packed rows", d -> rewrite(d, "[0, 3, 7, 9]", "[0, 3, 7, 8]"),
                        "config.cu_seqlens_q", "ends at 8, but q packs 9 rows"),
                new Breakage("cu_seqlens decreasing", d -> rewrite(d, "[0, 5, 9, 16]", "[0, 9, 5, 16]"),
                        "config.cu_seqlens_k", "entry 2 = 5 < entry 1 = 9"),
                new Breakage("only one cu_seqlens", d -> rewrite(d, ", \"cu_seqlens_k\": [0, 5, 9, 16]", ""),
                        "config.cu_seqlens_k", "missing"),
                new Breakage("more queries than keys", d -> rewrite(d, "[0, 5, 9, 16]", "[0, 2, 9, 16]"),
                        "config.cu_seqlens_q", "sequence 0 has 3 query rows but 2 keys"),
                new Breakage("a mask on a varlen case", d -> {
                    Npy.write(d.resolve("mask.npy"), Npy.DType.F4, new int[] {9, 16}, new float[144]);
                    rewrite(d, "\"sinks\": \"sinks.npy\",", "\"sinks\": \"sinks.npy\", \"mask\": \"mask.npy\",");
                }, "mask", "takes no mask"),
                new Breakage("unknown config field", d -> rewrite(d, "\"window\": 3", "\"window\": 3, \"ratio\": 4"),
                        "config.ratio", "unknown field"),
                new Breakage("+inf sink", d -> Npy.write(d.resolve("sinks.npy"), Npy.DType.F4, new int[] {4},
                        new float[] {0, Float.POSITIVE_INFINITY, 0, 0}), "sinks", "sinks[1] = Infinity must be finite"),
                new Breakage("KV heads not dividing", d -> Npy.write(d.resolve("k.npy"), Npy.DType.F4,
                        new int[] {16, 3, 16}, new float[768]), "k", "a multiple of Hkv"),
                new Breakage("NaN query", d -> {
                    Npy.Array q = Npy.read(d.resolve("q.npy"));
                    float[] x = q.data().clone();
                    x[70] = Float.NaN;
                    Npy.write(d.resolve("q.npy"), Npy.DType.F4, q.shape(), x);
                }, "q", "element (1, 0, 6) = NaN is not finite"))
                .map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("breakages")
    void badSinksInputIsOneLineNamingFileAndFieldExit2AndNothingWritten(Breakage b) throws IOException {
        Path c = copy("S6-varlen-w3-F32");
        b.edit().accept(c.getParent());
        Path out = dir.resolve("out.npy");
        for (String command : new String[] {"run", "check"}) {
            Cli cli = command.equals("run") ? Cli.run("run", "--case", c.toString(), "--out", out.toString())
                    : Cli.run("check", "--case", c.toString(), "--actual", out.toString());
            assertEquals(2, cli.exit(), cli.toString());
            String err = cli.err();
            assertTrue(err.endsWith("\n") && err.indexOf('\n') == err.length() - 1, "one line: " + cli);
            assertTrue(err.startsWith("attnproof " + command + ": ") && err.contains("case.json"), cli.toString());
            assertTrue(err.contains("\"" + b.field() + "\": "), "names the field " + b.field() + ": " + cli);
            assertTrue(err.contains(b.detail()), "says " + b.detail() + ": " + cli);
            assertFalse(Files.exists(out), "nothing written");
        }
    }
}
