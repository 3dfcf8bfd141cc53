package io.attnproof.conformance.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cases.ExampleCase;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input to {@code run} and {@code check}: one error line naming the file and the field, exit code 2, nothing
 * written (no output file for run, nothing on stdout for check).
 */
class CaseBadInputTest {
    @TempDir
    Path dir;

    /** An edit of the example case's directory, and what the error line must name. */
    record Breakage(String name, Consumer<Path> edit, String file, String field, String detail) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static void rewriteCase(Path caseDir, String from, String to) {
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

    private static void io(IoEdit edit) {
        try {
            edit.run();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    interface IoEdit {
        void run() throws IOException;
    }

    static Stream<Arguments> breakages() {
        String config = "\"config\": {\"ratio\": 4, \"window\": 8, \"rawPrefix\": 0, \"dtype\": \"F32\"}";
        return Stream.of(
                new Breakage("malformed JSON", d -> rewriteCase(d, "\"k\": \"k.npy\",", "\"k\": \"k.npy\",,"),
                        "case.json", null, "malformed JSON"),
                new Breakage("not an object", d -> io(() -> Files.writeString(d.resolve("case.json"), "[1, 2]")),
                        "case.json", null, "must be a JSON object"),
                new Breakage("missing npy", d -> io(() -> Files.delete(d.resolve("k.npy"))),
                        "case.json", "k", "k.npy: no such file"),
                new Breakage("truncated npy", d -> io(() -> {
                    byte[] b = Files.readAllBytes(d.resolve("q.npy"));
                    Files.write(d.resolve("q.npy"), Arrays.copyOf(b, b.length - 10));
                }), "case.json", "q", "q.npy: truncated"),
                new Breakage("truncated npy header", d -> io(() -> {
                    byte[] b = Files.readAllBytes(d.resolve("sinks.npy"));
                    Files.write(d.resolve("sinks.npy"), Arrays.copyOf(b, 40));
                }), "case.json", "sinks", "truncated: the header announces"),
                new Breakage("wrong dtype i4", d -> io(() -> {
                    byte[] b = Files.readAllBytes(d.resolve("k.npy"));
                    String s = new String(b, StandardCharsets.ISO_8859_1).replace("'<f4'", "'<i4'");
                    Files.write(d.resolve("k.npy"), s.getBytes(StandardCharsets.ISO_8859_1));
                }), "case.json", "k", "dtype '<i4' is not supported"),
                new Breakage("float16 in an F32 case", d -> Npy.write(d.resolve("sinks.npy"), Npy.DType.F2,
                        new int[] {2}, new float[] {0.5f, -1f}), "case.json", "sinks", "'<f2' (float16) contradicts"),
                new Breakage("wrong shape", d -> Npy.write(d.resolve("k.npy"), Npy.DType.F4, new int[] {2, 2, 20, 8},
                        new float[640]), "case.json", "k", "shape (2, 2, 20, 8) must be [B=2, 1, tk, D=8]"),
                new Breakage("sinks per KV head", d -> Npy.write(d.resolve("sinks.npy"), Npy.DType.F4, new int[] {1},
                        new float[] {0.5f}), "case.json", "sinks", "must be [H=2]"),
                new Breakage("non-finite sink", d -> Npy.write(d.resolve("sinks.npy"), Npy.DType.F4, new int[] {2},
                        new float[] {Float.NaN, 0f}), "case.json", "sinks", "must be finite"),
                new Breakage("rowQ0 of the wrong width", d -> rewriteCase(d, "\"rawPrefix\": 0,",
                        "\"rawPrefix\": 0, \"rowQ0\": [16],"), "case.json", "config.rowQ0", "the batch B = 2"),
                new Breakage("rowQ0 ahead of the batch", d -> rewriteCase(d, "\"rawPrefix\": 0,",
                        "\"rawPrefix\": 0, \"rowQ0\": [16, 17],"), "case.json", "config.rowQ0", "ahead of the batch"),
                new Breakage("no row at the end column", d -> rewriteCase(d, "\"rawPrefix\": 0,",
                        "\"rawPrefix\": 0, \"rowQ0\": [10, 12],"), "case.json", "config.rowQ0", "end column"),
                new Breakage("compressed blocks on a ratio-0 layer", d -> rewriteCase(d, "\"ratio\": 4", "\"ratio\": 0"),
                        "case.json", "compressed_kv", "ratio = 0 has no compressed columns"),
                new Breakage("ratio not in V4", d -> rewriteCase(d, "\"ratio\": 4", "\"ratio\": 8"),
                        "case.json", "config.ratio", "not a V4 compression ratio"),
                new Breakage("rawPrefix leaves the keep span", d -> rewriteCase(d, "\"window\": 8, \"rawPrefix\": 0",
                        "\"window\": 20, \"rawPrefix\": 3"), "case.json", "config.rawPrefix", "must hold at least 23 keys"),
                new Breakage("window missing", d -> rewriteCase(d, "\"window\": 8, ", ""),
                        "case.json", "config.window", "missing"),
                new Breakage("dtype F64", d -> rewriteCase(d, "\"F32\"", "\"F64\""),
                        "case.json", "config.dtype", "F64 must be F32, F16 or BF16"),
                new Breakage("unknown field", d -> rewriteCase(d, config, config + ", \"values\": \"v.npy\""),
                        "case.json", "values", "unknown field"),
                new Breakage("queries outnumber the keys", d -> Npy.write(d.resolve("k.npy"), Npy.DType.F4,
                        new int[] {2, 1, 3, 8}, new float[48]), "case.json", "q", "exceeds t_k_full"),
                new Breakage("mask of the wrong width", d -> {
                    Npy.write(d.resolve("mask.npy"), Npy.DType.F4, new int[] {4, 21}, new float[84]);
                    rewriteCase(d, "\"sinks\": \"sinks.npy\",", "\"sinks\": \"sinks.npy\", \"mask\": \"mask.npy\",");
                }, "case.json", "mask", "n = t_k_full = 20 or t_k_full + t_c = 25"))
                .map(Arguments::of);
    }

    private Path brokenExample(Breakage b) {
        Path caseFile = dir.resolve("case").resolve("case.json");
        ExampleCase.write(caseFile);
        b.edit().accept(caseFile.getParent());
        return caseFile;
    }

    private static void assertOneLine(Cli cli, String command, Breakage b) {
        assertEquals(2, cli.exit(), cli.toString());
        String err = cli.err();
        assertTrue(err.endsWith("\n") && err.indexOf('\n') == err.length() - 1, "one line: " + cli);
        assertTrue(err.startsWith("attnproof " + command + ": "), cli.toString());
        assertTrue(err.contains(b.file()), "names the file " + b.file() + ": " + cli);
        if (b.field() != null) {
            assertTrue(err.contains("\"" + b.field() + "\": "), "names the field " + b.field() + ": " + cli);
        }
        assertTrue(err.contains(b.detail()), "says " + b.detail() + ": " + cli);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("breakages")
    void runRefusesWithOneLineExit2AndWritesNothing(Breakage b) {
        Path caseFile = brokenExample(b);
        Path out = dir.resolve("out.npy");
        Cli cli = Cli.run("run", "--case", caseFile.toString(), "--out", out.toString());
        assertOneLine(cli, "run", b);
        assertTrue(cli.out().isEmpty(), cli.toString());
        assertFalse(Files.exists(out), "nothing written: " + out);
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(1, left.count(), "no partial file beside the case dir");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("breakages")
    void checkRefusesWithOneLineAndExit2(Breakage b) throws IOException {
        Path good = dir.resolve("good").resolve("case.json");
        ExampleCase.write(good);
        Path actual = dir.resolve("actual.npy");
        assertEquals(0, Cli.run("run", "--case", good.toString(), "--out", actual.toString()).exit());
        Path caseFile = brokenExample(b);
        Cli cli = Cli.run("check", "--case", caseFile.toString(), "--actual", actual.toString());
        assertOneLine(cli, "check", b);
        assertTrue(cli.out().isEmpty(), cli.toString());
    }

    @Test
    void checkRefusesABadActualNamingIt() throws IOException {
        Path caseFile = dir.resolve("tiny").resolve("case.json");
        ExampleCase.write(caseFile);
        Path missing = dir.resolve("missing.npy");
        Cli m = Cli.run("check", "--case", caseFile.toString(), "--actual", missing.toString());
        assertEquals(2, m.exit(), m.toString());
        assertEquals("attnproof check: " + missing + ": \"--actual\": no such file\n", m.err());

        Path wrongShape = dir.resolve("wrong-shape.npy");
        Npy.write(wrongShape, Npy.DType.F4, new int[] {2, 2, 4, 7}, new float[112]);
        Cli s = Cli.run("check", "--case", caseFile.toString(), "--actual", wrongShape.toString());
        assertEquals(2, s.exit(), s.toString());
        assertTrue(s.err().contains("wrong-shape.npy: \"--actual\": shape (2, 2, 4, 7) must be the case's output"
                + " shape [B, H, tq, D] = (2, 2, 4, 8)"), s.toString());

        Path half = dir.resolve("half.npy");
        Npy.write(half, Npy.DType.F2, new int[] {2, 2, 4, 8}, new float[128]);
        Cli h = Cli.run("check", "--case", caseFile.toString(), "--actual", half.toString());
        assertEquals(2, h.exit(), h.toString());
        assertTrue(h.err().contains("'<f2' (float16) cannot hold a F32 output"), h.toString());

        Path truncated = dir.resolve("truncated.npy");
        Npy.write(truncated, Npy.DType.F4, new int[] {2, 2, 4, 8}, new float[128]);
        byte[] bytes = Files.readAllBytes(truncated);
        Files.write(truncated, Arrays.copyOf(bytes, bytes.length - 1));
        Cli t = Cli.run("check", "--case", caseFile.toString(), "--actual", truncated.toString());
        assertEquals(2, t.exit(), t.toString());
        assertTrue(t.err().contains("truncated.npy: \"--actual\": truncated"), t.toString());
        assertTrue(t.out().isEmpty(), t.toString());
    }

    @Test
    void aMissingCaseFileOrOptionIsAnError() {
        Cli c = Cli.run("run", "--case", dir.resolve("nope.json").toString(), "--out", dir.resolve("o.npy").toString());
        assertEquals(2, c.exit(), c.toString());
        assertTrue(c.err().contains("nope.json: no such case file"), c.toString());
        Cli usage = Cli.run("check", "--case", "x.json");
        assertEquals(2, usage.exit(), usage.toString());
        assertTrue(usage.err().contains("Missing required option: '--actual=ACTUAL.npy'"), usage.toString());
    }
}
