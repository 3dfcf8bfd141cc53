package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.AttnCase;
import io.attnproof.conformance.cases.SinksCase;
import io.attnproof.conformance.corpus.KernelFixtureCorpus;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host side's own rules of the kernel lanes, without a build: bf16 bits round to nearest even and keep NaN a
 * quiet NaN, the output buffer starts all NaN, a caller mask broadcasts to [B, Hq, tq, tk], the integer scalars a
 * launcher takes come from the case, a case outside the adapter's envelope gets the reason that names what is outside,
 * the checked and plain lanes must agree bit for bit (the plain lane runs only where the checked one did not fault),
 * and a merge keeps every shard's faults.
 */
class KernelHostRulesTest {
    static final Device CPU = Device.CPU;
    static final ObjectMapper JSON = new ObjectMapper();

    /** A float whose raw bits are {@code bits}. */
    static float f(int bits) {
        return Float.intBitsToFloat(bits);
    }

    @Test
    void bf16BitsAreTheUpperHalfRoundedToNearestEvenAndNaNStaysAQuietNaN() {
        // Exactly representable values (lower 16 bits zero) are their upper 16 bits.
        for (float x : new float[] {1.0f, -2.5f, 0.0f, -0.0f, 65536.0f}) {
            assertEquals(Float.floatToRawIntBits(x) >>> 16, KernelLibrary.bf16Bits(x), "bf16 of " + x);
        }
        // 1 + 2^-8 lies halfway between bf16 1.0 (0x3f80, even) and 1 + 2^-7 (0x3f81): to even, down.
        assertEquals(0x3f80, KernelLibrary.bf16Bits(f(0x3f808000)), "a tie goes to the even neighbour below");
        // 1 + 3 * 2^-8 lies halfway between 0x3f81 (odd) and 0x3f82 (even): to even, up.
        assertEquals(0x3f82, KernelLibrary.bf16Bits(f(0x3f818000)), "a tie goes to the even neighbour above");
        assertEquals(0x3f81, KernelLibrary.bf16Bits(f(0x3f808001)), "just above a tie rounds up");
        assertEquals(0x3f80, KernelLibrary.bf16Bits(f(0x3f807fff)), "just below a tie rounds down");
        assertEquals(0x4000, KernelLibrary.bf16Bits(f(0x3fff8000)), "a tie below 2 carries into the exponent: 2.0");
        assertEquals(0xbf82, KernelLibrary.bf16Bits(f(0xbf818000)), "negative values round the same way, sign kept");
        // Infinity is not a NaN: it stays infinity.
        assertEquals(0x7f80, KernelLibrary.bf16Bits(Float.POSITIVE_INFINITY), "+inf");
        assertEquals(0xff80, KernelLibrary.bf16Bits(Float.NEGATIVE_INFINITY), "-inf");
        // A NaN whose payload sits only in the lower half would truncate to infinity: it stays a NaN, quiet bit set.
        assertEquals(0x7fc0, KernelLibrary.bf16Bits(f(0x7f800001)), "a signalling NaN becomes quiet, not infinity");
        assertEquals(0xffc1, KernelLibrary.bf16Bits(f(0xff810000)), "sign and upper payload kept, quiet bit set");
        assertEquals(0x7fc0, KernelLibrary.bf16Bits(Float.NaN), "the canonical quiet NaN");
    }

    @Test
    void theOutputBufferStartsAllNaN() {
        float[] f = KernelLibrary.nan(5);
        assertEquals(5, f.length);
        for (float x : f) {
            assertTrue(Float.isNaN(x), Arrays.toString(f));
        }
    }

    static Tensor zeros(int... shape) {
        return Tensor.zeros(DType.F32, CPU, shape);
    }

    /** A tensor of {@code shape} holding 0, 1, 2, ... (each element names its own flat index). */
    static Tensor iota(int... shape) {
        Tensor t = zeros(shape);
        for (int i = 0; i < t.numel(); i++) {
            t.setFlat(i, i);
        }
        return t;
    }

    static Tensor sinks(float... s) {
        return Tensor.of(s, DType.F32, CPU, s.length);
    }

