package io.attnproof.conformance.cases;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.npy.Npy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A union case file is accepted exactly when it keeps README "Cases"' rules, at each rule's boundary; a refusal names
 * the case file, the field, the value and the rule.
 */
class CaseReaderRulesTest {
    /** q [B=2, H=2, tq=2, D=2], k [2, 1, tk=4, 2], sinks [2]: t_k_full = 4, q0 = 2. */
    static final int B = 2, H = 2, TQ = 2, TK = 4, D = 2;
    static final String TENSORS = "'q': 'q.npy', 'k': 'k.npy', 'sinks': 'sinks.npy'";

    @TempDir
    Path dir;
    CaseFiles files;

    @BeforeEach
    void inputs() {
        files = new CaseFiles(dir).npy("q", B, H, TQ, D).npy("k", B, 1, TK, D).npy("sinks", H);
    }

    static String union(String extra, String config) {
        return "{" + TENSORS + extra + ", 'config': {" + config + "}}";
    }

    static String config(int window, int rawPrefix) {
        return "'ratio': 0, 'window': " + window + ", 'rawPrefix': " + rawPrefix + ", 'dtype': 'F32'";
    }

    AttnCase read(String json) {
        return assertInstanceOf(AttnCase.class, files.read(json));
    }

    @Test
    void aMissingConfigOrOneThatIsNoObjectIsRefused() {
        files.refused("{" + TENSORS + "}", "config", "missing: the layer config {ratio, window, rawPrefix, dtype");
        files.refused("{" + TENSORS + ", 'config': 5}", "config", "must be an object {ratio, window, rawPrefix, dtype"
                + "[, rowQ0]}, found 5");
    }

    @Test
    void aValueOfTheWrongJsonKindIsNamedByItsKind() {
        String cfg = config(4, 0);
        files.refused(union(", 'description': null", cfg), "description", "must be a string, found null");
        files.refused(union(", 'description': {}", cfg), "description", "must be a string, found an object");
        files.refused(union(", 'description': [1]", cfg), "description", "must be a string, found an array");
        files.refused(union(", 'description': true", cfg), "description", "must be a string, found true");
        files.refused(union(", 'kind': 'dense'", cfg), "kind", "the string \"dense\" must be \"union\"");
    }

    @Test
    void integersAreCheckedAtTheirBoundsAndNamedAsGiven() {
        assertEquals(1, read(union("", config(1, 0))).window(), "window 1 is the least window");
        assertEquals(0, read(union("", config(4, 0))).rawPrefix(), "rawPrefix 0 is the least rawPrefix");
        assertEquals(Integer.MAX_VALUE, read(union("", config(Integer.MAX_VALUE, 0))).window(),
                "the largest int is an int");
        files.refused(union("", config(0, 0)), "config.window", "0.0 must be an integer >= 1");
        files.refused(union("", config(4, 0).replace("'window': 4", "'window': 2.5")), "config.window",
                "2.5 must be an integer >= 1");
        files.refused(union("", config(4, 0).replace("'window': 4", "'window': '4'")), "config.window",
                "\"4\" must be an integer >= 1");
        files.refused(union("", config(4, 0).replace("'window': 4", "'window': " + (Integer.MAX_VALUE + 1L))),
                "config.window", (double) (Integer.MAX_VALUE + 1L) + " must be an integer >= 1");
    }

    @Test
    void asManyQueriesAsKeysIsAcceptedOneMoreIsNot() {
        files.npy("q", B, H, TK, D);
        assertEquals(TK, read(union("", config(4, 0))).tq());
        files.npy("q", B, H, TK + 1, D);
        files.refused(union("", config(4, 0)), "q", "tq = " + (TK + 1) + " (q.npy) exceeds t_k_full");
    }

    @Test
    void aRawPrefixBeforeThePassedKeysNamesTheKeepSpan() {
        int window = 4;
        int rawPrefix = 1;
        long tkFull = rawPrefix + TK;
        long keep = Math.min(TQ + window - 1, tkFull);
        files.refused(union("", config(window, rawPrefix)), "config.rawPrefix", rawPrefix + " leaves the raw keep span ["
                + (tkFull - keep) + ", " + tkFull + ") of tq = " + TQ + ", W = " + window
                + " partly before the passed keys: k (k.npy) must hold at least " + keep + " keys, it holds " + TK);
    }

