package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.SinksCase;
import io.attnproof.conformance.corpus.CaseSpec;
import io.attnproof.conformance.corpus.CheckSpec;
import io.attnproof.conformance.corpus.CorpusChecker;
import io.attnproof.conformance.corpus.Manifest;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claim F3's shrinker rules, with stand-in lanes that never run a kernel: each fault text has its class, a case is
 * judged pass / oracle / fault / outside, a shape round-trips through a dense or packed case, every candidate is
 * smaller or simpler in the documented way, the greedy pass follows only the same failure within its call budget, and
 * a shrunk case is written as a one-case corpus with the command that reproduces it.
 */
class ShrinkerRulesTest {
    static final Adapter ADAPTER = Adapter.read(KernelLaneTest.ADAPTER);

    /** A right kernel: the oracle's own output. */
    static KernelLibrary.Call right(SinksCase c) {
        return new KernelLibrary.Call(CaseChecker.flat(CaseChecker.reference(c).oracle()), null);
    }

    /** A wrong kernel: the oracle's output off by 1 everywhere (far over any limit). */
    static KernelLibrary.Call offByOne(SinksCase c) {
        double[] o = right(c).output();
        for (int i = 0; i < o.length; i++) {
            o[i] += 1;
        }
        return new KernelLibrary.Call(o, null);
    }

    static KernelLibrary.Call fault(String text) {
        return new KernelLibrary.Call(null, text);
    }

    // ---- shapes ------------------------------------------------------------------------------------------------

    /** [h][n][d] with element (t, s, h, r, e) = t*4000 + s*1000 + h*100 + r*10 + e/128 + 0.3: distinct, off grid. */
    static float[][][] coded(int t, int s, int h, int n, int d) {
        float[][][] x = new float[h][n][d];
        for (int y = 0; y < h; y++) {
            for (int r = 0; r < n; r++) {
                for (int e = 0; e < d; e++) {
                    x[y][r][e] = t * 4000 + s * 1000 + y * 100 + r * 10 + e / 128f + 0.3f;
                }
            }
        }
        return x;
    }

    /** The sequences' tensors as a list. */
    static List<float[][][]> seqs(float[][][]... x) {
        return List.of(x);
    }

    static float[][][] gauss(SplittableRandom r, int h, int n, int d) {
        return ShrinkerKeylessTest.fill(r, h, n, d);
    }

    /** [h][n][d] of one constant (on every value grid when an integer in [-2, 2]). */
    static float[][][] constant(float c, int h, int n, int d) {
        float[][][] x = new float[h][n][d];
        for (float[][] a : x) {
            for (float[] b : a) {
                Arrays.fill(b, c);
            }
        }
        return x;
    }

    /** A coded shape: sequence s has rows[s] query rows and keys[s] keys. */
    static Shrinker.Shape coded(boolean varlen, DType dtype, int window, float[] sinks, int hkv, int d, int[] rows,
            int[] keys, boolean vIsK) {
        List<float[][][]> q = new ArrayList<>(), k = new ArrayList<>(), v = new ArrayList<>();
        for (int s = 0; s < rows.length; s++) {
            q.add(coded(0, s, sinks.length, rows[s], d));
            k.add(coded(1, s, hkv, keys[s], d));
            v.add(vIsK ? k.getLast() : coded(2, s, hkv, keys[s], d));
        }
        return new Shrinker.Shape(varlen, dtype, window, sinks, q, k, v, vIsK);
    }

    /** A shape whose values and sinks are already as simple as the shrinker makes them (values 1, no sinks). */
    static Shrinker.Shape plain(boolean varlen, int hq, int hkv, int[] rows, int[] keys) {
        List<float[][][]> q = new ArrayList<>(), k = new ArrayList<>(), v = new ArrayList<>();
        for (int s = 0; s < rows.length; s++) {
            q.add(constant(1, hq, rows[s], 64));
            k.add(constant(1, hkv, keys[s], 64));
            v.add(constant(-1, hkv, keys[s], 64));
        }
        float[] sinks = new float[hq];
        Arrays.fill(sinks, Float.NEGATIVE_INFINITY);
        return new Shrinker.Shape(varlen, DType.F32, 0, sinks, q, k, v, false);
    }

    static void assertSameShape(Shrinker.Shape want, Shrinker.Shape got) {
        assertEquals(want.varlen(), got.varlen(), "varlen");
        assertEquals(want.dtype(), got.dtype(), "dtype");
        assertEquals(want.window(), got.window(), "window");
        assertArrayEquals(want.sinks(), got.sinks(), "sinks");
        assertEquals(want.vIsK(), got.vIsK(), "vIsK");
        assertEquals(want.sequences(), got.sequences(), "sequences");
        for (int s = 0; s < want.sequences(); s++) {
            assertTrue(Arrays.deepEquals(want.q().get(s), got.q().get(s)), "q of sequence " + s);
            assertTrue(Arrays.deepEquals(want.k().get(s), got.k().get(s)), "k of sequence " + s);
            assertTrue(Arrays.deepEquals(want.v().get(s), got.v().get(s)), "v of sequence " + s);
        }
    }

    static boolean sameShape(Shrinker.Shape a, Shrinker.Shape b) {
        try {
            assertSameShape(a, b);
            return true;
        } catch (AssertionError e) {
            return false;
        }
    }