    static float[] noSinks(int h) {
        float[] s = new float[h];
        Arrays.fill(s, Float.NEGATIVE_INFINITY);
        return s;
    }

    /** A dense case q[B,Hq,tq,D], k = v [B,Hkv,tk,D] (or a distinct v), no sinks. */
    static SinksCase dense(int b, int hq, int hkv, int tq, int tk, int d, DType dtype, Tensor mask, boolean distinctV,
            float[] sinks) {
        Tensor k = zeros(b, hkv, tk, d);
        return new SinksCase(null, zeros(b, hq, tq, d), k, distinctV ? zeros(b, hkv, tk, d) : k, sinks(sinks), mask, 0,
                null, null, dtype);
    }

    /** A varlen case with the given cumulative sequence lengths, q[totalQ,Hq,D], k = v [totalK,Hkv,D]. */
    static SinksCase varlen(int[] cuQ, int[] cuK, int hq, int hkv, int d, int window) {
        Tensor k = zeros(cuK[cuK.length - 1], hkv, d);
        return new SinksCase(null, zeros(cuQ[cuQ.length - 1], hq, d), k, k, sinks(noSinks(hq)), null, window, cuQ, cuK,
                DType.F32);
    }

    @Test
    void aCallerMaskIsBroadcastToBatchHeadsQueryRowsAndKeys() {
        int b = 2, h = 3, tq = 2, tk = 3;
        for (int[] shape : List.of(new int[] {tq, tk}, new int[] {b, h, tq, tk}, new int[] {1, h, 1, tk},
                new int[] {b, 1, tq, tk}, new int[] {1, 1, 1, tk})) {
            Tensor m = iota(shape);
            SinksCase c = dense(b, h, 1, tq, tk, 4, DType.F32, m, false, noSinks(h));
            int[] s = shape.length == 2 ? new int[] {1, 1, tq, tk} : shape;
            Tensor m4 = m.reshape(s);
            float[] want = new float[b * h * tq * tk];
            int i = 0;
            for (int x = 0; x < b; x++) {
                for (int y = 0; y < h; y++) {
                    for (int r = 0; r < tq; r++) {
                        for (int j = 0; j < tk; j++) {
                            // A dimension of extent 1 broadcasts: every index reads its one row.
                            want[i++] = m4.get(s[0] == 1 ? 0 : x, s[1] == 1 ? 0 : y, s[2] == 1 ? 0 : r, j);
                        }
                    }
                }
            }
            assertArrayEquals(want, KernelLibrary.denseMask(c), "mask " + Arrays.toString(shape) + " to ["
                    + b + ", " + h + ", " + tq + ", " + tk + "]");
        }
        // A full [B, Hq, tq, tk] mask is itself, element for element.
        Tensor full = iota(b, h, tq, tk);
        assertArrayEquals(full.toFloatArray(), KernelLibrary.denseMask(dense(b, h, 1, tq, tk, 4, DType.F32, full, false,
                noSinks(h))));
    }

