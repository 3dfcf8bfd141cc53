package io.attnproof.attention.dispatch;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.sinks.SinksAttention;
import io.attnproof.attention.sinks.SinksRun;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.Worst;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Claims B1 to B7 (dispatch boundaries and shape consistency) on one lane, every line under the lane's name. The
 * expected decisions come from docs/system.md and the documented design values below, never from the system's registry:
 * the registry is what is judged. Each lane is a subclass; an unavailable lane skips with its reason (or fails
 * where it is required).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DispatchClaims {
    static final List<String> CLAIMS = List.of("B1", "B2", "B3", "B4", "B5", "B6", "B7");

    // What docs/system.md §8 and the README state (the test's own copy; the registry is held against it).
    static final Set<Integer> SPEC_FUSED = Set.of(64, 80, 96, 112, 128, 192, 256);
    static final Set<Integer> SPEC_METAL_DECODE = Set.of(64, 80, 96, 128, 256);
    static final int SPEC_FLASH_512 = 512;
    static final int SPEC_VARLEN_MIN_BATCH = 2; // "varlen only when no mask is passed and B > 1"
    static final int SPEC_DECODE_Q = 1; // "a single-query call (q_len == 1)"
    static final long SPEC_VECTOR_MIN_MACS = 1L << 20; // README: calls under 1 M multiply-adds take the scalar engine
    static final long SPEC_PARALLEL_MIN_MACS = 1L << 23; // README: calls above 8 M run on the fork-join pool
    static final int SPEC_SPLIT_MIN = 1024; // "kv_len >= 1024"
    static final int SPEC_CHUNK = 256; // the documented split-K chunk
    static final int SPEC_CUDA_NATIVE_MAX_D = 512; // native/README.md: the CUDA varlen kernel takes any head dim to 512
    static final int SPEC_METAL_NATIVE_MAX_D = 256; // native/README.md: the Metal kernels take head dims to 256
    static final Precision P = Precision.F32;

    abstract Backend lane();

    @BeforeAll
    void probeTheLane() {
        DispatchLanes.probe(lane(), getClass(), CLAIMS);
    }

    @BeforeEach
    void skipAnUnavailableLane() {
        DispatchLanes.assumeAvailable(lane());
    }

    Evidence on(Evidence ev) {
        return ev.backend(lane().name());
    }

    boolean cpuLane() {
        return lane().name().equals("cpu");
    }

    /** The device for a call of family {@code kind}: the CPU lane labels its tensors; a native lane has its own. */
    Device device(Device.Kind kind) {
        if (!cpuLane()) {
            return lane().device();
        }
        return switch (kind) {
            case CPU -> Device.CPU;
            case CUDA -> Device.cuda(0);
            case METAL -> Device.metal(0);
        };
    }

    /** The device families this lane decides for. */
    List<Device.Kind> kinds() {
        return cpuLane() ? List.of(Device.Kind.CPU, Device.Kind.CUDA, Device.Kind.METAL)
                : List.of(lane().device().kind());
    }

    // ------------------------------------------------------------------------------------------------ runners

    /** One sinks_attn call on the lane with its fp64 answer, the decisions it took, and a no-sink control. */
    record SinksOut(double[][][][] actual, SinksRun run, double noSinkGap, String arm, String kernel, int chunks,
            RuntimeException error) {
        double err() {
            return run == null ? Double.NaN : run.diff().maxAbs();
        }
    }

    static SinksInputs sinksInputs(long seed, int b, int hq, int hkv, int tq, int tk, int d, int window) {
        SinksInputs in = SinksInputs.generate(seed, b, hq, hkv, tq, tk, d, P, 2.0);
        int visible = Math.max(1, window == 0 ? tk : Math.min(window, tk));
        // Heavy sinks: each competes with a whole row of keys, so dropping it is visible on long rows.
        return new SinksInputs(in.q(), in.k(), in.v(), UnionRun.heavySinks(in.sinks(), visible));
    }

    SinksOut sinks(Device device, SinksInputs in, double[][][][] mask, int window, boolean flash512) {
        DispatchTrace.Last trace = DispatchTrace.last();
        trace.sinksArm = null;
        trace.sinksKernel = null;
        trace.sinksSplitChunks = 0;
        Tensor actual;
        try {
            actual = SinksAttention.sinksAttn(lane(), SinksRun.tensor(in.q(), DType.F32, device),
                    SinksRun.tensor(in.k(), DType.F32, device), SinksRun.tensor(in.v(), DType.F32, device),
                    SinksRun.sinks(in.sinks(), device), mask == null ? null : SinksRun.tensor(mask, DType.F32, device),
                    window, flash512);
        } catch (IllegalArgumentException e) {
            return new SinksOut(null, null, Double.NaN, trace.sinksArm, trace.sinksKernel, trace.sinksSplitChunks, e);
        }
        String arm = trace.sinksArm;
        String kernel = trace.sinksKernel;
        int chunks = trace.sinksSplitChunks;
        SinksRun run = SinksRun.of(SinksRun.problem(in, mask, window), actual, P);
        double[] none = new double[in.sinks().length];
        Arrays.fill(none, Double.NEGATIVE_INFINITY);
        double gap = Diff.of(SinksAttentionOracle.attend(SinksRun.problem(in, mask, window).withSinks(none)),
                run.actual()).maxAbs();
        return new SinksOut(run.actual(), run, gap, arm, kernel, chunks, null);
    }

    /** The bare call (no oracle): for repeated calls. */
    float[] sinksRaw(Device device, SinksInputs in, int window) {
        return SinksAttention.sinksAttn(lane(), SinksRun.tensor(in.q(), DType.F32, device),
                SinksRun.tensor(in.k(), DType.F32, device), SinksRun.tensor(in.v(), DType.F32, device),
                SinksRun.sinks(in.sinks(), device), null, window, true).toFloatArray();
    }

    /** One dsv4_attention call on the lane against the fp64 oracle, with its no-sink control and decisions. */
    record UnionOut(double[][][][] actual, Diff diff, double limit, double noSinkGap, String engine, boolean parallel,
            int splitRows) {
    }

    UnionOut union(UnionRun.Spec spec, long seed, int admittedForSinks, Tensor callerMask, double[][][] oracleMask) {
        UnionInputs in = spec.inputs(seed);
        double[] sinks = UnionRun.heavySinks(in.sinks(), Math.max(1, admittedForSinks));
        DispatchTrace.Last trace = DispatchTrace.last();
        trace.unionEngine = null;
        trace.unionSplitRows = -1;
        double[][][][] actual = Tensors.toArray4(UnionRun.run(spec, in, sinks, callerMask, lane()));
        UnionProblem p = new UnionProblem(in.q(), in.k(), in.v(), in.compressed(), sinks, oracleMask, spec.window(),
                spec.ratio().value(), spec.rawPrefix());
        double[][][][] oracle = UnionAttentionOracle.attend(p);
        Diff diff = Diff.of(oracle, actual);
        double naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(p, P)).maxAbs();
        double limit = Tolerance.limit(P, naive, diff.oracleMaxAbs());
        double[][][][] noSink = UnionAttentionOracle.attend(new UnionProblem(in.q(), in.k(), in.v(), in.compressed(),
                null, oracleMask, spec.window(), spec.ratio().value(), spec.rawPrefix()));
        return new UnionOut(actual, diff, limit, Diff.of(noSink, actual).maxAbs(), trace.unionEngine,
                trace.unionParallel, trace.unionSplitRows);
    }

    /**
     * A CSA decode (or {@code tq}-row) call whose last row admits {@code admitted} keys: the 128-key raw window (the
     * keep span, after a raw prefix) plus {@code admitted - 128} compressed blocks, all admitted.
     */
    static UnionRun.Spec csaWithAdmitted(int heads, int tq, int admitted, int d) {
        int w = 128;
        int tc = admitted - w;
        int keep = tq + w - 1;
        int tkFull = 4 * tc + 4; // floor(tkFull / 4) - 1 >= tc at the first row: every block admitted
        return new UnionRun.Spec(1, heads, tq, keep, tc, d, w, CompressRatio.CSA, tkFull - keep, P);
    }

    // ------------------------------------------------------------------------------------------------ B1

    /** One exercised boundary point. */
    record Point(String id, long x, String decided, String expected, double err, double limit, Worst worst,
            double controlGap) {
        boolean decisionOk() {
            return expected == null || expected.equals(decided);
        }
    }

    @Test
    @Claim("B1")
    void everyRegisteredThresholdAtMinusOneZeroPlusOne(Evidence ev) {
        Evidence e = on(ev);
        long seed = 1201;
        e.seed(seed);
        String lane = lane().name();
        List<DispatchRegistry.Threshold> declared = DispatchRegistry.all().stream()
                .filter(t -> t.lanes().contains(lane)).toList();
        List<Point> points = new ArrayList<>();
        int exercised = 0;
        List<String> missed = new ArrayList<>();
        for (DispatchRegistry.Threshold t : declared) {
            List<Point> got = exercise(t, seed);
            if (got.size() >= 3) {
                exercised++;
            } else {
                missed.add(t.id());
            }
            points.addAll(got);
        }
        long flips = 0;
        for (int i = 0; i + 1 < points.size(); i++) {
            Point a = points.get(i);
            Point b = points.get(i + 1);
            if (a.id().equals(b.id()) && a.expected() != null && !a.expected().equals(b.expected())) {
                flips++;
            }
        }
        e.degeneracy("declared_thresholds_on_lane", declared.size(), Comparison.GE, 10,
                "the registry lists " + declared.size() + " thresholds for " + lane);
        e.degeneracy("expected_decisions_flip_at_boundaries", flips, Comparison.GE, declared.size() / 2.0,
                flips + " expected decision changes between neighbouring points");
        e.info("boundary_coverage_percent", 100.0 * exercised / Math.max(1, declared.size()));
        detail("boundary points not exercised", missed);
        e.checkEqual("boundary_coverage_exercised_vs_declared", exercised, declared.size());
        List<String> wrong = new ArrayList<>();
        for (Point p : points) {
            if (!p.decisionOk()) {
                wrong.add(p.id() + "@" + p.x() + ": " + p.decided() + " != " + p.expected());
            }
        }
        detail("decisions differing from the spec", wrong);
        e.checkEqual("decision_mismatches", wrong.size(), 0);
        for (Point p : points) {
            if (Double.isNaN(p.limit())) {
                continue;
            }
            String label = "[" + p.id() + " @ " + p.x() + "]";
            e.check("max_abs_err" + label, p.err(), p.limit(), p.worst());
            if (!Double.isNaN(p.controlGap())) {
                e.controlGap("drop_the_sink" + label, p.controlGap(), p.limit());
            }
        }
    }

    /** Prints what a count is made of (the metric name stays the same in every run, so runs can be paired). */
    void detail(String what, List<String> items) {
        if (!items.isEmpty()) {
            System.err.println("[" + lane().name() + "] " + what + ": " + items);
        }
    }

    /** The three points of {@code t} on this lane (fewer when this test has no exercise for it). */
    List<Point> exercise(DispatchRegistry.Threshold t, long seed) {
        List<Point> out = new ArrayList<>();
        String id = t.id();
        long v = t.value();
        for (long x = v - 1; x <= v + 1; x++) {
            Point p = point(id, (int) x, seed + x);
            if (p != null) {
                out.add(p);
            }
        }
        return out;
    }

    private Point point(String id, int x, long seed) {
        if (id.startsWith("cuda.fused.head_dim.")) {
            return sinksPoint(id, x, Device.Kind.CUDA, 1, 3, 7, x, 0, true,
                    SPEC_FUSED.contains(x) ? "CUDA_FUSED" : "UNFUSED", seed);
        }
        if (id.startsWith("metal.prefill.head_dim.")) {
            return sinksPoint(id, x, Device.Kind.METAL, 1, 3, 7, x, 0, true,
                    SPEC_FUSED.contains(x) && x <= 256 ? "METAL_FUSED" : "UNFUSED", seed);
        }
        if (id.startsWith("metal.decode.head_dim.")) {
            String expected = !SPEC_FUSED.contains(x) ? "UNFUSED"
                    : cpuLane() && SPEC_METAL_DECODE.contains(x) ? "METAL_FUSED/flash_attn_sinks_metal_decode"
                    : "METAL_FUSED/flash_attn_sinks_metal";
            return sinksPoint(id, x, Device.Kind.METAL, 1, 1, 9, x, 4, true, expected, seed);
        }
        switch (id) {
            case "cuda.flash512.head_dim" -> {
                // Both settings of the switch at each point: the point's decision is "on/off".
                SinksOut on = sinks(device(Device.Kind.CUDA), sinksInputs(seed, 1, 2, 1, 2, 5, x, 0), null, 0, true);
                SinksOut off = sinks(device(Device.Kind.CUDA), sinksInputs(seed, 1, 2, 1, 2, 5, x, 0), null, 0, false);
                boolean fusedOn = SPEC_FUSED.contains(x) || x == SPEC_FLASH_512;
                boolean fusedOff = SPEC_FUSED.contains(x);
                String expected = (fusedOn ? "CUDA_FUSED" : "UNFUSED") + "/" + (fusedOff ? "CUDA_FUSED" : "UNFUSED");
                SinksOut w = on.err() / on.run().limit() >= off.err() / off.run().limit() ? on : off;
                SinksOut g = on.noSinkGap() / on.run().limit() <= off.noSinkGap() / off.run().limit() ? on : off;
                return new Point(id, x, on.arm() + "/" + off.arm(), expected, w.err(), w.run().limit(),
                        w.run().diff().worst(), g.noSinkGap() * w.run().limit() / g.run().limit());
            }
            case "sinks.varlen.min_batch" -> {
                Device.Kind kind = kinds().getFirst();
                int b = Math.max(x, 1);
                String fusedArm = kind == Device.Kind.CUDA ? "CUDA_FUSED"
                        : kind == Device.Kind.METAL ? "METAL_FUSED" : "UNFUSED";
                return sinksPoint(id, x, kind, b, 3, 6, 64, 0, true,
                        b >= SPEC_VARLEN_MIN_BATCH ? "VARLEN" : fusedArm, seed);
            }
            case "sinks.decode.max_q" -> {
                if (x < 1) {
                    // No query row: the decision without a call (t_q = 0 has nothing to compare).
                    boolean single = DispatchRegistry.singleQuery(x);
                    return new Point(id, x, single ? "single" : "multi", x <= SPEC_DECODE_Q ? "single" : "multi",
                            Double.NaN, Double.NaN, null, Double.NaN);
                }
                String kernel = cpuLane() && x <= SPEC_DECODE_Q ? "flash_attn_sinks_metal_decode"
                        : "flash_attn_sinks_metal";
                return sinksPoint(id, x, Device.Kind.METAL, 1, x, 12, 64, 5, true, "METAL_FUSED/" + kernel, seed);
            }
            case "cpu.engine.vector_min_macs" -> {
                // 2 * H * tq * columns * D = 2^20 at 512 columns (H 8, tq 2, D 64): one column is the step.
                int cols = (int) (SPEC_VECTOR_MIN_MACS / (2L * 8 * 2 * 64)) + (x - (int) t(id));
                return unionPoint(id, x, csaColumns(8, 2, cols, 64), seed,
                        2L * 8 * 2 * cols * 64 < SPEC_VECTOR_MIN_MACS ? "scalar-small-call" : "default", true);
            }
            case "cpu.engine.parallel_min_macs" -> {
                int cols = (int) (SPEC_PARALLEL_MIN_MACS / (2L * 64 * 2 * 64)) + (x - (int) t(id));
                return unionPoint(id, x, csaColumns(64, 2, cols, 64), seed,
                        2L * 64 * 2 * cols * 64 >= SPEC_PARALLEL_MIN_MACS ? "parallel" : "serial", false);
            }
            case "cpu.union.tile" -> {
                // A STANDARD decode admitting x keys (window 128 > x): the tile edge inside one row.
                UnionRun.Spec spec = new UnionRun.Spec(1, 2, 1, x, 0, 16, 128, CompressRatio.STANDARD, 0, P);
                UnionOut u = union(spec, seed, x, null, null);
                return new Point(id, x, null, null, u.diff().maxAbs(), u.limit(), u.diff().worst(), u.noSinkGap());
            }
            case "native.block_k" -> {
                Device.Kind kind = lane().device().kind();
                return sinksPoint(id, x, kind, 1, 3, x, 64, 0, true,
                        kind == Device.Kind.CUDA ? "CUDA_FUSED" : "METAL_FUSED", seed, nativeDefine("BLOCK_K"));
            }
            case "native.block_q" -> {
                Device.Kind kind = lane().device().kind();
                return sinksPoint(id, x, kind, 1, x, x + 6, 64, 0, true,
                        kind == Device.Kind.CUDA ? "CUDA_FUSED" : "METAL_FUSED", seed, nativeDefine("BLOCK_Q"));
            }
            case "split_k.min_keys" -> {
                SinksOut s = sinks(device(Device.Kind.CUDA), sinksInputs(seed, 1, 2, 1, 1, x, 64, 0), null, 0, true);
                UnionOut u = union(csaWithAdmitted(2, 1, x, 16), seed, x, null, null);
                String expected = x >= SPEC_SPLIT_MIN ? "split/split" : "single/single";
                String decided = (s.chunks() > 0 ? "split" : "single") + "/" + (u.splitRows() > 0 ? "split" : "single");
                // The nearer-to-failing of the two outputs (each ratio to its own limit), on the union's limit scale.
                double errRatio = Math.max(s.err() / s.run().limit(), u.diff().maxAbs() / u.limit());
                double gapRatio = Math.min(s.noSinkGap() / s.run().limit(), u.noSinkGap() / u.limit());
                return new Point(id, x, decided, expected, errRatio * u.limit(), u.limit(), u.diff().worst(),
                        gapRatio * u.limit());
            }
            case "split_k.chunk" -> {
                int tk = SPEC_SPLIT_MIN + x; // one chunk edge past the switch: 1279, 1280, 1281
                SinksOut s = sinks(device(Device.Kind.CUDA), sinksInputs(seed, 1, 2, 1, 1, tk, 64, 0), null, 0, true);
                int expected = (tk + SPEC_CHUNK - 1) / SPEC_CHUNK;
                String decided = "chunks " + s.chunks();
                String wanted = "chunks " + expected;
                if (!cpuLane()) {
                    // The native kernels declare their chunk: it must be the registry's.
                    decided += " source " + nativeDefine("SPLIT_K_CHUNK");
                    wanted += " source " + t(id);
                }
                return new Point(id, x, decided, wanted, s.err(), s.run().limit(), s.run().diff().worst(),
                        s.noSinkGap());
            }
            case "native.split_k.threads" -> {
                // A union decode of 1024 admitted keys at head dim x: every thread owns one output element at 128,
                // a thread owns a second one from 129 on.
                UnionOut u = union(csaWithAdmitted(1, 1, SPEC_SPLIT_MIN, x), seed, SPEC_SPLIT_MIN, null, null);
                return new Point(id, x, (u.splitRows() > 0 ? "split" : "single") + " source "
                        + nativeDefine("SPLIT_K_THREADS"), "split source " + t(id), u.diff().maxAbs(), u.limit(),
                        u.diff().worst(), u.noSinkGap());
            }
            case "cuda.native.max_head_dim", "metal.native.max_head_dim" -> {
                int max = id.startsWith("cuda") ? SPEC_CUDA_NATIVE_MAX_D : SPEC_METAL_NATIVE_MAX_D;
                String varlenKernel = id.startsWith("cuda") ? "flash_attn_sinks_varlen" : "flash_attn_sinks_varlen_metal";
                // A packed varlen call (B 2, no mask) and a union decode of 1024 keys, both at head dim x.
                DispatchTrace.last().varlenKernel = null;
                SinksOut s = sinks(device(Device.Kind.CPU), sinksInputs(seed, 2, 2, 1, 3, 6, x, 0), null, 0, true);
                String ran = DispatchTrace.last().varlenKernel;
                UnionOut u = union(csaWithAdmitted(1, 1, SPEC_SPLIT_MIN, x), seed, SPEC_SPLIT_MIN, null, null);
                String decided = s.arm() + "/" + ran + "/" + (u.splitRows() > 0 ? "split" : "single") + " source "
                        + nativeDefine("MAX_D");
                String expected = "VARLEN/" + (x <= max ? varlenKernel + "/split" : "unfused-by-rows/single")
                        + " source " + t(id);
                double errRatio = Math.max(s.err() / s.run().limit(), u.diff().maxAbs() / u.limit());
                double gapRatio = Math.min(s.noSinkGap() / s.run().limit(), u.noSinkGap() / u.limit());
                return new Point(id, x, decided, expected, errRatio * u.limit(), u.limit(), u.diff().worst(),
                        gapRatio * u.limit());
            }
            default -> {
                return null;
            }
        }
    }

    /** The registry's value of {@code id} (to centre the points on what is declared). */
    private static long t(String id) {
        return DispatchRegistry.all().stream().filter(t -> t.id().equals(id)).findFirst().orElseThrow().value();
    }

    private Point sinksPoint(String id, int x, Device.Kind kind, int b, int tq, int tk, int d, int window,
            boolean flash512, String expected, long seed) {
        return sinksPoint(id, x, kind, b, tq, tk, d, window, flash512, expected, seed, -1);
    }

    /** {@code nativeValue}: the kernel source's own constant where the point is a native tile edge (else -1). */
    private Point sinksPoint(String id, int x, Device.Kind kind, int b, int tq, int tk, int d, int window,
            boolean flash512, String expected, long seed, long nativeValue) {
        SinksOut s = sinks(device(kind), sinksInputs(seed, b, 2, 1, tq, tk, d, window), null, window, flash512);
        String decided = expected != null && expected.contains("/") ? s.arm() + "/" + s.kernel() : s.arm();
        if (nativeValue >= 0 && !cpuLane()) {
            // The kernel source must declare the registry's tile: the point is the kernel's own edge.
            decided = decided + " source " + nativeValue;
            expected = expected + " source " + t(id);
        }
        if (s.error() != null) {
            return new Point(id, x, decided + " (" + s.error().getMessage() + ")", expected, Double.NaN, Double.NaN,
                    null, Double.NaN);
        }
        return new Point(id, x, decided, expected, s.err(), s.run().limit(), s.run().diff().worst(), s.noSinkGap());
    }

    private Point unionPoint(String id, int x, UnionRun.Spec spec, long seed, String expected, boolean engine) {
        UnionOut u = union(spec, seed, spec.tq() + spec.window() - 1 + spec.tc(), null, null);
        String decided = engine ? u.engine() : u.parallel() ? "parallel" : "serial";
        return new Point(id, x, decided, expected, u.diff().maxAbs(), u.limit(), u.diff().worst(), u.noSinkGap());
    }

    /** A CSA call of {@code tq} rows with exactly {@code columns} union columns (keep span + compressed blocks). */
    static UnionRun.Spec csaColumns(int heads, int tq, int columns, int d) {
        int w = 128;
        int keep = tq + w - 1;
        int tc = columns - keep;
        int tkFull = 4 * tc + 4;
        return new UnionRun.Spec(1, heads, tq, keep, tc, d, w, CompressRatio.CSA, tkFull - keep, P);
    }

    /** {@code #define name N} of this lane's kernel source. */
    long nativeDefine(String name) {
        if (cpuLane()) {
            return -1;
        }
        Path src = lane().device().kind() == Device.Kind.CUDA ? Path.of("..", "native", "cuda", "sinks_attn.cu")
                : Path.of("..", "native", "metal", "sinks_attn.metal");
        try {
            Matcher m = Pattern.compile("(?m)^#define\\s+" + name + "\\s+(\\d+)").matcher(Files.readString(src));
            return m.find() ? Long.parseLong(m.group(1)) : -2;
        } catch (IOException e) {
            throw new AssertionError("cannot read the kernel source " + src.toAbsolutePath() + ": " + e, e);
        }
    }

    // ------------------------------------------------------------------------------------------------ B2

    @Test
    @Claim("B2")
    void oneQueryAgreesWithNQueriesAndPrefillRowWithDecodeStep(Evidence ev) {
        Evidence e = on(ev);
        long seed = 1202;
        e.seed(seed);
        int tq = 6;
        int tk = 14;
        for (Device.Kind kind : kinds()) {
            for (int window : new int[] {0, 5}) {
                String label = "[sinks " + kind + " window " + window + "]";
                SinksInputs in = sinksInputs(seed + window, 1, 4, 2, tq, tk, 64, window);
                SinksOut all = sinks(device(kind), in, null, window, true);
                long bits = 0;
                Acc err = Acc.errors();
                Acc gaps = Acc.gaps();
                int offset = tk - tq;
                for (int r = 0; r < tq; r++) {
                    SinksInputs one = single(in, r, r + offset + 1);
                    SinksOut s = sinks(device(kind), one, null, window, true);
                    for (int h = 0; h < 4; h++) {
                        for (int c = 0; c < 64; c++) {
                            float a = (float) all.actual()[0][h][r][c];
                            float b = (float) s.actual()[0][h][0][c];
                            bits += Float.floatToRawIntBits(a) != Float.floatToRawIntBits(b) ? 1 : 0;
                        }
                    }
                    err.add(s.err(), s.run().limit(), s.run().diff().worst(), "r=" + r);
                    if (r < tq - 1) {
                        // Control: the same query against the whole cache (the last position's keys) must differ.
                        SinksOut wrong = sinks(device(kind), single(in, r, tk), null, window, true);
                        double gap = 0;
                        for (int h = 0; h < 4; h++) {
                            for (int c = 0; c < 64; c++) {
                                gap = Math.max(gap, Math.abs(wrong.actual()[0][h][0][c] - all.actual()[0][h][r][c]));
                            }
                        }
                        gaps.add(gap, s.run().limit(), null, "r=" + r);
                    }
                }
                e.degeneracy("rows_see_different_key_counts" + label, tq, Comparison.GE, 2, tq + " query rows");
                e.checkBitIdentical("bits_differing_one_vs_n" + label, bits);
                err.check(e, "max_abs_err_single_query" + label);
                e.check("max_abs_err_n_queries" + label, all.err(), all.run().limit(), all.run().diff().worst());
                gaps.control(e, "query_alone_against_whole_cache" + label);
            }
        }
        // Union: prefill rows against the decode step at the same position (absorbed MQA), with sinks.
        UnionRun.Spec prefill = new UnionRun.Spec(1, 4, 5, 40, 10, 32, 16, CompressRatio.CSA, 0, P);
        UnionInputs in = prefill.inputs(seed);
        double[] sinks = UnionRun.heavySinks(in.sinks(), 16 + 10);
        double[][][][] rows = Tensors.toArray4(UnionRun.run(prefill, in, sinks, null, lane()));
        long bits = 0;
        Acc err = Acc.errors();
        Acc gaps = Acc.gaps();
        for (int r = 0; r < 5; r++) {
            int p = 40 - 5 + r;
            int tkStep = p + 1;
            int tcStep = Math.min(10, tkStep / 4);
            double[][][][] qStep = new double[1][4][1][];
            for (int h = 0; h < 4; h++) {
                qStep[0][h][0] = in.q()[0][h][r];
            }
            double[][][] kStep = {Arrays.copyOf(in.k()[0], tkStep)};
            UnionInputs step = new UnionInputs(qStep, kStep, kStep,
                    new double[][][] {Arrays.copyOf(in.compressed()[0], tcStep)}, in.sinks());
            UnionRun.Spec decode = new UnionRun.Spec(1, 4, 1, tkStep, tcStep, 32, 16, CompressRatio.CSA, 0, P);
            double[][][][] got = Tensors.toArray4(UnionRun.run(decode, step, sinks, null, lane()));
            UnionProblem problem = new UnionProblem(step.q(), step.k(), step.v(), step.compressed(), sinks, null, 16,
                    4, 0);
            double[][][][] oracle = UnionAttentionOracle.attend(problem);
            Diff d = Diff.of(oracle, got);
            double naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(problem, P)).maxAbs();
            double limit = Tolerance.limit(P, naive, d.oracleMaxAbs());
            err.add(d.maxAbs(), limit, d.worst(), "r=" + r);
            for (int h = 0; h < 4; h++) {
                for (int c = 0; c < 32; c++) {
                    bits += Float.floatToRawIntBits((float) rows[0][h][r][c])
                            != Float.floatToRawIntBits((float) got[0][h][0][c]) ? 1 : 0;
                }
            }
            if (r > 0) {
                double g = 0;
                for (int h = 0; h < 4; h++) {
                    for (int c = 0; c < 32; c++) {
                        g = Math.max(g, Math.abs(rows[0][h][r - 1][c] - got[0][h][0][c]));
                    }
                }
                gaps.add(g, limit, null, "r=" + r);
            }
        }
        e.checkBitIdentical("bits_differing_prefill_row_vs_decode_step[union CSA]", bits);
        err.check(e, "max_abs_err_decode_step[union CSA]");
        gaps.control(e, "decode_step_vs_previous_prefill_row[union CSA]");
    }

    /** Query row {@code r} alone against the first {@code keys} keys (and values). */
    static SinksInputs single(SinksInputs in, int r, int keys) {
        int hq = in.q()[0].length;
        int hkv = in.k()[0].length;
        double[][][][] q = new double[1][hq][1][];
        for (int h = 0; h < hq; h++) {
            q[0][h][0] = in.q()[0][h][r];
        }
        double[][][][] k = new double[1][hkv][][];
        double[][][][] v = new double[1][hkv][][];
        for (int h = 0; h < hkv; h++) {
            k[0][h] = Arrays.copyOf(in.k()[0][h], keys);
            v[0][h] = Arrays.copyOf(in.v()[0][h], keys);
        }
        return new SinksInputs(q, k, v, in.sinks());
    }

    // ------------------------------------------------------------------------------------------------ B3

    @Test
    @Claim("B3")
    void aMaskedCallNeverReachesAMasklessFusedKernel(Evidence ev) {
        Evidence e = on(ev);
        long seed = 1203;
        e.seed(seed);
        List<Integer> dims = new ArrayList<>(List.of(1, 63, 64, 80, 96, 112, 128, 192, 256, 511, 512, 513));
        long onFused = 0;
        long calls = 0;
        Acc err = Acc.errors();
        Acc gaps = Acc.gaps();
        List<String> where = new ArrayList<>();
        for (Device.Kind kind : kinds()) {
            if (kind == Device.Kind.CPU) {
                continue;
            }
            for (int d : dims) {
                for (boolean flash512 : kind == Device.Kind.CUDA ? new boolean[] {true, false} : new boolean[] {true}) {
                    SinksInputs in = sinksInputs(seed + d, 1, 2, 1, 3, 7, d, 0);
                    double[][][][] mask = paddingMask(3, 7, 2);
                    SinksOut s = sinks(device(kind), in, mask, 0, flash512);
                    calls++;
                    if (s.arm() != null && (s.arm().endsWith("_FUSED"))) {
                        onFused++;
                        where.add(kind + " d=" + d + " flash512=" + flash512);
                    }
                    if (s.error() != null) {
                        continue;
                    }
                    String at = kind + " d=" + d + " flash512=" + flash512;
                    err.add(s.err(), s.run().limit(), s.run().diff().worst(), at);
                    // Control: the causal-only answer (the mask dropped) misses by the mask's whole effect.
                    gaps.add(Diff.of(SinksAttentionOracle.attend(SinksRun.problem(in, null, 0)), s.actual()).maxAbs(),
                            s.run().limit(), null, at);
                }
            }
        }
        e.degeneracy("masked_calls_over_fused_head_dims", calls, Comparison.GE, dims.size(),
                calls + " masked calls");
        detail("masked calls on a fused kernel", where);
        e.checkEqual("masked_calls_on_a_fused_kernel", onFused, 0);
        err.check(e, "max_abs_err_masked");
        gaps.control(e, "mask_dropped");
    }

    /** {@code [1,1,tq,tk]}: 0, except the last {@code pad} key columns are -inf for every row but the last. */
    static double[][][][] paddingMask(int tq, int tk, int pad) {
        double[][][][] m = new double[1][1][tq][tk];
        for (int r = 0; r < tq - 1; r++) {
            for (int c = 0; c < pad; c++) {
                m[0][0][r][c] = Double.NEGATIVE_INFINITY;
            }
        }
        return m;
    }

    // ------------------------------------------------------------------------------------------------ B4

    @Test
    @Claim("B4")
    void singleQueryCallsRouteToExistingKernelsAndHonourTheWindow(Evidence ev) {
        Evidence e = on(ev);
        long seed = 1204;
        e.seed(seed);
        if (!kinds().contains(Device.Kind.METAL) && !kinds().contains(Device.Kind.CUDA)) {
            e.skipped(lane().name(), "this lane decides for " + kinds() + " only: no fused kernel sets");
            return;
        }
        long missing = 0;
        long runs = 0;
        long decodeKernelRuns = 0;
        Acc err = Acc.errors();
        Acc gaps = Acc.gaps();
        List<String> where = new ArrayList<>();
        for (Device.Kind kind : kinds()) {
            if (kind == Device.Kind.CPU) {
                continue;
            }
            for (int d : new int[] {64, 80, 96, 112, 128, 192, 256}) {
                int window = 6;
                SinksInputs in = sinksInputs(seed + d, 1, 2, 1, 1, 30, d, window);
                SinksOut s = sinks(device(kind), in, null, window, true);
                runs++;
                if (s.error() != null || s.kernel() == null) {
                    missing++;
                    where.add(kind + " d=" + d + " kernel " + s.kernel() + ": "
                            + (s.error() == null ? "no kernel ran" : s.error().getMessage()));
                    continue;
                }
                decodeKernelRuns += s.kernel().endsWith("_decode") ? 1 : 0;
                String at = kind + " d=" + d;
                err.add(s.err(), s.run().limit(), s.run().diff().worst(), at);
                // Control: the same call without the window (upstream's decode kernel bug) must differ.
                gaps.add(Diff.of(SinksAttentionOracle.attend(SinksRun.problem(in, null, 0)), s.actual()).maxAbs(),
                        s.run().limit(), null, at);
            }
        }
        e.degeneracy("single_query_calls_made", runs, Comparison.GE, 7, runs + " single-query calls over the fused"
                + " head dims");
        if (cpuLane()) {
            e.degeneracy("the_decode_kernel_ran", decodeKernelRuns, Comparison.GE, 1,
                    decodeKernelRuns + " calls ran flash_attn_sinks_metal_decode");
        }
        detail("single-query calls routed to a missing kernel", where);
        e.checkEqual("single_query_calls_routed_to_a_missing_kernel", missing, 0);
        err.check(e, "max_abs_err_single_query_windowed");
        gaps.control(e, "window_ignored");
    }

    // ------------------------------------------------------------------------------------------------ B5

    @Test
    @Claim("B5")
    void splitKDecodeAgreesWithTheOracleAtTheSwitchAndEveryChunkEdge(Evidence ev) {
        Evidence e = on(ev);
        long seed = 1205;
        e.seed(seed);
        // The switch (1023 one pass; 1024 four full chunks; 1025 a last chunk of one key) and the chunk edges: a last
        // chunk of chunk - 1 keys, of a whole chunk, and one key past it (a new chunk). The emulated lanes launch a
        // std::thread per GPU thread, so they take one chunk edge (5 chunks); the cpu lane takes four.
        List<Integer> lens = new ArrayList<>(List.of(1023, 1024, 1025));
        for (int c = 5; c <= (cpuLane() ? 8 : 5); c++) {
            lens.addAll(List.of(c * SPEC_CHUNK - 1, c * SPEC_CHUNK, c * SPEC_CHUNK + 1));
        }
        long wrongSplit = 0;
        long splitCalls = 0;
        long unionSplitCalls = 0;
        long chunkEdges = 0;
        Acc err = Acc.errors();
        Acc gaps = Acc.gaps();
        List<String> where = new ArrayList<>();
        Device.Kind kind = cpuLane() ? Device.Kind.CUDA : lane().device().kind();
        for (int n : lens) {
            int expectedChunks = n >= SPEC_SPLIT_MIN ? (n + SPEC_CHUNK - 1) / SPEC_CHUNK : 0;
            int lastChunk = n - (expectedChunks - 1) * SPEC_CHUNK;
            chunkEdges += n >= SPEC_SPLIT_MIN && (lastChunk == SPEC_CHUNK - 1 || lastChunk == SPEC_CHUNK
                    || lastChunk == 1) ? 1 : 0;
            // Sinks, no window and a window whose start lands one key past a chunk edge.
            for (int window : new int[] {0, n - 2 * SPEC_CHUNK - 1}) {
                SinksOut s = sinks(device(kind), sinksInputs(seed + n, 1, 2, 1, 1, n, 64, window), null, window, true);
                if (s.chunks() != expectedChunks) {
                    wrongSplit++;
                    where.add("sinks n=" + n + " window " + window + " chunks " + s.chunks() + " != " + expectedChunks);
                }
                splitCalls += s.chunks() > 0 ? 1 : 0;
                err.add(s.err(), s.run().limit(), s.run().diff().worst(), "sinks n=" + n + " window " + window);
                gaps.add(s.noSinkGap(), s.run().limit(), null, "sinks n=" + n + " window " + window);
            }
            // Union: a CSA decode whose row admits n keys (128 raw + n - 128 compressed blocks), through the lane's
            // masked path (the union mask composed) on the native lanes.
            UnionOut u = union(csaWithAdmitted(2, 1, n, 16), seed + n, n, null, null);
            if ((u.splitRows() > 0) != (n >= SPEC_SPLIT_MIN)) {
                wrongSplit++;
                where.add("union n=" + n + " split rows " + u.splitRows());
            }
            unionSplitCalls += u.splitRows() > 0 ? 1 : 0;
            err.add(u.diff().maxAbs(), u.limit(), u.diff().worst(), "union n=" + n);
            gaps.add(u.noSinkGap(), u.limit(), null, "union n=" + n);
        }
        // Union with a caller mask that removes keys on both sides of a chunk edge (the union mask composed).
        int n = 1300;
        UnionRun.Spec spec = csaWithAdmitted(2, 1, n, 16);
        int tkFull = spec.rawPrefix() + spec.tk();
        double[][][] oracleMask = new double[1][1][tkFull + spec.tc()];
        float[] callerMask = new float[tkFull + spec.tc()];
        for (int c = tkFull + 250; c < tkFull + 262; c++) {
            oracleMask[0][0][c] = Double.NEGATIVE_INFINITY;
            callerMask[c] = Float.NEGATIVE_INFINITY;
        }
        UnionOut masked = union(spec, seed, n, Tensor.of(callerMask, DType.F32, Device.CPU, 1, tkFull + spec.tc()),
                oracleMask);
        if (masked.splitRows() <= 0) {
            wrongSplit++;
            where.add("union masked n=" + n + " split rows " + masked.splitRows());
        }
        err.add(masked.diff().maxAbs(), masked.limit(), masked.diff().worst(), "union masked n=" + n);
        gaps.add(masked.noSinkGap(), masked.limit(), null, "union masked n=" + n);
        e.degeneracy("sinks_calls_that_split", splitCalls, Comparison.GE, 2 * (lens.size() - 1),
                splitCalls + " sinks calls split");
        e.degeneracy("union_calls_that_split", unionSplitCalls, Comparison.GE, lens.size() - 1,
                unionSplitCalls + " union calls split");
        e.degeneracy("lengths_at_a_chunk_edge", chunkEdges, Comparison.GE, 3,
                chunkEdges + " lengths whose last chunk holds chunk - 1, chunk or 1 keys");
        detail("split-K decisions differing from the spec", where);
        e.checkEqual("split_decisions_wrong", wrongSplit, 0);
        err.check(e, "max_abs_err_long_kv");
        gaps.control(e, "drop_the_sink");
    }

    // ------------------------------------------------------------------------------------------------ B6

    @Test
    @Claim("B6")
    void degenerateRowsAreZerosWithTheSameBitsOnEveryLane(Evidence ev) {
        Evidence e = on(ev);
        long seed = 1206;
        e.seed(seed);
        long nan = 0;
        long nonZeroBits = 0;
        long degenerateElements = 0;
        Acc liveErr = Acc.errors();
        Acc gaps = Acc.gaps();
        for (Device.Kind kind : kinds()) {
            // (1) Unfused, masked: row 0 fully masked; head 0 has no sink (-inf), head 1 puts all mass on its sink.
            SinksInputs base = sinksInputs(seed, 1, 2, 1, 3, 6, 64, 0);
            SinksInputs in = new SinksInputs(base.q(), base.k(), base.v(),
                    new double[] {Double.NEGATIVE_INFINITY, base.sinks()[1]});
            double[][][][] mask = new double[1][1][3][6];
            Arrays.fill(mask[0][0][0], Double.NEGATIVE_INFINITY);
            SinksOut s = sinks(device(kind), in, mask, 0, true);
            for (int h = 0; h < 2; h++) {
                for (int c = 0; c < 64; c++) {
                    double x = s.actual()[0][h][0][c];
                    nan += Double.isNaN(x) ? 1 : 0;
                    nonZeroBits += Float.floatToRawIntBits((float) x) != 0 ? 1 : 0;
                    degenerateElements++;
                }
            }
            nan += countNaN(s.actual());
            liveErr.add(s.err(), s.run().limit(), s.run().diff().worst(), "unfused " + kind);
            gaps.add(Diff.of(SinksAttentionOracle.attend(SinksRun.problem(in, null, 0)), s.actual()).maxAbs(),
                    s.run().limit(), null, "unfused " + kind);
            // (2) Fused (no mask), more queries than keys: the first rows have no live key; head 0 has no sink.
            if (kind != Device.Kind.CPU) {
                SinksOut f = sinks(device(kind), new SinksInputs(sinksInputs(seed + 1, 1, 2, 1, 5, 3, 64, 0).q(),
                        sinksInputs(seed + 1, 1, 2, 1, 5, 3, 64, 0).k(), sinksInputs(seed + 1, 1, 2, 1, 5, 3, 64, 0).v(),
                        new double[] {Double.NEGATIVE_INFINITY, 1.5}), null, 0, true);
                for (int h = 0; h < 2; h++) {
                    for (int r = 0; r < 2; r++) {
                        for (int c = 0; c < 64; c++) {
                            double x = f.actual()[0][h][r][c];
                            nan += Double.isNaN(x) ? 1 : 0;
                            nonZeroBits += Float.floatToRawIntBits((float) x) != 0 ? 1 : 0;
                            degenerateElements++;
                        }
                    }
                }
                nan += countNaN(f.actual());
                liveErr.add(f.err(), f.run().limit(), f.run().diff().worst(), "fused " + kind);
            }
        }
        // (3) Union with a caller mask that removes every key of row 0, with sinks and without.
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 3, 20, 4, 32, 8, CompressRatio.CSA, 0, P);
        for (boolean withSinks : new boolean[] {true, false}) {
            UnionInputs in = spec.inputs(seed + 2);
            double[] sinks = withSinks ? in.sinks() : null;
            float[] m = new float[3 * (20 + 4)];
            double[][][] om = new double[1][3][24];
            for (int c = 0; c < 24; c++) {
                m[c] = Float.NEGATIVE_INFINITY;
                om[0][0][c] = Double.NEGATIVE_INFINITY;
            }
            double[][][][] got = Tensors.toArray4(UnionRun.run(spec, in, sinks,
                    Tensor.of(m, DType.F32, Device.CPU, 3, 24), lane()));
            for (int h = 0; h < 2; h++) {
                for (int c = 0; c < 32; c++) {
                    double x = got[0][h][0][c];
                    nan += Double.isNaN(x) ? 1 : 0;
                    nonZeroBits += Float.floatToRawIntBits((float) x) != 0 ? 1 : 0;
                    degenerateElements++;
                }
            }
            nan += countNaN(got);
            UnionProblem p = new UnionProblem(in.q(), in.k(), in.v(), in.compressed(), sinks, om, 8, 4, 0);
            double[][][][] oracle = UnionAttentionOracle.attend(p);
            Diff d = Diff.of(oracle, got);
            liveErr.add(d.maxAbs(), Tolerance.limit(P, Diff.of(oracle, UnionAttentionOracle.attendNaive(p, P))
                    .maxAbs(), d.oracleMaxAbs()), d.worst(), "union sinks " + withSinks);
        }
        e.degeneracy("degenerate_elements", degenerateElements, Comparison.GE, 64, degenerateElements
                + " elements of fully masked, sink-only and keyless rows");
        e.checkEqual("nan_elements", nan, 0);
        e.checkBitIdentical("bits_differing_from_positive_zero_on_degenerate_rows", nonZeroBits);
        liveErr.check(e, "max_abs_err_live_rows");
        gaps.control(e, "mask_dropped");
    }

    static long countNaN(double[][][][] x) {
        long n = 0;
        for (double[][][] a : x) {
            for (double[][] b : a) {
                for (double[] c : b) {
                    for (double v : c) {
                        n += Double.isNaN(v) ? 1 : 0;
                    }
                }
            }
        }
        return n;
    }

    // ------------------------------------------------------------------------------------------------ B7

    @Test
    @Claim("B7")
    void repeatedCallsGiveTheSameBitsAlsoUnderConcurrency(Evidence ev) throws InterruptedException {
        Evidence e = on(ev);
        long seed = 1207;
        e.seed(seed);
        Device.Kind kind = kinds().contains(Device.Kind.CUDA) ? Device.Kind.CUDA
                : kinds().contains(Device.Kind.METAL) ? Device.Kind.METAL : kinds().getFirst();
        // The Java kernels: several heads and row tiles per call, so that concurrent calls overlap inside a kernel.
        // The native lanes: one query head and one row tile, one block per launch (their cost is per launch).
        boolean cpu = cpuLane();
        SinksInputs in = cpu ? sinksInputs(seed, 1, 4, 2, 16, 64, 64, 16) : sinksInputs(seed, 1, 1, 1, 8, 40, 64, 16);
        SinksInputs other = cpu ? sinksInputs(seed + 1, 1, 4, 2, 16, 64, 64, 16)
                : sinksInputs(seed + 1, 1, 1, 1, 8, 40, 64, 16);
        // The other threads run until the repeats end; on a native lane (which serialises its launches) a bounded
        // share each, so that the repeats still get their turn.
        int share = cpu ? Integer.MAX_VALUE : 25;
        float[] first = sinksRaw(device(kind), in, 16);
        float[] otherFirst = sinksRaw(device(kind), other, 16);
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 1, 48, 8, 32, 16, CompressRatio.CSA, 0, P);
        UnionInputs uin = spec.inputs(seed);
        float[] unionFirst = UnionRun.run(spec, uin, uin.sinks(), null, lane()).toFloatArray();
        int repeats = 100;
        // A native lane's union stage is its three unfused kernels (three emulated launches a call): repeated 10
        // times there, 100 times on the cpu lane, whose union kernel is the Java fast path.
        int unionRepeats = cpuLane() ? repeats : 10;
        long alone = 0;
        for (int i = 0; i < repeats; i++) {
            alone += Diff.bitsDiffering(first, sinksRaw(device(kind), in, 16));
            if (i < unionRepeats) {
                alone += Diff.bitsDiffering(unionFirst, UnionRun.run(spec, uin, uin.sinks(), null, lane())
                        .toFloatArray());
            }
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong otherDiffering = new AtomicLong();
        AtomicLong otherCalls = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            Thread th = new Thread(() -> {
                for (int n = 0; n < share && !stop.get(); n++) {
                    otherDiffering.addAndGet(Diff.bitsDiffering(otherFirst, sinksRaw(device(kind), other, 16)));
                    otherCalls.incrementAndGet();
                }
            }, "b7-other-" + t);
            th.setDaemon(true);
            threads.add(th);
            th.start();
        }
        long concurrent = 0;
        try {
            for (int i = 0; i < repeats; i++) {
                concurrent += Diff.bitsDiffering(first, sinksRaw(device(kind), in, 16));
                if (cpuLane()) {
                    // The Java union kernel shares its scratch pools across threads: repeat it under concurrency
                    // too (a native lane's union stage is the unfused kernels, repeated alone above).
                    concurrent += Diff.bitsDiffering(unionFirst, UnionRun.run(spec, uin, uin.sinks(), null, lane())
                            .toFloatArray());
                }
            }
        } finally {
            stop.set(true);
            for (Thread th : threads) {
                th.join(60_000);
            }
        }
        // Control: a small change of one query element must change bits (the comparison sees it).
        double[][][][] q = deepCopy(in.q());
        q[0][0][7][0] = (float) (q[0][0][7][0] * (1 + 1e-3) + 1e-3);
        long ulpChanged = Diff.bitsDiffering(first, sinksRaw(device(kind), new SinksInputs(q, in.k(), in.v(),
                in.sinks()), 16));
        e.degeneracy("other_threads_ran_kernels", otherCalls.get(), Comparison.GE, 3,
                otherCalls.get() + " calls on other threads during the repeats");
        e.checkBitIdentical("bits_differing_over_" + repeats + "_calls", alone);
        e.checkBitIdentical("bits_differing_over_" + repeats + "_calls_with_3_threads_running_kernels", concurrent);
        e.checkBitIdentical("bits_differing_on_the_other_threads", otherDiffering.get());
        e.controlAtLeast("perturbed_q_element_changes_bits", ulpChanged, 1);
    }

    static double[][][][] deepCopy(double[][][][] x) {
        double[][][][] y = new double[x.length][][][];
        for (int a = 0; a < x.length; a++) {
            y[a] = new double[x[a].length][][];
            for (int b = 0; b < x[a].length; b++) {
                y[a][b] = new double[x[a][b].length][];
                for (int c = 0; c < x[a][b].length; c++) {
                    y[a][b][c] = x[a][b][c].clone();
                }
            }
        }
        return y;
    }
}