    /** Every candidate of the adapter that applies to {@code s}, in the order tried. */
    static List<Shrinker.Shape> applying(Shrinker.Shape s) {
        List<Shrinker.Shape> out = new ArrayList<>();
        for (Function<Shrinker.Shape, Shrinker.Shape> f : Shrinker.candidates(ADAPTER)) {
            Shrinker.Shape n = f.apply(s);
            if (n != null) {
                assertFalse(sameShape(s, n), "a candidate gave the shape back unchanged: " + n.text());
                out.add(n);
            }
        }
        return out;
    }

    static String dense(int b, int hq, int hkv, int rows, int keys, int d, int window) {
        String r = String.join(",", java.util.Collections.nCopies(b, String.valueOf(rows)));
        String k = String.join(",", java.util.Collections.nCopies(b, String.valueOf(keys)));
        return "B=" + b + ", Hq=" + hq + ", Hkv=" + hkv + ", rows " + r + ", keys " + k + ", D=" + d + ", window "
                + window + ", F32";
    }

    // ---- faultClass, judge ---------------------------------------------------------------------------------------

    @Test
    void eachFaultTextHasItsClass() {
        Map<String, String> want = new LinkedHashMap<>();
        want.put("out-of-bounds read of k[4096] in kernel fa2_sinks_fwd", "out-of-bounds");
        want.put("Out-Of-Bounds write (any case)", "out-of-bounds");
        want.put("shared-memory race in kernel fa2_sinks_fwd, block (0,0,0): s_k[3] written by 1 and 2", "race");
        want.put("deadlock in kernel fa2_sinks_fwd, block (1,0,0): thread 0 waits at a barrier", "deadlock");
        want.put("launch of fa2_sinks_fwd refused: 2048 threads per block", "launch refusal");
        want.put("98304 bytes of dynamic shared memory, over the kernel's limit of 49152", "launch refusal");
        want.put("the checked and plain builds differ in 3 of 1024 elements", "checked/plain bits");
        want.put("fa2_sinks_fwd_f32 returned cudaError 700: an illegal memory access was encountered", "error");
        for (var e : want.entrySet()) {
            assertEquals(e.getValue(), Shrinker.faultClass(e.getKey()), e.getKey());
        }
    }

