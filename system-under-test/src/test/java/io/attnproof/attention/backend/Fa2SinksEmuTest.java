package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.SplittableRandom;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Claim N6 on a second, independent kernel family: {@code examples/kernels/cuda/fa2_sinks.cu}, an FA2-style sinks
 * prefill + varlen kernel in standard CUDA C++ (templates over dtype and head dim, one warp per query row, K/V tiles in
 * extern __shared__, shuffles inside the per-row key loop, warps past q_len skipping it, extern "C" launchers with
 * {@code <<<>>>}), built unchanged through the front end (FrontEnd) and called through FFM as an engine's host calls
 * it: cudaMalloc, cudaMemcpy, the launcher, cudaMemcpy back. Judged against the fp64 oracle under the tolerance rule;
 * control: the same launch without its sinks must disagree by more than the limit.
 */
@Timeout(600)
class Fa2SinksEmuTest {
    static final Path SOURCE = FrontEnd.REPO.resolve("examples/kernels/cuda/fa2_sinks.cu");
    static final Linker LINKER = Linker.nativeLinker();
    static final ValueLayout.OfInt I = ValueLayout.JAVA_INT;
    static final java.lang.foreign.AddressLayout A = ValueLayout.ADDRESS;
    static SymbolLookup lib;

    @BeforeAll
    static void build() throws Exception {
        assumeTrue(FrontEnd.unavailableReason() == null, () -> "SKIP: " + FrontEnd.unavailableReason());
        lib = SymbolLookup.libraryLookup(FrontEnd.build(SOURCE, "fa2_sinks"), Arena.global());
    }

    static MethodHandle fn(String name, FunctionDescriptor d) {
        return LINKER.downcallHandle(lib.find(name).orElseThrow(() -> new AssertionError("no symbol " + name)), d);
    }

    /** The precision's element bits and their float values (round to nearest even, as the kernel's converts). */
    static int bytes(Precision p) {
        return p == Precision.F32 ? 4 : 2;
    }

    static double round(Precision p, double x) {
        float f = (float) x;
        return switch (p) {
            case F32 -> f;
            case F16 -> Float.float16ToFloat(Float.floatToFloat16(f));
            case BF16 -> Float.intBitsToFloat(bf16Bits(f) << 16);
            default -> throw new IllegalArgumentException("precision = " + p + " must be F32, F16 or BF16");
        };
    }