    @Test
    void rowQ0EntriesAreJudgedAtZeroAndAtTheLargestInt() {
        long q0 = TK - TQ;
        assertArrayEquals(new long[] {0, q0}, read(union("", config(4, 0) + ", 'rowQ0': [0, " + q0 + "]")).rowQ0());
        files.refused(union("", config(4, 0) + ", 'rowQ0': [-1, " + q0 + "]"), "config.rowQ0",
                "entry 0 = -1.0 must be an integer >= 0");
        files.refused(union("", config(4, 0) + ", 'rowQ0': [" + Integer.MAX_VALUE + ", " + q0 + "]"), "config.rowQ0",
                "entry 0 = " + Integer.MAX_VALUE + " is ahead of the batch: it must be <= q0 = rawPrefix + tk - tq = " + q0);
    }

    @Test
    void maskShapesOfSystemMdAreAcceptedAndNoOther() {
        String masked = union(", 'mask': 'mask.npy'", config(4, 0));
        for (int[] ok : new int[][] {{B, H, TQ, TK}, {1, 1, 1, TK}, {1, H, 1, TK}, {B, 1, TQ, TK}, {TQ, TK}}) {
            files.npy("mask", ok);
            assertArrayEquals(ok, read(masked).mask().shape());
        }
        for (int[] bad : new int[][] {{B + 1, H, TQ, TK}, {B, H + 1, TQ, TK}, {B, H, TQ + 1, TK}, {B, H, TQ, TK + 1},
                {TQ + 1, TK}, {TQ, TK - 1}, {1, TQ, TK}}) {
            files.npy("mask", bad);
            files.refused(masked, "mask", "mask.npy: shape " + Npy.shapeText(bad) + " must be a 1-element placeholder");
        }
        files.npy("mask", new int[] {TQ, TK}, CaseFiles.withAt(TQ * TK, 0, Float.NEGATIVE_INFINITY));
        assertArrayEquals(new int[] {TQ, TK}, read(masked).mask().shape(), "-inf masks a key out");
        files.npy("mask", new int[] {TQ, TK}, CaseFiles.withAt(TQ * TK, 3, Float.NaN));
        files.refused(masked, "mask", "mask.npy: element 3 = NaN must be finite or -inf");
        files.npy("mask", new int[] {TQ, TK}, CaseFiles.withAt(TQ * TK, 5, Float.POSITIVE_INFINITY));
        files.refused(masked, "mask", "mask.npy: element 5 = Infinity must be finite or -inf");
    }

    @Test
    void aMaskMayCoverTheCompressedColumnsToo() {
        int tk = 8;
        int tc = 2;
        files.npy("k", B, 1, tk, D).npy("compressed_kv", B, 1, tc, D);
        String masked = "{" + TENSORS + ", 'compressed_kv': 'compressed_kv.npy', 'mask': 'mask.npy', 'config': "
                + "{'ratio': 4, 'window': 4, 'rawPrefix': 0, 'dtype': 'F32'}}";
        files.npy("mask", TQ, tk + tc);
        assertEquals(tc, read(masked).tc());
        files.npy("mask", TQ, tk + tc + 1);
        files.refused(masked, "mask", "n = t_k_full = " + tk + " or t_k_full + t_c = " + (tk + tc));
    }