    @Test
    void aCaseIsJudgedPassOracleFaultOrOutside(@TempDir Path tmp) throws IOException {
        SinksCase c = Shrinker.toCase(ShrinkerKeylessTest.start());
        Shrinker.Verdict pass = Shrinker.judge(ADAPTER, new StandInLane(ShrinkerRulesTest::right), c);
        assertEquals("pass", pass.kind());
        assertTrue(pass.detail().startsWith("PASS"), pass.detail());
        Shrinker.Verdict oracle = Shrinker.judge(ADAPTER, new StandInLane(ShrinkerRulesTest::offByOne), c);
        assertEquals("oracle", oracle.kind());
        assertTrue(oracle.detail().startsWith("FAIL"), oracle.detail());
        String race = "shared-memory race in kernel fa2_sinks_fwd (stand-in)";
        Shrinker.Verdict faulted = Shrinker.judge(ADAPTER, new StandInLane(x -> fault(race)), c);
        assertEquals("race", faulted.kind());
        assertEquals(race, faulted.detail());
        // An adapter with no varlen entry: a varlen case is outside it, and the lane is never called.
        ObjectMapper json = new ObjectMapper();
        ObjectNode root = (ObjectNode) json.readTree(KernelLaneTest.ADAPTER.toFile());
        ArrayNode entries = (ArrayNode) root.get("entry_points");
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i).get("cases").asText().equals("varlen")) {
                entries.remove(i);
            }
        }
        for (var src : root.get("sources")) {
            Files.copy(KernelLaneTest.ADAPTER.resolveSibling(src.asText()), tmp.resolve(src.asText()));
        }
        Path file = tmp.resolve("dense-only.adapter.json");
        Files.writeString(file, json.writeValueAsString(root), StandardCharsets.UTF_8);
        Adapter denseOnly = Adapter.read(file);
        StandInLane never = new StandInLane(ShrinkerRulesTest::right);
        Shrinker.Verdict outside = Shrinker.judge(denseOnly,
                never, Shrinker.toCase(plain(true, 1, 1, new int[] {1, 2}, new int[] {2, 2})));
        assertEquals("outside", outside.kind());
        assertTrue(outside.detail().contains("varlen"), outside.detail());
        assertEquals(0, never.seen().size());
    }

    // ---- Shape.of / toCase / text --------------------------------------------------------------------------------

    @Test
    void aShapeRoundTripsThroughADenseCase() {
        for (boolean vIsK : new boolean[] {false, true}) {
            Shrinker.Shape s = coded(false, DType.F32, 2, new float[] {0.5f, Float.NEGATIVE_INFINITY, 1.25f, 0},
                    2, 8, new int[] {3, 3}, new int[] {5, 5}, vIsK);
            SinksCase c = Shrinker.toCase(s);
            assertFalse(c.varlen());
            assertNull(c.mask());
            assertEquals(2, c.window());
            assertArrayEquals(new int[] {2, 4, 3, 8}, c.q().shape());
            assertArrayEquals(new int[] {2, 2, 5, 8}, c.k().shape());
            assertArrayEquals(new int[] {2, 2, 5, 8}, c.v().shape());
            assertArrayEquals(s.sinks(), c.sinks().toFloatArray());
            assertEquals(vIsK, c.v() == c.k(), "v is k's handle exactly when the shape says so");
            float[] q = c.q().toFloatArray(), k = c.k().toFloatArray(), v = c.v().toFloatArray();
            for (int b = 0; b < 2; b++) {
                for (int h = 0; h < 4; h++) {
                    for (int r = 0; r < 3; r++) {
                        for (int e = 0; e < 8; e++) {
                            assertEquals(s.q().get(b)[h][r][e], q[((b * 4 + h) * 3 + r) * 8 + e]);
                        }
                    }
                }
                for (int h = 0; h < 2; h++) {
                    for (int r = 0; r < 5; r++) {
                        for (int e = 0; e < 8; e++) {
                            assertEquals(s.k().get(b)[h][r][e], k[((b * 2 + h) * 5 + r) * 8 + e]);
                            assertEquals(s.v().get(b)[h][r][e], v[((b * 2 + h) * 5 + r) * 8 + e]);
                        }
                    }
                }
            }
            assertSameShape(s, Shrinker.of(c));
        }
    }

    @Test
    void aShapeRoundTripsThroughAPackedVarlenCase() {
        int[] rows = {2, 1, 3}, keys = {3, 2, 5};
        for (boolean vIsK : new boolean[] {false, true}) {
            Shrinker.Shape s = coded(true, DType.F32, 0, new float[] {0.5f, -1, 2, Float.NEGATIVE_INFINITY}, 2, 8,
                    rows, keys, vIsK);
            SinksCase c = Shrinker.toCase(s);
            assertTrue(c.varlen());
            assertArrayEquals(new int[] {0, 2, 3, 6}, c.cuSeqlensQ());
            assertArrayEquals(new int[] {0, 3, 5, 10}, c.cuSeqlensK());
            assertArrayEquals(new int[] {6, 4, 8}, c.q().shape());
            assertArrayEquals(new int[] {10, 2, 8}, c.k().shape());
            assertEquals(vIsK, c.v() == c.k(), "v is k's handle exactly when the shape says so");
            float[] q = c.q().toFloatArray(), k = c.k().toFloatArray(), v = c.v().toFloatArray();
            int q0 = 0, k0 = 0;
            for (int x = 0; x < 3; x++) {
                for (int r = 0; r < rows[x]; r++) {
                    for (int h = 0; h < 4; h++) {
                        for (int e = 0; e < 8; e++) {
                            assertEquals(s.q().get(x)[h][r][e], q[((q0 + r) * 4 + h) * 8 + e]);
                        }
                    }
                }
                for (int r = 0; r < keys[x]; r++) {
                    for (int h = 0; h < 2; h++) {
                        for (int e = 0; e < 8; e++) {
                            assertEquals(s.k().get(x)[h][r][e], k[((k0 + r) * 2 + h) * 8 + e]);
                            assertEquals(s.v().get(x)[h][r][e], v[((k0 + r) * 2 + h) * 8 + e]);
                        }
                    }
                }
                q0 += rows[x];
                k0 += keys[x];
            }
            assertSameShape(s, Shrinker.of(c));
        }
    }

    @Test
    void aMaskedCaseHasNoShape() {
        SinksCase c = Shrinker.toCase(plain(false, 1, 1, new int[] {2}, new int[] {3}));
        SinksCase masked = new SinksCase(null, c.q(), c.k(), c.v(), c.sinks(),
                Tensor.of(new float[6], DType.F32, Device.CPU, 2, 3), 0, null, null, DType.F32);
        assertNull(Shrinker.of(masked));
        assertNotNull(Shrinker.of(c));
    }

    @Test
    void theShapeTextNamesTheLayoutSizesWindowAndDtype() {
        Shrinker.Shape d = coded(false, DType.F32, 2, new float[] {0, 0, 0, 0}, 2, 8, new int[] {3, 3},
                new int[] {5, 5}, false);
        assertEquals(dense(2, 4, 2, 3, 5, 8, 2), d.text());
        Shrinker.Shape v = coded(true, DType.F16, 0, new float[] {0, 0}, 1, 8, new int[] {2, 1, 3},
                new int[] {3, 2, 5}, true);
        assertEquals("varlen, 3 sequences, Hq=2, Hkv=1, rows 2,1,3, keys 3,2,5, D=8, window 0, F16", v.text());
    }

    // ---- candidates ----------------------------------------------------------------------------------------------

    /**
     * A GQA case (B 3, Hq 4 over Hkv 2, 5 rows over 7 keys, D 80, window 3, values off every grid, sinks): one
     * sequence, then the first two; one KV head with its query group; every KV head with one query head each; the
     * last / first 1, 2, 4 rows (the first rows drop the keys past their diagonal); the last keys (never fewer than the
     * rows); the envelope's smallest head dim; no window; values on the grids; sinks 0.
     */
    @Test
    void theCandidatesOfAGqaCaseAreTheDocumentedCutsInOrder() {
        float[] sinks = {0.5f, Float.NEGATIVE_INFINITY, 1.25f, 0};
        Shrinker.Shape s = coded(false, DType.F32, 3, sinks, 2, 80, new int[] {5, 5, 5}, new int[] {7, 7, 7}, false);
        List<Shrinker.Shape> got = applying(s);
        List<String> want = List.of(
                dense(1, 4, 2, 5, 7, 80, 3), dense(1, 4, 2, 5, 7, 80, 3), dense(1, 4, 2, 5, 7, 80, 3), // one sequence
                dense(2, 4, 2, 5, 7, 80, 3), // the first two
                dense(3, 2, 1, 5, 7, 80, 3), dense(3, 2, 1, 5, 7, 80, 3), // one KV head and its group
                dense(3, 2, 2, 5, 7, 80, 3), // every KV head, one query head each
                dense(3, 4, 2, 1, 7, 80, 3), dense(3, 4, 2, 1, 3, 80, 3), // last / first row
                dense(3, 4, 2, 2, 7, 80, 3), dense(3, 4, 2, 2, 4, 80, 3),
                dense(3, 4, 2, 4, 7, 80, 3), dense(3, 4, 2, 4, 6, 80, 3),
                dense(3, 4, 2, 5, 5, 80, 3), dense(3, 4, 2, 5, 5, 80, 3), dense(3, 4, 2, 5, 5, 80, 3), // keys 1, 2, 4
                dense(3, 4, 2, 5, 6, 80, 3), // one key fewer
                dense(3, 4, 2, 5, 7, 64, 3), // the smallest head dim
                dense(3, 4, 2, 5, 7, 80, 0), // no window
                dense(3, 4, 2, 5, 7, 80, 3), dense(3, 4, 2, 5, 7, 80, 3), // values on the grids
                dense(3, 4, 2, 5, 7, 80, 3)); // sinks 0
        assertEquals(want, got.stream().map(Shrinker.Shape::text).toList());
        for (int i = 0; i < 3; i++) {
            assertSame(s.q().get(i), got.get(i).q().getFirst(), "one sequence: sequence " + i);
            assertSame(s.k().get(i), got.get(i).k().getFirst());
            assertSame(s.v().get(i), got.get(i).v().getFirst());
        }
        assertEquals(List.of(s.q().get(0), s.q().get(1)), got.get(3).q());
        for (int kv = 0; kv < 2; kv++) {
            Shrinker.Shape g = got.get(4 + kv);
            assertArrayEquals(new float[] {sinks[2 * kv], sinks[2 * kv + 1]}, g.sinks(), "the group's sinks");
            for (int b = 0; b < 3; b++) {
                assertSame(s.q().get(b)[2 * kv], g.q().get(b)[0], "query head " + 2 * kv + " reads KV head " + kv);
                assertSame(s.q().get(b)[2 * kv + 1], g.q().get(b)[1]);
                assertSame(s.k().get(b)[kv], g.k().get(b)[0]);
                assertSame(s.v().get(b)[kv], g.v().get(b)[0]);
            }
        }
        Shrinker.Shape each = got.get(6);
        assertArrayEquals(new float[] {sinks[0], sinks[2]}, each.sinks());
        for (int b = 0; b < 3; b++) {
            assertSame(s.q().get(b)[0], each.q().get(b)[0], "the first query head of KV head 0's group");
            assertSame(s.q().get(b)[2], each.q().get(b)[1], "the first query head of KV head 1's group");
            assertSame(s.k().get(b)[1], each.k().get(b)[1]);
        }
        int[] ns = {1, 2, 4};
        for (int i = 0; i < 3; i++) {
            int n = ns[i];
            Shrinker.Shape last = got.get(7 + 2 * i), first = got.get(8 + 2 * i);
            for (int b = 0; b < 3; b++) {
                for (int h = 0; h < 4; h++) {
                    assertTrue(Arrays.deepEquals(Arrays.copyOfRange(s.q().get(b)[h], 5 - n, 5), last.q().get(b)[h]),
                            "the last " + n + " rows");
                    assertTrue(Arrays.deepEquals(Arrays.copyOfRange(s.q().get(b)[h], 0, n), first.q().get(b)[h]),
                            "the first " + n + " rows");
                }
                for (int h = 0; h < 2; h++) {
                    assertTrue(Arrays.deepEquals(s.k().get(b)[h], last.k().get(b)[h]), "every key for the last rows");
                    assertTrue(Arrays.deepEquals(Arrays.copyOfRange(s.k().get(b)[h], 0, 7 - (5 - n)),
                            first.k().get(b)[h]), "the keys up to the last kept row's diagonal");
                    assertTrue(Arrays.deepEquals(Arrays.copyOfRange(s.v().get(b)[h], 0, 7 - (5 - n)),
                            first.v().get(b)[h]));
                }
            }
        }
        for (int i = 13; i < 17; i++) {
            int keep = i == 16 ? 6 : 5;
            for (int b = 0; b < 3; b++) {
                for (int h = 0; h < 2; h++) {
                    assertTrue(Arrays.deepEquals(Arrays.copyOfRange(s.k().get(b)[h], 7 - keep, 7),
                            got.get(i).k().get(b)[h]),
                            "the last " + keep + " keys");
                    assertTrue(Arrays.deepEquals(Arrays.copyOfRange(s.v().get(b)[h], 7 - keep, 7),
                            got.get(i).v().get(b)[h]));
                }
            }
        }
        Shrinker.Shape dim = got.get(17);
        for (int b = 0; b < 3; b++) {
            for (int h = 0; h < 4; h++) {
                for (int r = 0; r < 5; r++) {
                    assertArrayEquals(Arrays.copyOf(s.q().get(b)[h][r], 64), dim.q().get(b)[h][r], "q's first 64");
                }
            }
            for (int h = 0; h < 2; h++) {
                for (int r = 0; r < 7; r++) {
                    assertArrayEquals(Arrays.copyOf(s.k().get(b)[h][r], 64), dim.k().get(b)[h][r], "k's first 64");
                    assertArrayEquals(Arrays.copyOf(s.v().get(b)[h][r], 64), dim.v().get(b)[h][r], "v's first 64");
                }
            }
        }
        assertSameShape(new Shrinker.Shape(false, DType.F32, 0, sinks, s.q(), s.k(), s.v(), false), got.get(18));
        for (int i = 19; i < 21; i++) {
            float step = i == 19 ? 0.25f : 1f, max = i == 19 ? 4 : 2;
            for (List<float[][][]> l : List.of(got.get(i).q(), got.get(i).k(), got.get(i).v())) {
                for (float[][][] x : l) {
                    for (float[][] y : x) {
                        for (float[] z : y) {
                            for (float e : z) {
                                assertTrue(Math.abs(e) <= max && e / step == Math.rint(e / step), "on the grid: " + e);
                            }
                        }
                    }
                }
            }
        }
        assertArrayEquals(new float[] {0, Float.NEGATIVE_INFINITY, 0, 0}, got.get(21).sinks(), "sinks 0, -inf kept");
        assertSame(s.q(), got.get(21).q());
    }

    /** One KV head (Hq 3): each single query head, then the first two; nothing else is simpler. */
    @Test
    void theCandidatesOfOneKvHeadCutQueryHeads() {
        Shrinker.Shape s = plain(false, 3, 1, new int[] {1}, new int[] {1});
        List<Shrinker.Shape> got = applying(s);
        assertEquals(List.of(dense(1, 1, 1, 1, 1, 64, 0), dense(1, 1, 1, 1, 1, 64, 0), dense(1, 1, 1, 1, 1, 64, 0),
                dense(1, 2, 1, 1, 1, 64, 0)), got.stream().map(Shrinker.Shape::text).toList());
        for (int h = 0; h < 3; h++) {
            assertSame(s.q().getFirst()[h], got.get(h).q().getFirst()[0]);
        }
        assertSame(s.q().getFirst()[1], got.get(3).q().getFirst()[1]);
        // Two query heads over one KV head, or as many query heads as KV heads: only the single heads are smaller.
        assertEquals(2, applying(plain(false, 2, 1, new int[] {1}, new int[] {1})).size());
        assertEquals(List.of(dense(1, 1, 1, 1, 1, 64, 0), dense(1, 1, 1, 1, 1, 64, 0)),
                applying(plain(false, 2, 2, new int[] {1}, new int[] {1})).stream().map(Shrinker.Shape::text).toList());
    }

    /**
     * Ten rows over four keys: the last 1, 2, 4, 8 rows with every key; the first rows only where a key is left past
     * the cut (8 rows over 4 - 2 keys); and the last tk + 1 rows (one keyless row).
     */
    @Test
    void theCandidatesOfACaseWithKeylessRowsKeepAKey() {
        Shrinker.Shape s = plain(false, 1, 1, new int[] {10}, new int[] {4});
        List<Shrinker.Shape> got = applying(s);
        assertEquals(List.of(dense(1, 1, 1, 1, 4, 64, 0), dense(1, 1, 1, 2, 4, 64, 0), dense(1, 1, 1, 4, 4, 64, 0),
                dense(1, 1, 1, 8, 4, 64, 0), dense(1, 1, 1, 8, 2, 64, 0), dense(1, 1, 1, 5, 4, 64, 0)),
                got.stream().map(Shrinker.Shape::text).toList());
        assertSame(s.q().getFirst()[0][5], got.getLast().q().getFirst()[0][0], "the last tk + 1 = 5 rows");
    }

    /** Packed sequences of different lengths: rows and keys cut per sequence, keys never below a sequence's rows. */
    @Test
    void theCandidatesOfAVarlenCaseCutEachSequence() {
        Shrinker.Shape s = plain(true, 1, 1, new int[] {1, 3}, new int[] {2, 6});
        List<String> got = applying(s).stream().map(Shrinker.Shape::text).toList();
        String p = "varlen, ";
        String t = ", Hq=1, Hkv=1, ";
        String e = ", D=64, window 0, F32";
        assertEquals(List.of(p + "1 sequences" + t + "rows 1, keys 2" + e, p + "1 sequences" + t + "rows 3, keys 6" + e,
                p + "2 sequences" + t + "rows 1,1, keys 2,6" + e, p + "2 sequences" + t + "rows 1,1, keys 2,4" + e,
                p + "2 sequences" + t + "rows 1,2, keys 2,6" + e, p + "2 sequences" + t + "rows 1,2, keys 2,5" + e,
                p + "2 sequences" + t + "rows 1,3, keys 1,3" + e, p + "2 sequences" + t + "rows 1,3, keys 2,3" + e,
                p + "2 sequences" + t + "rows 1,3, keys 2,4" + e, p + "2 sequences" + t + "rows 1,3, keys 2,5" + e),
                got);
    }

    /** Values rounded to quarters in [-4, 4], then integers in [-2, 2]; no candidate when already there. */
    @Test
    void theValueCandidatesRoundAndClampToTheirGrids() {
        float[] in = {0.3f, -0.6f, 1.125f, 5.1f, -7f, 0.25f, 2f, -1.9f};
        float[] quarters = {0.25f, -0.5f, 1.25f, 4f, -4f, 0.25f, 2f, -2f};
        float[] integers = {0f, -1f, 1f, 2f, -2f, 0f, 2f, -2f};
        Shrinker.Shape s = plain(false, 1, 1, new int[] {1}, new int[] {1});
        float[][][] q = constant(0, 1, 1, 64), k = constant(0, 1, 1, 64), v = constant(0, 1, 1, 64);
        for (int i = 0; i < in.length; i++) {
            q[0][0][i] = in[i];
            k[0][0][8 + i] = in[i];
            v[0][0][16 + i] = in[i];
        }
        s = new Shrinker.Shape(false, DType.F32, 0, s.sinks(), seqs(q), seqs(k), seqs(v), false);
        List<Shrinker.Shape> got = applying(s);
        assertEquals(2, got.size(), "the two value grids");
        for (int g = 0; g < 2; g++) {
            float[] want = g == 0 ? quarters : integers;
            for (int i = 0; i < in.length; i++) {
                assertEquals(want[i], got.get(g).q().getFirst()[0][0][i], "q " + in[i]);
                assertEquals(want[i], got.get(g).k().getFirst()[0][0][8 + i], "k " + in[i]);
                assertEquals(want[i], got.get(g).v().getFirst()[0][0][16 + i], "v " + in[i]);
            }
        }
        float[][][] onQuarters = constant(0, 1, 1, 64);
        onQuarters[0][0][0] = 0.75f;
        assertEquals(1, applying(new Shrinker.Shape(false, DType.F32, 0, s.sinks(), seqs(onQuarters), seqs(k),
                seqs(v), false)).stream().filter(x -> x.q().getFirst()[0][0][0] == 1f).count(),
                "quarters already: only the integer grid");
    }

    // ---- shrink --------------------------------------------------------------------------------------------------

    /**
     * Out-of-bounds on two sequences or more, a race on one: the shrink keeps two sequences (one sequence fails another
     * way) and cuts everything else to its smallest; twice the same shape in the same calls, each call counted.
     */
    @Test
    void theShrinkFollowsOnlyTheSameFailureDeterministically() {
        Shrinker.Shape start = coded(false, DType.F32, 3, new float[] {0.5f, Float.NEGATIVE_INFINITY, 1.25f, 0}, 2,
                80, new int[] {5, 5, 5}, new int[] {7, 7, 7}, false);
        Function<SinksCase, KernelLibrary.Call> rule = c -> fault(c.batch() >= 2
                ? "out-of-bounds write of out in kernel fa2_sinks_fwd" : "shared-memory race in kernel fa2_sinks_fwd");
        StandInLane one = new StandInLane(rule), two = new StandInLane(rule);
        Object[] a = Shrinker.shrink(ADAPTER, one, start, "out-of-bounds");
        Object[] b = Shrinker.shrink(ADAPTER, two, start, "out-of-bounds");
        Shrinker.Shape got = (Shrinker.Shape) a[0];
        assertEquals(dense(2, 1, 1, 1, 1, 64, 0), got.text());
        assertEquals("out-of-bounds", ((Shrinker.Verdict) a[1]).kind());
        assertEquals(one.seen().size(), a[2], "calls counted");
        assertTrue(one.seen().stream().anyMatch(c -> c.batch() == 1), "one sequence was tried");
        assertSameShape(got, (Shrinker.Shape) b[0]);
        assertEquals(a[2], b[2]);
    }

    /** No candidate fails the same way: the start is the result, judged once more (that call counted too). */
    @Test
    void aShrinkWithNoSmallerFailureKeepsTheStart() {
        Shrinker.Shape start = plain(false, 2, 1, new int[] {3}, new int[] {3});
        StandInLane lane = new StandInLane(c -> fault(c.queryHeads() == 2 && c.tq() == 3 && c.k().dim(2) == 3
                ? "deadlock in kernel fa2_sinks_fwd" : "out-of-bounds read (stand-in)"));
        Object[] r = Shrinker.shrink(ADAPTER, lane, start, "deadlock");
        assertSameShape(start, (Shrinker.Shape) r[0]);
        assertEquals("deadlock", ((Shrinker.Verdict) r[1]).kind());
        assertEquals(applying(start).size() + 1, r[2], "every candidate once, then the start");
        assertEquals(lane.seen().size(), r[2]);
    }

    /** A kernel that ignores the window: the shrink keeps the window (without it the output is right). */
    @Test
    void anOracleFailureShrinksWhileTheOracleCheckStillFails() {
        SplittableRandom r = new SplittableRandom(7);
        List<float[][][]> q = seqs(gauss(r, 2, 4, 80), gauss(r, 2, 4, 80));
        List<float[][][]> k = seqs(gauss(r, 1, 6, 80), gauss(r, 1, 6, 80));
        List<float[][][]> v = seqs(gauss(r, 1, 6, 80), gauss(r, 1, 6, 80));
        Shrinker.Shape start = new Shrinker.Shape(false, DType.F32, 1, new float[] {0.5f, -0.5f}, q, k, v, false);
        StandInLane lane = new StandInLane(c -> right(new SinksCase(null, c.q(), c.k(), c.v(), c.sinks(), null, 0, c.cuSeqlensQ(),
                c.cuSeqlensK(), c.dtype())));
        Object[] res = Shrinker.shrink(ADAPTER, lane, start, "oracle");
        Shrinker.Shape got = (Shrinker.Shape) res[0];
        assertEquals(1, got.window(), "the window stays: the failure needs it");
        assertEquals("oracle", ((Shrinker.Verdict) res[1]).kind());
        assertEquals("oracle", Shrinker.judge(ADAPTER, lane, Shrinker.toCase(got)).kind());
        assertEquals(List.of(1, 1, 1, 64), List.of(got.sequences(), got.qHeads(), got.kvHeads(), got.headDim()));
        assertTrue(got.maxKeys() > 1, "one key cannot tell a window: " + got.text());
    }

    /** A failure that needs more than 32 keys, from 200 keys one at a time: the shrink stops at its call budget. */
    @Test
    void aShrinkStopsAtItsCallBudget() {
        Shrinker.Shape start = plain(false, 1, 1, new int[] {1}, new int[] {200});
        StandInLane lane = new StandInLane(c -> fault(c.k().dim(2) > 32 ? "race (stand-in)" : "out-of-bounds (stand-in)"));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Shrinker.shrink(ADAPTER, lane, start, "race"));
        assertEquals(Shrinker.MAX_CALLS, lane.seen().size(), "kernel calls");
        assertTrue(e.getMessage().contains(start.text()) && e.getMessage().contains(" " + Shrinker.MAX_CALLS + " "),
                e.getMessage());
    }

    // ---- shrinkOne / shrinkAll -----------------------------------------------------------------------------------

    static Manifest.Entry entry(String id, SinksCase c) {
        return new Manifest.Entry(id, "F3", "sinks", c.dtype().name(), 4242L, "cases/" + id + "/case.json",
                c.outputShape(), "a case of " + id);
    }

    /** Writes {@code c} (with {@code mask} when not null) as case {@code id} of a corpus. */
    static Manifest.Entry write(Path corpus, String id, SinksCase c, float[] mask) {
        Map<String, CaseSpec.Arr> t = new LinkedHashMap<>();
        t.put("q", new CaseSpec.Arr(c.q().shape(), c.q().toFloatArray(), Npy.DType.F4));
        t.put("k", new CaseSpec.Arr(c.k().shape(), c.k().toFloatArray(), Npy.DType.F4));
        t.put("v", new CaseSpec.Arr(c.v().shape(), c.v().toFloatArray(), Npy.DType.F4));
        t.put("sinks", new CaseSpec.Arr(c.sinks().shape(), c.sinks().toFloatArray(), Npy.DType.F4));
        if (mask != null) {
            t.put("mask", new CaseSpec.Arr(new int[] {c.tq(), c.k().dim(2)}, mask, Npy.DType.F4));
        }
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("window", c.window());
        if (c.varlen()) {
            config.put("cu_seqlens_q", c.cuSeqlensQ());
            config.put("cu_seqlens_k", c.cuSeqlensK());
        }
        config.put("dtype", c.dtype().name());
        new CaseSpec(id, "F3", "sinks", c.dtype().name(), 4242L, "a case of " + id, t, config, new LinkedHashMap<>())
                .write(corpus.resolve("cases").resolve(id));
        return entry(id, c);
    }

    static void assertReproduces(Shrinker.Shrunk s, Path adapterFile, Manifest.Entry from, String want)
            throws IOException {
        Manifest m = Manifest.read(s.dir());
        assertEquals(1, m.cases().size());
        Manifest.Entry e = m.cases().getFirst();
        assertEquals("shrunk-" + from.id(), e.id());
        assertEquals(from.seed(), e.seed());
        SinksCase back = (SinksCase) CaseReader.readAny(s.dir().resolve(e.caseFile()));
        assertSameShape(s.shape(), Shrinker.of(back));
        assertArrayEquals(back.outputShape(), e.outputShape());
        assertEquals(1, m.checks().size());
        CheckSpec check = m.checks().getFirst();
        assertEquals(List.of("oracle", "pass", e.id()), List.of(check.type(), check.expect(), check.a().caseId()));
        Path dir = s.dir().toAbsolutePath().normalize();
        assertEquals("./attnproof kernel --adapter " + adapterFile.toAbsolutePath().normalize() + " --corpus " + dir
                + " --out " + dir.resolve("run"), s.command());
        List<String> lines = Files.readAllLines(s.dir().resolve("REPRODUCE"), StandardCharsets.UTF_8);
        assertEquals(3, lines.size(), lines.toString());
        assertEquals("# shrunk from " + from.id() + " (check " + s.checkId() + ", " + want + "): " + s.shape().text(),
                lines.get(0));
        assertTrue(lines.get(1).startsWith("# fails: " + want + ": "), lines.get(1));
        assertEquals(s.command(), lines.get(2));
        assertTrue(s.failure().startsWith(want + ": ")
                && s.summary().equals(s.shape().text() + "; still fails: " + want),
                s.failure() + " / " + s.summary());
    }

    @Test
    void shrinkOneWritesAOneCaseCorpusThatReproduces(@TempDir Path tmp) throws IOException {
        for (boolean vIsK : new boolean[] {false, true}) {
            SplittableRandom r = new SplittableRandom(11);
            float[][][] k = gauss(r, 1, 3, 64);
            Shrinker.Shape start = new Shrinker.Shape(false, DType.F32, 0, new float[] {0.5f, 1},
                    seqs(gauss(r, 2, 2, 64)), seqs(k),
                    seqs(vIsK ? k : gauss(r, 1, 3, 64)), vIsK);
            // One shrink on the oracle path (a wrong output), one on the fault path.
            String want = vIsK ? "out-of-bounds" : "oracle";
            String checkId = "F3:" + want + ":c" + vIsK;
            Path dir = tmp.resolve("F3_c" + vIsK);
            Files.createDirectories(dir.resolve("old"));
            Files.writeString(dir.resolve("old").resolve("stale.txt"), "from an earlier shrink");
            Manifest.Entry from = entry("c" + vIsK, Shrinker.toCase(start));
            StandInLane lane = new StandInLane(vIsK ? c -> fault("out-of-bounds read of k (stand-in)") : ShrinkerRulesTest::offByOne);
            Shrinker.Shrunk s = Shrinker.shrinkOne(ADAPTER, KernelLaneTest.ADAPTER, lane, start, want, "F3", checkId,
                    from, dir);
            assertNotNull(s);
            assertEquals(checkId, s.checkId());
            assertEquals(dir, s.dir());
            assertEquals(lane.seen().size(), s.calls());
            assertFalse(Files.exists(dir.resolve("old")), "an earlier shrink's files are gone");
            assertEquals(vIsK, s.shape().vIsK());
            String json = Files.readString(dir.resolve("cases").resolve("shrunk-" + from.id()).resolve("case.json"));
            assertEquals(!vIsK, json.contains("\"v\""), "the case names v unless v is k: " + json);
            assertReproduces(s, KernelLaneTest.ADAPTER, from, want);
        }
    }

    /**
     * Every failing single-case oracle or degenerate check, and every check whose case faulted, is shrunk once per
     * case into a folder named by the check; controls, checks against another case, pair checks without a fault and
     * masked cases are not.
     */
    @Test
    void shrinkAllShrinksEachFailingCaseOnce(@TempDir Path tmp) throws IOException {
        Path corpus = tmp.resolve("corpus");
        SplittableRandom r = new SplittableRandom(5);
        Map<String, SinksCase> cases = new LinkedHashMap<>();
        for (String id : List.of("d1", "d2", "c1", "c2", "c3", "m1")) {
            cases.put(id, Shrinker.toCase(new Shrinker.Shape(false, DType.F32, 0, new float[] {0.25f},
                    seqs(gauss(r, 1, 2, 64)), seqs(gauss(r, 1, 2, 64)), seqs(gauss(r, 1, 2, 64)), false)));
        }
        cases.put("v1", Shrinker.toCase(new Shrinker.Shape(true, DType.F32, 0, new float[] {0.25f},
                seqs(gauss(r, 1, 1, 64), gauss(r, 1, 2, 64)), seqs(gauss(r, 1, 2, 64), gauss(r, 1, 3, 64)),
                seqs(gauss(r, 1, 2, 64), gauss(r, 1, 3, 64)), false)));
        List<Manifest.Entry> entries = new ArrayList<>();
        for (var e : cases.entrySet()) {
            entries.add(write(corpus, e.getKey(), e.getValue(), e.getKey().equals("m1") ? new float[4] : null));
        }
        Files.writeString(corpus.resolve(Manifest.FILE), new Manifest(4242L, "test", entries, List.of()).toJson());
        List<CorpusChecker.Outcome> outcomes = new ArrayList<>();
        outcomes.add(failed("F3:oracle:d1", "oracle", "pass", "d1", null, null));
        outcomes.add(failed("F3:degenerate:d1", "degenerate", "pass", "d1", null, null));
        outcomes.add(failed("F3:control:c1", "oracle", "fail", "c1", null, null));
        outcomes.add(failed("F3:oracle:c2-against-c1", "oracle", "pass", "c2", null, "c1"));
        outcomes.add(failed("F3:same-within-rule:c3-c1", "same-within-rule", "pass", "c3", "c1", null));
        outcomes.add(failed("F3:same-bits:c3-v1", "same-bits", "pass", "c3", "v1", null));
        outcomes.add(failed("F3:degenerate:d2", "degenerate", "pass", "d2", null, null));
        outcomes.add(failed("F3:oracle:m1", "oracle", "pass", "m1", null, null));
        outcomes.add(new CorpusChecker.Outcome(new CheckSpec("F3:oracle:c3", "F3", "oracle", "pass",
                new CheckSpec.Sel("c3", -1, -1, -1, -1), null, null, "passes"), true, 2, "PASS"));
        CorpusChecker.Result res = new CorpusChecker.Result(Manifest.read(corpus), outcomes, null, 0, List.of());
        Map<String, String> faults = Map.of("v1", "out-of-bounds read of k in kernel fa2_sinks_varlen_f32");
        StandInLane lane = new StandInLane(c -> c.varlen() ? fault("out-of-bounds read (stand-in)") : offByOne(c));
        Path into = tmp.resolve("shrunk");
        List<Shrinker.Shrunk> got = Shrinker.shrinkAll(corpus, ADAPTER, KernelLaneTest.ADAPTER, lane, res, faults,
                into);
        assertEquals(List.of("F3:oracle:d1", "F3:same-bits:c3-v1", "F3:degenerate:d2"),
                got.stream().map(Shrinker.Shrunk::checkId).toList());
        assertEquals(List.of(into.resolve("F3_oracle_d1"), into.resolve("F3_same-bits_c3-v1"),
                into.resolve("F3_degenerate_d2")), got.stream().map(Shrinker.Shrunk::dir).toList());
        Map<String, Manifest.Entry> byId = new LinkedHashMap<>();
        entries.forEach(e -> byId.put(e.id(), e));
        assertReproduces(got.get(0), KernelLaneTest.ADAPTER, byId.get("d1"), "oracle");
        assertReproduces(got.get(1), KernelLaneTest.ADAPTER, byId.get("v1"), "out-of-bounds");
        assertReproduces(got.get(2), KernelLaneTest.ADAPTER, byId.get("d2"), "oracle");
        assertTrue(got.get(1).shape().varlen());
    }

    static CorpusChecker.Outcome failed(String id, String type, String expect, String a, String b, String against) {
        return new CorpusChecker.Outcome(new CheckSpec(id, "F3", type, expect, new CheckSpec.Sel(a, -1, -1, -1, -1),
                b == null ? null : new CheckSpec.Sel(b, -1, -1, -1, -1), against, "a failing check"), false, 0.5,
                "FAIL");
    }
}
