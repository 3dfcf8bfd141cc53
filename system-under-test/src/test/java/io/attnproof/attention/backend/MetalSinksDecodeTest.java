package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.attnproof.attention.backend.MslFrontEnd.Arg;
import io.attnproof.attention.backend.MslFrontEnd.Launch;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Claim N6 on a second, independent Metal kernel family: {@code examples/kernels/metal/sinks_decode.metal} (a
 * one-pass decode, a two-pass decode: partials then a reduce, and a prefill; templates over float/half/bfloat with
 * [[host_name]] instantiations, simd_sum/simd_max, dynamic threadgroup memory, GQA, windows, optional sinks), built
 * unchanged through the MSL front end and launched as a Metal host launches it. Metal hosts are Swift or Rust, so the
 * host's choice is data here ({@link Host}: kernel name, grid, threadgroup size, threadgroup memory, buffer order).
 * Judged against the fp64 oracle under the tolerance rule (relative to a naive computation at the same precision);
 * control: the same launch without its sinks must disagree by more than the limit. N1: the prefill's tile barriers
 * leave no threadgroup-memory race.
 */
@Timeout(600)
class MetalSinksDecodeTest {
    static final Path SOURCE = FrontEnd.REPO.resolve("examples/kernels/metal/sinks_decode.metal");
    static MslFrontEnd.Lib lib;

    @BeforeAll
    static void build() throws Exception {
        assumeTrue(FrontEnd.unavailableReason() == null, () -> "SKIP: " + FrontEnd.unavailableReason());
        lib = new MslFrontEnd.Lib(MslFrontEnd.build(SOURCE, "sinks_decode"));
    }

    /** The host's choice for one kernel: its buffer order (binding names by [[buffer(n)]] index). */
    static final Map<String, List<String>> BUFFERS = Map.of(
            "sinks_decode", List.of("q", "k", "v", "sinks", "out", "p"),
            "sinks_decode_partials", List.of("q", "k", "v", "part", "p"),
            "sinks_decode_reduce", List.of("part", "sinks", "out", "p"),
            "sinks_prefill", List.of("q", "k", "v", "sinks", "out", "p"));

    /** One launch as a host makes it: kernel, threadgroups, threads per threadgroup, [[threadgroup(0)]] bytes. */
    record Host(String kernel, int[] grid, int threads, long threadgroupBytes) {}

    static final int SIMD = 32;
    static final int TWO_PASS_CHUNK = 256;

    static String suffix(Precision p) {
        return Fa2SinksEmuTest.suffix(p);
    }