    @Test
    void aNonFiniteInputOutsideTheCanarySlotsIsRefusedByElement() {
        int n = B * H * TQ * D;
        int at = ((0 * H + 1) * TQ + 0) * D + 0; // (0, 1, 0, 0)
        files.npy("q", new int[] {B, H, TQ, D}, CaseFiles.withAt(n, at, Float.NaN));
        files.refused(union("", config(4, 0)), "q", "q.npy: element (0, 1, 0, 0) = NaN is not finite");
        assertEquals(TQ, read(union(", 'canary': {'q': [[0, 1]]}", config(4, 0))).tq(), "a marked slot is accepted");
        assertEquals(TQ, read(union(", 'canary': {'q': [[0, 1, 0, 0]]}", config(4, 0))).tq(),
                "a prefix as long as the rank marks one element");
        files.refused(union(", 'canary': {'q': [[0, 0]]}", config(4, 0)), "q", "element (0, 1, 0, 0) = NaN");
        files.refused(union(", 'canary': {'q': [[0, 1, 0, 0, 0]]}", config(4, 0)), "canary.q",
                "entry an array must be an index prefix of 1 to 4 integers into shape (2, 2, 2, 2)");

        files.npy("q", B, H, TQ, D).npy("v", new int[] {B, 1, TK, D}, CaseFiles.withAt(B * TK * D, 7,
                Float.POSITIVE_INFINITY));
        files.refused(union(", 'v': 'v.npy'", config(4, 0)), "v", "v.npy: element (0, 0, 3, 1) = Infinity is not finite");
        assertFalse(read(union(", 'v': 'v.npy', 'canary': {'v': [[0, 0, 3]]}", config(4, 0))).vIsK(),
                "a canary may lie in a given v");
        files.refused(union(", 'canary': {'v': [[0]]}", config(4, 0)), "canary.v", "names no input tensor of the case");
        files.refused(union(", 'canary': {'compressed_kv': [[0]]}", config(4, 0)), "canary.compressed_kv",
                "names no input tensor of the case");
    }

    @Test
    void compressedBlocksAreCheckedAgainstTheirOwnShape() {
        int tk = 8;
        int tc = 2;
        files.npy("k", B, 1, tk, D).npy("compressed_kv", new int[] {B, 1, tc, D}, CaseFiles.withAt(B * tc * D, 2,
                Float.NEGATIVE_INFINITY));
        String csa = "{" + TENSORS + ", 'compressed_kv': 'compressed_kv.npy'%s, 'config': "
                + "{'ratio': 4, 'window': 4, 'rawPrefix': 0, 'dtype': 'F32'}}";
        files.refused(csa.formatted(""), "compressed_kv", "compressed_kv.npy: element (0, 0, 1, 0) = -Infinity is not finite");
        assertEquals(tc, read(csa.formatted(", 'canary': {'compressed_kv': [[0, 0, 1]]}")).tc());
        files.refused(csa.formatted(", 'canary': {'compressed_kv': [[0, 0, " + tc + "]]}"), "canary.compressed_kv",
                "index " + (double) tc + " at axis 2 must be an integer in [0, " + tc + ") of shape (2, 1, 2, 2)");
    }

    @Test
    void canarySlotsAreDeclaredOrNot() {
        CaseReader.readAny(files.json(union("", config(4, 0))));
        Npy.Array q = Npy.read(dir.resolve("q.npy"));
        CaseReader reader = readerOf(dir.resolve("case.json"));
        assertFalse(Canary.parse(reader, null, Map.of("q", q), false, false).any());
        assertTrue(Canary.parse(reader, Map.of("q", List.of(List.of(0.0))), Map.of("q", q), false, false).any());
    }

    private static CaseReader readerOf(Path file) {
        try {
            var c = CaseReader.class.getDeclaredConstructor(Path.class);
            c.setAccessible(true);
            return c.newInstance(file);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void describeNamesShapesConfigRowQ0AndWhetherVIsK() {
        long q0 = TK - TQ;
        String shapes = "B=" + B + " H=" + H + " tq=" + TQ + " tk=" + TK + " tc=0 D=" + D + ", ratio 0, W 4, rawPrefix 0";
        assertEquals(shapes + ", F32, v = k", read(union("", config(4, 0))).describe());
        assertEquals(shapes + ", rowQ0 [0, " + q0 + "], F32, v = k",
                read(union("", config(4, 0) + ", 'rowQ0': [0, " + q0 + "]")).describe());
        files.npy("v", B, 1, TK, D);
        assertEquals(shapes + ", F32", read(union(", 'v': 'v.npy'", config(4, 0))).describe());
    }

    @Test
    void theExampleGeneratorWritesTheExampleIntoItsDirectory() throws Exception {
        Path out = dir.resolve("example");
        ExampleCase.main(new String[] {out.toString()});
        assertTrue(Files.exists(out.resolve("case.json")));
        AttnCase c = CaseReader.read(out.resolve("case.json"));
        assertArrayEquals(new int[] {ExampleCase.BATCH, ExampleCase.HEADS, ExampleCase.TQ, ExampleCase.HEAD_DIM},
                c.outputShape());
        assertNull(c.rowQ0());
    }
}