    static int bf16Bits(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fffffff) > 0x7f800000) {
            return ((u >>> 16) | 0x40) & 0xffff;
        }
        return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
    }

    static double[][][][] tensor(SplittableRandom rnd, Precision p, int a, int b, int c, int d) {
        double[][][][] t = new double[a][b][c][d];
        for (double[][][] x : t) for (double[][] y : x) for (double[] z : y) for (int i = 0; i < d; i++) {
            z[i] = round(p, gaussian(rnd));
        }
        return t;
    }

    static double gaussian(SplittableRandom rnd) {
        double u = rnd.nextDouble(1e-12, 1.0), v = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }

    /** Device memory holding {@code values} in precision p (cudaMalloc + cudaMemcpy host to device). */
    static MemorySegment upload(Arena arena, Precision p, double[] values) throws Throwable {
        long n = (long) values.length * bytes(p);
        MemorySegment host = arena.allocate(Math.max(n, 1));
        for (int i = 0; i < values.length; i++) {
            float f = (float) values[i];
            switch (p) {
                case F32 -> host.setAtIndex(ValueLayout.JAVA_FLOAT, i, f);
                case F16 -> host.setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(f));
                default -> host.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) bf16Bits(f));
            }
        }
        return toDevice(arena, host, n);
    }

    static MemorySegment uploadInts(Arena arena, int[] values) throws Throwable {
        MemorySegment host = arena.allocate(4L * values.length);
        for (int i = 0; i < values.length; i++) host.setAtIndex(I, i, values[i]);
        return toDevice(arena, host, 4L * values.length);
    }

    static MemorySegment toDevice(Arena arena, MemorySegment host, long n) throws Throwable {
        MemorySegment slot = arena.allocate(A);
        assertEquals(0, (int) fn("cudaMalloc", FunctionDescriptor.of(I, A, ValueLayout.JAVA_LONG)).invokeExact(slot, n));
        MemorySegment dev = slot.get(A, 0).reinterpret(n);
        assertEquals(0, (int) fn("cudaMemcpy", FunctionDescriptor.of(I, A, A, ValueLayout.JAVA_LONG, I))
                .invokeExact(dev, host, n, 1));
        return dev;
    }

    static double[] download(Precision p, MemorySegment dev, int count) {
        double[] out = new double[count];
        for (int i = 0; i < count; i++) {
            out[i] = switch (p) {
                case F32 -> dev.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                case F16 -> Float.float16ToFloat(dev.getAtIndex(ValueLayout.JAVA_SHORT, i));
                default -> Float.intBitsToFloat((dev.getAtIndex(ValueLayout.JAVA_SHORT, i) & 0xffff) << 16);
            };
        }
        return out;
    }

    static String suffix(Precision p) {
        return switch (p) {
            case F32 -> "f32";
            case F16 -> "f16";
            default -> "bf16";
        };
    }

    static double[] flat(double[][][][] t) {
        int a = t.length, b = t[0].length, c = t[0][0].length, d = t[0][0][0].length;
        double[] f = new double[a * b * c * d];
        int at = 0;
        for (double[][][] x : t) for (double[][] y : x) for (double[] z : y) for (double w : z) f[at++] = w;
        return f;
    }

    static double[][][][] shape(double[] f, int a, int b, int c, int d) {
        double[][][][] t = new double[a][b][c][d];
        int at = 0;
        for (double[][][] x : t) for (double[][] y : x) for (double[] z : y) for (int i = 0; i < d; i++) z[i] = f[at++];
        return t;
    }

    static String lastMessage() throws Throwable {
        MemorySegment m = (MemorySegment) fn("attnproof_cuda_last_message", FunctionDescriptor.of(A)).invokeExact();
        return m.reinterpret(1 << 16).getString(0);
    }

    /** One dense call: returns [B][Hq][tq][D]; withSinks false passes a null sinks pointer. */
    static double[][][][] runDense(Evidence e, Precision p, SinksProblem pr, boolean withSinks) throws Throwable {
        return runDense(e, p, pr, withSinks ? pr.sinks() : null);
    }

    /** One dense call with these sink logits (null: a null sinks pointer, no sink column). */
    static double[][][][] runDense(Evidence e, Precision p, SinksProblem pr, double[] sinks) throws Throwable {
        boolean withSinks = sinks != null;
        int b = pr.batch(), hq = pr.queryHeads(), hkv = pr.kvHeads(), tq = pr.tq(), tk = pr.tk(), d = pr.headDim();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment q = upload(arena, p, flat(pr.q())), k = upload(arena, p, flat(pr.k()));
            MemorySegment v = upload(arena, p, flat(pr.v()));
            MemorySegment s = withSinks ? upload(arena, Precision.F32, sinks) : MemorySegment.NULL;
            MemorySegment out = upload(arena, p, new double[b * hq * tq * d]);
            MethodHandle h = fn("fa2_sinks_fwd_" + suffix(p), FunctionDescriptor.of(I, A, A, A, A, A, I, I, I, I, I,
                    I, I, A));
            int rc = (int) h.invokeExact(q, k, v, s, out, b, hq, hkv, tq, tk, d, pr.window(), MemorySegment.NULL);
            launched(e, "fa2_sinks_fwd_" + suffix(p) + "[D=" + d + " tq=" + tq + " tk=" + tk + " sinks=" + withSinks
                    + "]", rc);
            return shape(download(p, out, b * hq * tq * d), b, hq, tq, d);
        }
    }

    /** The launcher's cudaError_t as a check line (a fault, race or deadlock fails it; the report goes to stderr). */
    static void launched(Evidence e, String what, int rc) throws Throwable {
        if (rc != 0) System.err.println(what + ": cudaError " + rc + ": " + lastMessage());
        e.checkEqual("cudaError_of_" + what, rc, 0);
    }

    static String safeMessage() {
        try {
            return lastMessage();
        } catch (Throwable t) {
            return t.toString();
        }
    }

    static SinksProblem problem(long seed, Precision p, int b, int hq, int hkv, int tq, int tk, int d, int window) {
        SplittableRandom rnd = new SplittableRandom(seed);
        double[] sinks = new double[hq];
        for (int h = 0; h < hq; h++) sinks[h] = (float) (1.5 * gaussian(rnd));
        return new SinksProblem(tensor(rnd, p, b, hq, tq, d), tensor(rnd, p, b, hkv, tk, d),
                tensor(rnd, p, b, hkv, tk, d), sinks, null, window, true);
    }

    static void judge(Evidence e, String label, Precision p, SinksProblem pr, double[][][][] actual,
                      double[][][][] noSink) {
        double[][][][] oracle = SinksAttentionOracle.attend(pr);
        double naive = Diff.of(oracle, SinksAttentionOracle.attendNaive(pr, p)).maxAbs();
        Diff diff = Diff.of(oracle, actual);
        double limit = Tolerance.limit(p, naive, diff.oracleMaxAbs());
        e.degeneracy("oracle_max_abs" + label, diff.oracleMaxAbs(), Comparison.GT, 0.0, "a non-zero output to compare");
        e.check("max_abs_err" + label, diff.maxAbs(), limit, null);
        e.controlGap("drop_the_sink" + label, Diff.of(oracle, noSink).maxAbs(), limit);
    }

    /**
     * A null sinks pointer means no sink column: the call is judged against the oracle without sinks. Control: the
     * same launch given sink logits of zero (what "no sinks" passed as zero logits computes) disagrees by more than
     * the limit.
     */
    static void judgeNoSinks(Evidence e, String label, Precision p, SinksProblem pr, double[][][][] noSink,
                             double[][][][] zeroLogits) {
        SinksProblem none = pr.withSinks(null);
        double[][][][] oracle = SinksAttentionOracle.attend(none);
        double naive = Diff.of(oracle, SinksAttentionOracle.attendNaive(none, p)).maxAbs();
        Diff diff = Diff.of(oracle, noSink);
        double limit = Tolerance.limit(p, naive, diff.oracleMaxAbs());
        e.check("max_abs_err_without_sinks" + label, diff.maxAbs(), limit, null);
        e.controlGap("zero_sink_logits_instead_of_none" + label, Diff.of(oracle, zeroLogits).maxAbs(), limit);
    }

    @Test
    @Claim("N6")
    void denseCallsAgreeWithTheOracleAcrossDtypesHeadDimsGqaAndWindows(Evidence ev) throws Throwable {
        Evidence e = ev.backend("cuda-emu");
        record Case(Precision p, int b, int hq, int hkv, int tq, int tk, int d, int window) {}
        Case[] cases = {
            new Case(Precision.F32, 1, 16, 2, 13, 29, 64, 0),     // GQA 16/2, kv_offset 16
            new Case(Precision.F16, 2, 4, 2, 9, 40, 80, 7),       // a window; D not a multiple of 32
            new Case(Precision.BF16, 1, 4, 1, 8, 8, 128, 0),
            new Case(Precision.F32, 1, 2, 1, 5, 37, 256, 5),      // 64 KiB of dynamic shared memory (opt-in)
            new Case(Precision.F16, 1, 2, 2, 6, 20, 112, 3),
            new Case(Precision.F32, 1, 64, 8, 5, 12, 64, 4),      // GQA 64/8
        };
        long seed = 27_000;
        for (Case c : cases) {
            e.seed(++seed);
            SinksProblem pr = problem(seed, c.p(), c.b(), c.hq(), c.hkv(), c.tq(), c.tk(), c.d(), c.window());
            String label = "[" + suffix(c.p()) + " D=" + c.d() + " Hq/Hkv=" + c.hq() + "/" + c.hkv() + " tq=" + c.tq()
                    + " tk=" + c.tk() + " window=" + c.window() + "]";
            double[][][][] noSink = runDense(e, c.p(), pr, false);
            judge(e, label, c.p(), pr, runDense(e, c.p(), pr, true), noSink);
            judgeNoSinks(e, label, c.p(), pr, noSink, runDense(e, c.p(), pr, new double[c.hq()]));
        }
    }

    @Test
    @Claim("N6")
    void rowsWithNoAdmittedKeyAreZeroAndTheRestAgree(Evidence ev) throws Throwable {
        Evidence e = ev.backend("cuda-emu");
        e.seed(27_100);
        // tq 10 > tk 4: bottom-right alignment leaves rows 0..5 without a key (the sink alone: output 0). Head 0's
        // sink is -inf: a keyless row there has neither a key nor a sink (0, never the NaN of -inf - -inf).
        SinksProblem drawn = problem(27_100, Precision.F32, 1, 4, 2, 10, 4, 96, 2);
        double[] sinks = drawn.sinks().clone();
        sinks[0] = Double.NEGATIVE_INFINITY;
        SinksProblem pr = drawn.withSinks(sinks);
        double[][][][] got = runDense(e, Precision.F32, pr, true);
        double keyless = 0;
        for (double[][][] x : got) for (double[][] y : x) for (int r = 0; r < 6; r++) for (double w : y[r]) {
            keyless = Math.max(keyless, Double.isNaN(w) ? Double.POSITIVE_INFINITY : Math.abs(w));
        }
        e.checkEqual("max_abs_output_of_rows_with_no_admitted_key", keyless, 0.0);
        judge(e, "[f32 D=96 tq=10 tk=4 window=2 sink[0]=-inf]", Precision.F32, pr, got,
                runDense(e, Precision.F32, pr, false));
    }

    @Test
    @Claim("N6")
    void varlenPackedSequencesAgreeWithTheOraclePerSequence(Evidence ev) throws Throwable {
        Evidence e = ev.backend("cuda-emu");
        Precision p = Precision.F16;
        int hq = 16, hkv = 2, d = 64, window = 6;
        int[] qLens = {5, 1, 7}, kLens = {9, 3, 7};
        int maxQ = 7;
        e.seed(27_200);
        SinksProblem[] seqs = new SinksProblem[qLens.length];
        double[] sinks = null;
        for (int s = 0; s < seqs.length; s++) {
            SinksProblem one = problem(27_200 + s, p, 1, hq, hkv, qLens[s], kLens[s], d, window);
            if (sinks == null) sinks = one.sinks();
            seqs[s] = one.withSinks(sinks);
        }
        int totalQ = 0, totalK = 0;
        int[] cuQ = new int[seqs.length + 1], cuK = new int[seqs.length + 1];
        for (int s = 0; s < seqs.length; s++) {
            cuQ[s + 1] = cuQ[s] + qLens[s];
            cuK[s + 1] = cuK[s] + kLens[s];
        }
        totalQ = cuQ[seqs.length];
        totalK = cuK[seqs.length];
        double[] q = new double[totalQ * hq * d], k = new double[totalK * hkv * d], v = new double[totalK * hkv * d];
        for (int s = 0; s < seqs.length; s++) {
            for (int h = 0; h < hq; h++) for (int r = 0; r < qLens[s]; r++) for (int i = 0; i < d; i++) {
                q[((cuQ[s] + r) * hq + h) * d + i] = seqs[s].q()[0][h][r][i];
            }
            for (int h = 0; h < hkv; h++) for (int j = 0; j < kLens[s]; j++) for (int i = 0; i < d; i++) {
                k[((cuK[s] + j) * hkv + h) * d + i] = seqs[s].k()[0][h][j][i];
                v[((cuK[s] + j) * hkv + h) * d + i] = seqs[s].v()[0][h][j][i];
            }
        }
        double[][] runs = new double[2][];
        for (int withSinks = 0; withSinks < 2; withSinks++) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment dq = upload(arena, p, q), dk = upload(arena, p, k), dv = upload(arena, p, v);
                MemorySegment ds = withSinks == 1 ? upload(arena, Precision.F32, sinks) : MemorySegment.NULL;
                MemorySegment cq = uploadInts(arena, cuQ), ck = uploadInts(arena, cuK);
                MemorySegment out = upload(arena, p, new double[totalQ * hq * d]);
                int rc = (int) fn("fa2_sinks_varlen_f16", FunctionDescriptor.of(I, A, A, A, A, A, A, A, I, I, I, I,
                        I, I, A)).invokeExact(dq, dk, dv, ds, cq, ck, out, seqs.length, maxQ, hq, hkv, d, window,
                        MemorySegment.NULL);
                launched(e, "fa2_sinks_varlen_f16[sinks=" + (withSinks == 1) + "]", rc);
                runs[withSinks] = download(p, out, totalQ * hq * d);
            }
        }
        for (int s = 0; s < seqs.length; s++) {
            double[][][][] got = new double[1][hq][qLens[s]][d], noSink = new double[1][hq][qLens[s]][d];
            for (int h = 0; h < hq; h++) for (int r = 0; r < qLens[s]; r++) for (int i = 0; i < d; i++) {
                got[0][h][r][i] = runs[1][((cuQ[s] + r) * hq + h) * d + i];
                noSink[0][h][r][i] = runs[0][((cuQ[s] + r) * hq + h) * d + i];
            }
            judge(e, "[varlen f16 D=64 Hq/Hkv=16/2 seq " + s + " q_len=" + qLens[s] + " kv_len=" + kLens[s] + "]", p,
                    seqs[s], got, noSink);
        }
    }

    /**
     * A launch the device refuses (grid.y = Hq = 65536, past CUDA's 65535) is an error the launcher returns
     * (cudaErrorInvalidConfiguration, from cudaGetLastError), never cudaSuccess over an output no block wrote.
     * Control: the same call at Hq = 2 launches.
     */
    @Test
    @Claim("N6")
    void aLaunchPastTheGridLimitIsReturnedAsAnError(Evidence ev) throws Throwable {
        Evidence e = ev.backend("cuda-emu");
        e.seed(27_350);
        int d = 64;
        MethodHandle fwd = fn("fa2_sinks_fwd_f16", FunctionDescriptor.of(I, A, A, A, A, A, I, I, I, I, I, I, I, A));
        for (int hq : new int[] {65_536, 2}) {
            // The refused grid runs no block, so its buffers need not hold Hq heads (the launcher checks no length).
            int heads = hq == 2 ? hq : 1;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment q = upload(arena, Precision.F16, new double[heads * d]);
                MemorySegment kv = upload(arena, Precision.F16, new double[d]);
                MemorySegment s = upload(arena, Precision.F32, new double[heads]);
                MemorySegment out = upload(arena, Precision.F16, new double[heads * d]);
                int rc = (int) fwd.invokeExact(q, kv, kv, s, out, 1, hq, 1, 1, 1, d, 0, MemorySegment.NULL);
                if (hq == 2) {
                    e.checkEqual("cudaError_of_the_same_launch_at_Hq_2 (control)", rc, 0);
                } else {
                    e.checkEqual("cudaError_of_a_launch_with_grid_y_65536 (9: cudaErrorInvalidConfiguration)", rc, 9);
                    String msg = lastMessage();
                    assertTrue(msg.contains("65536"), "the report names the grid: " + msg);
                }
            }
        }
    }

    /** A K allocation one key short: the first read past it is a named out-of-bounds fault, as memcheck reports. */
    @Test
    @Claim("N6")
    void aKeyBufferOneKeyShortIsANamedOutOfBoundsRead(Evidence ev) throws Throwable {
        Evidence e = ev.backend("cuda-emu");
        e.seed(27_300);
        SinksProblem pr = problem(27_300, Precision.F32, 1, 2, 1, 4, 8, 64, 0);
        try (Arena arena = Arena.ofConfined()) {
            double[] kFlat = flat(pr.k());
            double[] kShort = java.util.Arrays.copyOf(kFlat, kFlat.length - 64);
            MemorySegment q = upload(arena, Precision.F32, flat(pr.q())), k = upload(arena, Precision.F32, kShort);
            MemorySegment v = upload(arena, Precision.F32, flat(pr.v())), s = upload(arena, Precision.F32, pr.sinks());
            MemorySegment out = upload(arena, Precision.F32, new double[2 * 4 * 64]);
            int rc = (int) fn("fa2_sinks_fwd_f32", FunctionDescriptor.of(I, A, A, A, A, A, I, I, I, I, I, I, I, A))
                    .invokeExact(q, k, v, s, out, 1, 2, 1, 4, 8, 64, 0, MemorySegment.NULL);
            String msg = lastMessage();
            e.checkEqual("cudaError_of_a_launch_reading_past_k", rc, 700);
            for (String part : java.util.List.of("out-of-bounds access k[448] (length 448)",
                    "in kernel fa2_sinks_fwd_kernel<T, D>")) {
                assertTrue(msg.contains(part), part + " in " + msg);
            }
            MemorySegment kFull = upload(arena, Precision.F32, kFlat);
            int ok = (int) fn("fa2_sinks_fwd_f32", FunctionDescriptor.of(I, A, A, A, A, A, I, I, I, I, I, I, I, A))
                    .invokeExact(q, kFull, v, s, out, 1, 2, 1, 4, 8, 64, 0, MemorySegment.NULL);
            e.checkEqual("cudaError_of_the_same_launch_with_the_whole_k (control)", ok, 0);
        }
    }

    /**
     * N1 on this family: a launch whose warps run different numbers of keys per tile (a window, GQA 4/2) completes
     * with no shared-memory race reported: the tile load and the warps' reads are separated by barriers on both sides.
     * The control is the race checker's own (CheckerPathsTest); a barrier removed from this source is mutant 84.
     */
    @Test
    @Claim("N1")
    void theTileLoadsAndTheWarpsReadsAreRaceFree(Evidence ev) throws Throwable {
        Evidence e = ev.backend("cuda-emu");
        e.seed(27_400);
        SinksProblem pr = problem(27_400, Precision.F32, 1, 4, 2, 9, 70, 64, 7);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment q = upload(arena, Precision.F32, flat(pr.q())), k = upload(arena, Precision.F32, flat(pr.k()));
            MemorySegment v = upload(arena, Precision.F32, flat(pr.v())), s = upload(arena, Precision.F32, pr.sinks());
            MemorySegment out = upload(arena, Precision.F32, new double[4 * 9 * 64]);
            int rc = (int) fn("fa2_sinks_fwd_f32", FunctionDescriptor.of(I, A, A, A, A, A, I, I, I, I, I, I, I, A))
                    .invokeExact(q, k, v, s, out, 1, 4, 2, 9, 70, 64, 7, MemorySegment.NULL);
            String msg = rc == 0 ? "" : lastMessage();
            e.checkEqual("shared_memory_races_reported[fa2_sinks_fwd_f32 D=64 tq=9 tk=70 window=7]",
                    msg.contains("shared-memory race") ? 1 : 0, 0);
            e.checkEqual("cudaError[fa2_sinks_fwd_f32 D=64 tq=9 tk=70 window=7]", rc, 0);
        }
    }

    /**
     * N4 on this family: in a varlen launch whose blocks hold warps past q_len (they skip the key loop and its
     * shuffles), every warp still reaches every barrier of every tile: the launch completes without a named
     * deadlock and gives the oracle's numbers (varlenPackedSequences...). A barrier moved inside the live warps'
     * branch is mutant 87: the emulator names the deadlock; a scheduler releasing on shuffles would not.
     */
    @Test
    @Claim("N4")
    void warpsPastQLenStillReachEveryBarrier(Evidence ev) throws Throwable {
        Evidence e = ev.backend("cuda-emu");
        e.seed(27_500);
        int hq = 2, hkv = 1, d = 64;
        int[] cuQ = {0, 1, 7}, cuK = {0, 40, 75};
        SplittableRandom rnd = new SplittableRandom(27_500);
        double[] q = new double[7 * hq * d], kv = new double[75 * hkv * d];
        for (int i = 0; i < q.length; i++) q[i] = (float) gaussian(rnd);
        for (int i = 0; i < kv.length; i++) kv[i] = (float) gaussian(rnd);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dq = upload(arena, Precision.F32, q), dk = upload(arena, Precision.F32, kv);
            MemorySegment dv = upload(arena, Precision.F32, kv);
            MemorySegment ds = upload(arena, Precision.F32, new double[] {0.5, -0.25});
            MemorySegment cq = uploadInts(arena, cuQ), ck = uploadInts(arena, cuK);
            MemorySegment out = upload(arena, Precision.F32, new double[7 * hq * d]);
            int rc = (int) fn("fa2_sinks_varlen_f32", FunctionDescriptor.of(I, A, A, A, A, A, A, A, I, I, I, I, I, I,
                    A)).invokeExact(dq, dk, dv, ds, cq, ck, out, 2, 6, hq, hkv, d, 0, MemorySegment.NULL);
            String msg = rc == 0 ? "" : lastMessage();
            if (rc != 0) System.err.println("fa2_sinks_varlen_f32: " + msg);
            e.checkEqual("deadlocks_reported[fa2_sinks_varlen_f32 q_lens=1,6 kv_lens=40,35]",
                    msg.contains("deadlock") ? 1 : 0, 0);
            e.checkEqual("cudaError[fa2_sinks_varlen_f32 q_lens=1,6 kv_lens=40,35]", rc, 0);
        }
    }
}