    @Test
    void theIntegerScalarsComeFromTheCase() {
        // Query sequences of 2, 1 and 4 rows; key sequences of 5, 1 and 3 (the longest first, not last).
        int[] qLens = {2, 1, 4};
        int[] kLens = {5, 1, 3};
        int[] cuQ = new int[qLens.length + 1];
        int[] cuK = new int[kLens.length + 1];
        for (int i = 0; i < qLens.length; i++) {
            cuQ[i + 1] = cuQ[i] + qLens[i];
            cuK[i + 1] = cuK[i] + kLens[i];
        }
        SinksCase c = varlen(cuQ, cuK, 4, 2, 8, 0);
        Adapter a = adapter("takes", -1, List.of());
        assertEquals(Arrays.stream(kLens).max().getAsInt(), KernelLibrary.scalar(a, "max_k", c), "the longest key run");
        assertEquals(Arrays.stream(qLens).max().getAsInt(), KernelLibrary.scalar(a, "max_q", c), "the longest query run");
        assertEquals(Arrays.stream(qLens).sum(), KernelLibrary.scalar(a, "total_q", c), "every query row");
        assertEquals(Arrays.stream(kLens).sum(), KernelLibrary.scalar(a, "total_k", c), "every key row");
        assertEquals(qLens.length, KernelLibrary.scalar(a, "sequences", c));
        assertEquals(4, KernelLibrary.scalar(a, "q_heads", c));
        assertEquals(2, KernelLibrary.scalar(a, "kv_heads", c));
        assertEquals(8, KernelLibrary.scalar(a, "head_dim", c));
        assertEquals(-1, KernelLibrary.scalar(a, "window", c), "window 0 (none) is passed as the adapter's no_window");
        assertEquals(7, KernelLibrary.scalar(a, "window", varlen(cuQ, cuK, 4, 2, 8, 7)), "a window is passed as is");
        SinksCase d = dense(2, 4, 2, 3, 5, 8, DType.F32, null, false, noSinks(4));
        assertEquals(2, KernelLibrary.scalar(a, "batch", d));
        assertEquals(3, KernelLibrary.scalar(a, "q_len", d));
        assertEquals(5, KernelLibrary.scalar(a, "kv_len", d));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KernelLibrary.scalar(a, "scale", c));
        assertTrue(e.getMessage().contains("scale") && e.getMessage().contains("not an integer scalar"),
                e.getMessage());
    }

    static Adapter.Arg tensor(String what) {
        return new Adapter.Arg("tensor", what, "input", "dense", what.equals("sinks") ? "null" : null);
    }

    static Adapter.Entry entry(String cases, String... tensors) {
        List<Adapter.Arg> args = new ArrayList<>();
        for (String t : tensors) {
            args.add(tensor(t));
        }
        return new Adapter.Entry(cases, "k_{dtype}", "cudaError_t", args, null, List.of(), Map.of(), List.of());
    }

    static Adapter adapter(String maskPolicy, long noWindow, List<Adapter.Entry> entries) {
        return new Adapter(Path.of("a.adapter.json"), "a", "cuda", List.of(Path.of("a.cu")), Map.of("F32", "f32"),
                List.of(4, 8), noWindow, maskPolicy, maskPolicy.equals("takes") ? null : "the host's reference path",
                entries);
    }

    @Test
    void aCaseOutsideTheEnvelopeGetsTheReasonNamingWhatIsOutside() throws IOException {
        Adapter all = adapter("none", 0, List.of(entry("dense", "q", "k", "v", "sinks", "out"),
                entry("varlen", "q", "k", "v", "sinks", "out")));
        SinksCase inside = dense(1, 2, 1, 2, 3, 4, DType.F32, null, true, new float[] {0.5f, Float.NEGATIVE_INFINITY});
        assertNull(KernelRun.outside(all, inside), "a case inside the envelope has no reason");
        AttnCase union = new AttnCase(null, null, null, null, null, null, null, null, 0, 0, null, DType.F32);
        assertTrue(KernelRun.outside(all, union).startsWith("kind union"), KernelRun.outside(all, union));

        SinksCase v = varlen(new int[] {0, 2, 5}, new int[] {0, 3, 4}, 2, 1, 4, 0);
        String noDense = KernelRun.outside(adapter("none", 0, List.of(entry("varlen", "q", "k", "out"))), inside);
        assertTrue(noDense.startsWith("dense: ") && noDense.contains("no entry point for dense cases"), noDense);
        String noVarlen = KernelRun.outside(adapter("none", 0, List.of(entry("dense", "q", "k", "out"))), v);
        assertTrue(noVarlen.startsWith("varlen: ") && noVarlen.contains("no entry point for varlen cases"), noVarlen);

        // Entries of the layout exist but none's "when" admits the case (here: only q_len 1).
        var when = JSON.readTree("{\"eq\": [\"q_len\", 1]}");
        List<Adapter.Entry> decodeOnly = new ArrayList<>();
        for (String layout : List.of("dense", "varlen")) {
            decodeOnly.add(new Adapter.Entry(layout, "k", "void", List.of(tensor("q"), tensor("k"), tensor("out")),
                    when, List.of(), Map.of(), List.of()));
        }
        Adapter decode = adapter("none", 0, decodeOnly);
        String denseWhen = KernelRun.outside(decode, inside);
        assertTrue(denseWhen.startsWith("dense q_len " + inside.tq() + ", kv_len " + inside.k().dim(2) + ": ")
                && denseWhen.contains("no dense entry's \"when\" admits the case"), denseWhen);
        String varlenWhen = KernelRun.outside(decode, v);
        assertTrue(varlenWhen.startsWith("varlen q_len " + v.tq() + ", kv_len varlen: ")
                && varlenWhen.contains("no varlen entry's \"when\" admits the case"), varlenWhen);

        SinksCase f16 = dense(1, 2, 1, 2, 3, 4, DType.F16, null, false, noSinks(2));
        String dtype = KernelRun.outside(all, f16);
        assertTrue(dtype.startsWith("dtype F16 outside the adapter's dtypes [F32]"), dtype);

        Tensor mask = zeros(2, 3);
        SinksCase masked = dense(1, 2, 1, 2, 3, 4, DType.F32, mask, false, noSinks(2));
        String none = KernelRun.outside(all, masked);
        assertTrue(none.startsWith("masked: the kernel has no mask parameter")
                && none.endsWith("routes masked calls to the host's reference path"), none);
        Adapter refuses = adapter("refuses", 0, List.of(entry("dense", "q", "k", "v", "sinks", "out")));
        String refused = KernelRun.outside(refuses, masked);
        assertTrue(refused.startsWith("masked: the kernel refuses masks"), refused);
        Adapter takes = adapter("takes", 0, List.of(entry("dense", "q", "k", "v", "sinks", "out", "mask")));
        assertNull(KernelRun.outside(takes, masked), "a kernel that takes masks runs a masked case");

        Adapter noV = adapter("none", 0, List.of(entry("dense", "q", "k", "sinks", "out")));
        String distinct = KernelRun.outside(noV, inside);
        assertTrue(distinct.startsWith("a distinct V: the kernel takes no v"), distinct);
        assertNull(KernelRun.outside(noV, dense(1, 2, 1, 2, 3, 4, DType.F32, null, false, noSinks(2))),
                "v = k runs on a kernel that reads V from k");

        Adapter noSinks = adapter("none", 0, List.of(entry("dense", "q", "k", "v", "out")));
        String live = KernelRun.outside(noSinks, inside);
        assertTrue(live.startsWith("live sinks: the kernel takes no sinks argument"), live);
        assertNull(KernelRun.outside(noSinks, dense(1, 2, 1, 2, 3, 4, DType.F32, null, true, noSinks(2))),
                "every sink -inf (none) runs on a kernel without a sinks argument");
    }

    @Test
    void theCheckedAndPlainLanesMustAgreeBitForBit() {
        double[] same = {1.0, Double.NaN, -0.0, 2.5};
        assertNull(KernelRun.bitsDiffer(same, same.clone()), "identical bits (a NaN included) agree");
        // 0.0 and -0.0 compare equal but differ in their sign bit; 2.0 and 2.5 differ in value.
        double[] checked = {1.0, 0.0, Double.NaN, 2.0, 3.0};
        double[] plain = {1.0, -0.0, Double.NaN, 2.5, 3.0};
        String d = KernelRun.bitsDiffer(checked, plain);
        assertNotNull(d, "a sign bit differs");
        assertTrue(d.contains(" 2 of " + checked.length + " elements") && d.contains("first at flat index 1 (checked "
                + checked[1] + ", plain " + plain[1] + ")"), d);
        // The first difference at index 0 stays the first one named when later elements differ too.
        String atZero = KernelRun.bitsDiffer(new double[] {0.0, 1.0, 2.0}, new double[] {-0.0, 1.0, 5.0});
        assertTrue(atZero.contains(" 2 of 3 elements") && atZero.contains("first at flat index 0 "), atZero);
    }

    static double[] zerosOf(SinksCase c) {
        return new double[Arrays.stream(c.outputShape()).reduce(1, (x, y) -> x * y)];
    }

    @Test
    void thePlainLaneRunsWhereTheCheckedOneDidNotFaultAndAnyDisagreementIsTheCaseFault(@TempDir Path tmp)
            throws IOException {
        Path corpus = tmp.resolve("corpus");
        List<String> ids = KernelFixtureCorpus.writeDecodes(corpus, 1, 1);
        List<String> inside = ids.subList(0, 1);
        Adapter adapter = Adapter.read(KernelLaneTest.ADAPTER);
        KernelRun.Shard all = new KernelRun.Shard(1, 1);
        List<SinksCase> checkedCalls = new ArrayList<>();
        List<SinksCase> plainCalls = new ArrayList<>();

        // Both lanes agree: every inside case ran, on both lanes; the wall time is the run's own.
        KernelLane zeros = new StandInLane("checked", c -> new KernelLibrary.Call(zerosOf(c), null), checkedCalls);
        long t0 = System.nanoTime();
        KernelRun.Result agree = KernelRun.run(corpus, tmp.resolve("agree"), adapter, zeros,
                new StandInLane("plain", c -> new KernelLibrary.Call(zerosOf(c), null), plainCalls), all);
        double wall = (System.nanoTime() - t0) / 1e9;
        assertEquals(inside, agree.ran());
        assertEquals(List.of(), List.copyOf(agree.faults().keySet()));
        assertEquals(inside.size(), plainCalls.size(), "the plain lane is called on each case the checked lane ran");
        assertTrue(agree.seconds() >= 0 && agree.seconds() <= wall, agree.seconds() + " s within " + wall + " s");

        // No plain lane: the checked lane alone.
        KernelRun.Result alone = KernelRun.run(corpus, tmp.resolve("alone"), adapter, zeros, null, all);
        assertEquals(inside, alone.ran());

        // The plain lane's bits differ: each case is a fault naming the difference.
        KernelRun.Result differ = KernelRun.run(corpus, tmp.resolve("differ"), adapter, zeros,
                new StandInLane("plain", c -> {
                    double[] o = zerosOf(c);
                    o[o.length - 1] = 1.0;
                    return new KernelLibrary.Call(o, null);
                }, plainCalls), all);
        assertEquals(List.of(), differ.ran());
        assertEquals(inside, List.copyOf(differ.faults().keySet()));
        differ.faults().values().forEach(f -> assertTrue(f.startsWith("the checked and plain builds differ in 1 of "),
                f));

        // The plain lane faults alone: the case's fault says so.
        KernelRun.Result plainFault = KernelRun.run(corpus, tmp.resolve("plain-fault"), adapter, zeros,
                new StandInLane("plain", c -> new KernelLibrary.Call(null, "race on out[3]"), plainCalls), all);
        assertEquals(inside, List.copyOf(plainFault.faults().keySet()));
        plainFault.faults().values().forEach(f -> assertEquals("the plain build faulted where the checked one did not:"
                + " race on out[3]", f));

        // The checked lane faults: that is the fault, and the plain lane is not called.
        int before = plainCalls.size();
        KernelRun.Result checkedFault = KernelRun.run(corpus, tmp.resolve("checked-fault"), adapter,
                new StandInLane("checked", c -> new KernelLibrary.Call(null, "out-of-bounds read"), checkedCalls),
                new StandInLane("plain", c -> new KernelLibrary.Call(zerosOf(c), null), plainCalls), all);
        assertEquals(before, plainCalls.size(), "no plain call after a checked fault");
        checkedFault.faults().values().forEach(f -> assertEquals("out-of-bounds read", f));
        assertEquals(ids.subList(1, 2), List.copyOf(checkedFault.skipped().keySet()));

        // A merge of that shard keeps its faults and its SKIP reasons.
        KernelRun.Result merged = KernelRun.merge(List.of(tmp.resolve("checked-fault")), tmp.resolve("merged"));
        assertEquals(checkedFault.faults(), merged.faults());
        assertEquals(checkedFault.skipped(), merged.skipped());
    }
}