    /** A buffer of T (float, half or bfloat bits) holding {@code values}. */
    static MemorySegment upload(Arena a, Precision p, double[] values) {
        MemorySegment s = a.allocate(Math.max(4, (long) Fa2SinksEmuTest.bytes(p) * values.length), 4);
        for (int i = 0; i < values.length; i++) {
            float f = (float) values[i];
            switch (p) {
                case F32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT, i, f);
                case F16 -> s.setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(f));
                default -> s.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) Fa2SinksEmuTest.bf16Bits(f));
            }
        }
        return s;
    }

    static Arg bind(Precision p, MemorySegment s) {
        return p == Precision.F32 ? Arg.floats(s) : Arg.bytes(s);
    }

    /** SinksParams as the kernels declare it (12 four-byte fields), bound with setBytes. */
    static MemorySegment params(Arena a, SinksProblem pr, boolean sinks, int chunks, int tile) {
        MemorySegment s = a.allocate(48, 4);
        int[] head = {pr.batch(), pr.queryHeads(), pr.kvHeads(), pr.tq(), pr.tk(), pr.headDim(), pr.window(),
            sinks ? 1 : 0};
        for (int i = 0; i < head.length; i++) s.setAtIndex(ValueLayout.JAVA_INT, i, head[i]);
        s.setAtIndex(ValueLayout.JAVA_FLOAT, 8, (float) (1.0 / Math.sqrt(pr.headDim())));
        s.setAtIndex(ValueLayout.JAVA_INT, 9, TWO_PASS_CHUNK);
        s.setAtIndex(ValueLayout.JAVA_INT, 10, chunks);
        s.setAtIndex(ValueLayout.JAVA_INT, 11, tile);
        return s;
    }

    static void launch(Evidence e, Host h, String label, Map<String, Arg> bound) {
        List<Arg> args = new ArrayList<>();
        for (String name : BUFFERS.get(h.kernel().replaceFirst("_(f32|f16|bf16)$", ""))) args.add(bound.get(name));
        if (h.threadgroupBytes() > 0) args.add(Arg.threadgroup(0, h.threadgroupBytes()));
        Launch l = lib.run(h.kernel(), h.grid(), h.threads(), args);
        if (l.code() != MslFrontEnd.LAUNCH_OK) System.err.println(h.kernel() + label + ": " + l.message());
        e.checkEqual("launch_result_of_" + h.kernel() + label, l.code(), MslFrontEnd.LAUNCH_OK);
    }

    static long tg16(long floats) {
        return (floats * 4 + 15) / 16 * 16;
    }

    /**
     * One call of a family: "decode" (one pass, G SIMD groups), "two-pass" (partials over 256-key chunks, then the
     * reduce) or "prefill" (G rows per threadgroup, K/V tiles of {@code tile} keys). Returns [B][Hq][tq][D].
     */
    static double[][][][] run(Evidence e, String family, Precision p, SinksProblem pr, boolean sinks, int groups,
                              int tile, String label) {
        int b = pr.batch(), hq = pr.queryHeads(), tq = pr.tq(), tk = pr.tk(), d = pr.headDim();
        String t = "_" + suffix(p);
        try (Arena a = Arena.ofConfined()) {
            int chunks = (tk + TWO_PASS_CHUNK - 1) / TWO_PASS_CHUNK;
            MemorySegment out = upload(a, p, new double[b * hq * tq * d]);
            Map<String, Arg> bound = new java.util.HashMap<>(Map.of(
                    "q", bind(p, upload(a, p, Fa2SinksEmuTest.flat(pr.q()))),
                    "k", bind(p, upload(a, p, Fa2SinksEmuTest.flat(pr.k()))),
                    "v", bind(p, upload(a, p, Fa2SinksEmuTest.flat(pr.v()))),
                    "sinks", sinks ? Arg.floats(upload(a, Precision.F32, pr.sinks())) : Arg.none(),
                    "out", bind(p, out),
                    "part", Arg.floats(a.allocate(4L * b * hq * chunks * (d + 2), 4)),
                    "p", Arg.bytes(params(a, pr, sinks, chunks, tile))));
            switch (family) {
                case "decode" -> launch(e, new Host("sinks_decode" + t, new int[] {hq, b, 1}, SIMD * groups,
                        tg16((long) groups * (d + 2))), label, bound);
                case "two-pass" -> {
                    launch(e, new Host("sinks_decode_partials" + t, new int[] {chunks, hq, b}, SIMD * groups,
                            tg16((long) groups * (d + 2))), label, bound);
                    launch(e, new Host("sinks_decode_reduce" + t, new int[] {hq, b, 1}, SIMD, 0), label, bound);
                }
                default -> launch(e, new Host("sinks_prefill" + t, new int[] {(tq + groups - 1) / groups, hq, b},
                        SIMD * groups, tg16(2L * tile * d)), label, bound);
            }
            return Fa2SinksEmuTest.shape(Fa2SinksEmuTest.download(p, out, b * hq * tq * d), b, hq, tq, d);
        }
    }

    static SinksProblem problem(long seed, Precision p, int b, int hq, int hkv, int tq, int tk, int d, int window,
                                boolean sinks) {
        SinksProblem pr = Fa2SinksEmuTest.problem(seed, p, b, hq, hkv, tq, tk, d, window);
        // Sinks around log(tk): a sink that carries a share of the mass comparable to the keys' at every key count,
        // so that dropping it moves the output beyond even bfloat's limit (the negative control has teeth).
        double[] s = pr.sinks().clone();
        for (int h = 0; h < s.length; h++) s[h] = (float) (s[h] + Math.log(tk));
        return new SinksProblem(pr.q(), pr.k(), pr.v(), sinks ? s : null, null, window, true);
    }

    /** Output against the oracle under the tolerance rule; control: the call without its sinks. */
    static void judge(Evidence e, String label, Precision p, SinksProblem pr, double[][][][] actual,
                      double[][][][] control, String controlName) {
        double[][][][] oracle = SinksAttentionOracle.attend(pr);
        double naive = Diff.of(oracle, SinksAttentionOracle.attendNaive(pr, p)).maxAbs();
        Diff diff = Diff.of(oracle, actual);
        double limit = Tolerance.limit(p, naive, diff.oracleMaxAbs());
        e.degeneracy("oracle_max_abs" + label, diff.oracleMaxAbs(), Comparison.GT, 0.0, "a non-zero output to compare");
        e.check("max_abs_err" + label, diff.maxAbs(), limit, null);
        if (control != null) e.controlGap(controlName + label, Diff.of(oracle, control).maxAbs(), limit);
    }

    record Case(Precision p, int b, int hq, int hkv, int tq, int tk, int d, int window, int groups, int tile) {
        String label(String family) {
            return "[" + family + " " + suffix(p) + " B=" + b + " D=" + d + " Hq/Hkv=" + hq + "/" + hkv + " tq=" + tq
                    + " tk=" + tk + " window=" + window + " G=" + groups + (tile > 0 ? " tile=" + tile : "") + "]";
        }
    }

    static void agree(Evidence e, String family, Case[] cases, long seed) {
        for (Case c : cases) {
            e.seed(++seed);
            SinksProblem pr = problem(seed, c.p(), c.b(), c.hq(), c.hkv(), c.tq(), c.tk(), c.d(), c.window(), true);
            String label = c.label(family);
            if (c.window() > 0) {
                e.degeneracy("window_excludes_keys" + label, c.window(), Comparison.LE, c.tk() - 1, "a window shorter than the keys");
            }
            judge(e, label, c.p(), pr, run(e, family, c.p(), pr, true, c.groups(), c.tile(), label),
                    run(e, family, c.p(), pr, false, c.groups(), c.tile(), label), "drop_the_sink");
        }
    }

    @Test
    @Claim("N6")
    void onePassDecodeAgreesWithTheOracleAcrossDtypesGqaWindowsAndBatches(Evidence ev) {
        Evidence e = ev.backend("metal-emu");
        agree(e, "decode", new Case[] {
            new Case(Precision.F32, 2, 16, 2, 1, 77, 64, 0, 4, 0),    // batched, GQA 16/2
            new Case(Precision.F16, 1, 64, 8, 1, 40, 128, 9, 2, 0),   // GQA 64/8, a window
            new Case(Precision.BF16, 2, 4, 1, 1, 33, 80, 0, 4, 0),    // D not a multiple of 32
            new Case(Precision.F32, 1, 4, 2, 1, 50, 256, 17, 1, 0),   // one SIMD group
        }, 27_300);
    }

    @Test
    @Claim("N6")
    void twoPassDecodeAgreesWithTheOracleAcrossChunkBoundaries(Evidence ev) {
        Evidence e = ev.backend("metal-emu");
        Case[] cases = {
            new Case(Precision.F32, 1, 16, 2, 1, 1023, 64, 0, 4, 0),
            new Case(Precision.F16, 1, 16, 2, 1, 1024, 64, 0, 4, 0),
            new Case(Precision.BF16, 1, 16, 2, 1, 1025, 64, 0, 4, 0),  // a last chunk of one key
            new Case(Precision.F32, 1, 64, 8, 1, 1024, 32, 0, 2, 0),
            new Case(Precision.F32, 2, 4, 2, 1, 1025, 96, 300, 4, 0),  // a window spanning two chunks
        };
        for (Case c : cases) {
            int chunks = (c.tk() + TWO_PASS_CHUNK - 1) / TWO_PASS_CHUNK;
            e.degeneracy("chunks_per_row" + c.label("two-pass"), chunks, Comparison.GE, 4, "partials to combine");
        }
        agree(e, "two-pass", cases, 27_400);
    }

    @Test
    @Claim("N6")
    void prefillAgreesWithTheOracleAcrossDtypesHeadDimsGqaAndWindows(Evidence ev) {
        Evidence e = ev.backend("metal-emu");
        agree(e, "prefill", new Case[] {
            new Case(Precision.F32, 1, 16, 2, 13, 29, 64, 0, 4, 16),  // GQA 16/2; rows past q_len in the last group
            new Case(Precision.F16, 2, 4, 2, 9, 40, 80, 7, 2, 8),
            new Case(Precision.BF16, 1, 4, 1, 8, 8, 128, 0, 4, 16),
            new Case(Precision.F32, 1, 64, 8, 5, 12, 64, 0, 2, 8),    // GQA 64/8
            new Case(Precision.F16, 1, 2, 1, 6, 37, 256, 5, 4, 8),
        }, 27_500);
    }

    @Test
    @Claim("N6")
    void noSinksMeansNoSinkAndAKeylessRowIsZero(Evidence ev) {
        Evidence e = ev.backend("metal-emu");
        long seed = 27_600;
        // Decode without sinks (the binding nil): the oracle without sinks, not with zero logits.
        e.seed(++seed);
        SinksProblem none = problem(seed, Precision.F32, 2, 8, 2, 1, 45, 64, 0, false);
        SinksProblem withZero = new SinksProblem(none.q(), none.k(), none.v(), new double[8], null, 0, true);
        double[][][][] zeroLogits = SinksAttentionOracle.attend(withZero);
        for (String family : List.of("decode", "two-pass")) {
            SinksProblem pr = family.equals("decode") ? none
                    : problem(++seed, Precision.F32, 1, 8, 2, 1, 1030, 64, 0, false);
            double[][][][] zero = family.equals("decode") ? zeroLogits : SinksAttentionOracle.attend(
                    new SinksProblem(pr.q(), pr.k(), pr.v(), new double[8], null, 0, true));
            String label = "[" + family + " no sinks]";
            judge(e, label, Precision.F32, pr, run(e, family, Precision.F32, pr, false, 4, 0, label), zero,
                    "zero_logit_sinks");
        }
        // Prefill with tq 10 > tk 4 and no sinks: bottom-right alignment leaves rows 0..5 without a key.
        e.seed(++seed);
        SinksProblem pr = problem(seed, Precision.F32, 1, 4, 2, 10, 4, 96, 2, false);
        double[][][][] got = run(e, "prefill", Precision.F32, pr, false, 4, 8, "[prefill keyless]");
        double keyless = 0;
        int rows = 0;
        for (double[][][] x : got) for (double[][] y : x) for (int r = 0; r < 6; r++, rows++) for (double w : y[r]) {
            keyless = Math.max(keyless, Double.isNaN(w) ? Double.POSITIVE_INFINITY : Math.abs(w));
        }
        e.degeneracy("rows_with_no_admitted_key", rows, Comparison.EQ, 24, "6 rows of 4 heads");
        e.checkEqual("max_abs_output_of_rows_with_no_admitted_key", keyless, 0.0);
        judge(e, "[prefill f32 D=96 tq=10 tk=4 window=2 no sinks]", Precision.F32, pr, got, null, null);
    }

    @Test
    @Claim("N1")
    void thePrefillTilesLeaveNoThreadgroupRace(Evidence ev) {
        Evidence e = ev.backend("metal-emu");
        e.seed(27_700);
        // Two tiles per threadgroup and rows of different lengths: a barrier missing around a tile is a race.
        SinksProblem pr = problem(27_700, Precision.F32, 1, 2, 1, 8, 24, 64, 0, true);
        double[][][][] got = run(e, "prefill", Precision.F32, pr, true, 4, 8, "[prefill race check]");
        judge(e, "[prefill race check]", Precision.F32, pr, got, null, null);
    }
}
