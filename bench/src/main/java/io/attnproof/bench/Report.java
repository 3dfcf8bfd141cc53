package io.attnproof.bench;

import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.mask.RaggedUnionMask;
import io.attnproof.attention.mask.UnionMaskMemo;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.EvidenceLine;
import io.attnproof.fixtures.evidence.EvidenceSink;
import io.attnproof.fixtures.json.JsonTrees;
import io.attnproof.fixtures.evidence.RunId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads one bench/run's measurements (JMH's JSON with the gc profiler, {@link PairedShare}'s paired.json, NumPy's
 * JSON, the PyTorch peer's oracle checks under bench/target/peers, the mutant campaign's campaign.json, the timed mvn
 * verify), measures the mask builds of a 43-layer step in process, prints the table and records every number as an
 * evidence line through the fixtures' {@link Evidence} API (bench/target/evidence/Bench.jsonl, test
 * {@code Bench#run}; kind, cmp and run on every line):
 * <ul>
 *   <li>P1: Java's speed over NumPy's, {@code >= 1.3} on every decode and prefill shape (the sinks shape's ratio is
 *       informational);</li>
 *   <li>P2: over PyTorch's (DJL, offline), {@code >= 1.0} on the same shapes, after the peer's output was within the
 *       tolerance rule of the fp64 oracle (a check line per shape);</li>
 *   <li>P3: the share of the machine's sustained FMA rate measured beside the calls ({@link PairedShare}: the median,
 *       over the call windows, of the call's GFLOP/s over the mean of the FMA windows either side), {@code >= 0.60}
 *       at prefill and {@code >= 0.55} on the sinks shape; the share of JMH's FMA peak (a burst on a shared VM) and
 *       PairedShare's ranges as info lines;</li>
 *   <li>M4 and R2 from the step measured in process (mask builds per step, ragged builds of a uniform batch); the
 *       rest (timings, allocation, load average) informational.</li>
 * </ul>
 * The lines join the latest build's run (the newest run id in the repository's other evidence), so the ledger reads
 * them with that build; with no build's evidence they carry this JVM's own id. A failing check is recorded, printed,
 * and makes the exit status 1.
 *
 * <p>Args: {@code ROOT LOAD_BEFORE LOAD_AFTER}.
 */
public final class Report {
    /** Java over NumPy, decode and prefill (P1). */
    static final double P1_MIN = 1.3;
    /** Java over PyTorch, decode and prefill (P2). */
    static final double P2_MIN = 1.0;
    /** Share of the sustained FMA rate beside the calls, by P3 shape (PairedShare's median share). */
    static final Map<String, Double> P3_MIN = Map.of("prefill_tq512", 0.60, "sinks_t512_w128", 0.55);

    private final List<String> lines = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private final Map<String, Evidence> evidence = new LinkedHashMap<>();
    private final Map<String, Map<String, Object>> torch = new LinkedHashMap<>();
    private final StringBuilder table = new StringBuilder();
    private final EvidenceSink sink;
    private final Map<String, Map<String, Object>> jmh = new LinkedHashMap<>();
    private Map<String, Object> numpy;
    private Map<String, Object> numpyOne;
    private String numpySkip;
    private Map<String, Object> paired;

    Report(EvidenceSink sink) {
        this.sink = sink;
    }

    public static void main(String[] args) throws IOException {
        Path root = Path.of(args.length > 0 ? args[0] : ".");
        String loadBefore = args.length > 1 ? args[1] : "?";
        String loadAfter = args.length > 2 ? args[2] : "?";
        Path out = root.resolve("bench/target");
        Path evidence = out.resolve("evidence");
        Files.createDirectories(evidence);
        Files.deleteIfExists(evidence.resolve("Bench.jsonl"));
        String run = latestRun(root, evidence);
        if (run != null) {
            System.setProperty(RunId.PROPERTY, run);
        }
        Report r = new Report(new EvidenceSink(evidence));
        r.read(out);
        r.render(root, loadBefore, loadAfter);
        Files.writeString(out.resolve("report.md"), r.table.toString());
        System.out.print(r.table);
        System.out.println("\nevidence: " + evidence.resolve("Bench.jsonl") + " (" + r.lines.size() + " lines, claims "
                + r.evidence.keySet() + ", run " + RunId.current() + (run == null ? ", no build's evidence to join" : "")
                + ")");
        System.out.println("table:    " + out.resolve("report.md"));
        if (!r.failures.isEmpty()) {
            System.out.println("\nfailing checks (" + r.failures.size() + "):");
            r.failures.forEach(f -> System.out.println("  " + f));
            System.exit(1);
        }
    }

    /** The newest run id of the repository's evidence outside {@code own} (the latest build's), or null. */
    static String latestRun(Path root, Path own) throws IOException {
        String latest = null;
        if (!Files.isDirectory(root)) {
            return null;
        }
        try (var modules = Files.list(root)) {
            for (Path module : modules.toList()) {
                Path dir = module.resolve("target").resolve("evidence");
                if (!Files.isDirectory(dir) || dir.toAbsolutePath().normalize().equals(own.toAbsolutePath().normalize())) {
                    continue;
                }
                try (var files = Files.list(dir)) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".jsonl")).toList()) {
                        for (String line : Files.readAllLines(f)) {
                            if (line.isBlank()) {
                                continue;
                            }
                            String id = EvidenceLine.parse(line, f.toString()).run();
                            if (id != null && (latest == null || id.compareTo(latest) > 0)) {
                                latest = id;
                            }
                        }
                    }
                }
            }
        }
        return latest;
    }

    @SuppressWarnings("unchecked")
    void read(Path out) throws IOException {
        Path jmhFile = out.resolve("jmh.json");
        if (Files.isRegularFile(jmhFile)) {
            for (Object o : (List<Object>) JsonTrees.parse(Files.readString(jmhFile))) {
                Map<String, Object> m = (Map<String, Object>) o;
                String name = ((String) m.get("benchmark")).replace("io.attnproof.bench.", "");
                Map<String, Object> params = (Map<String, Object>) m.get("params");
                if (params != null) {
                    for (var e : new java.util.TreeMap<>(params).entrySet()) {
                        name += " " + e.getKey() + "=" + e.getValue();
                    }
                }
                jmh.put(name, m);
            }
        }
        Path np = out.resolve("numpy.json");
        Path npSkip = out.resolve("numpy-skipped.txt");
        if (Files.isRegularFile(np)) {
            numpy = JsonTrees.parseObject(Files.readString(np));
            Path one = out.resolve("numpy-1thread.json");
            numpyOne = Files.isRegularFile(one) ? JsonTrees.parseObject(Files.readString(one)) : null;
        } else {
            numpySkip = Files.isRegularFile(npSkip) ? Files.readString(npSkip).strip() : "no bench/target/numpy.json";
        }
        Path pairedFile = out.resolve("paired.json");
        paired = Files.isRegularFile(pairedFile) ? JsonTrees.parseObject(Files.readString(pairedFile)) : null;
        Path peers = out.resolve("peers");
        if (Files.isDirectory(peers)) {
            try (var files = Files.list(peers)) {
                for (Path f : files.filter(p -> p.getFileName().toString().startsWith("torch-")).sorted().toList()) {
                    Map<String, Object> m = JsonTrees.parseObject(Files.readString(f));
                    torch.put((String) m.get("shape"), m);
                }
            }
        }
    }

    /** Mean of a JMH result in its unit, and its 99.9% error; null if absent. */
    @SuppressWarnings("unchecked")
    double[] score(String name) {
        Map<String, Object> m = jmh.get(name);
        if (m == null) {
            return null;
        }
        Map<String, Object> p = (Map<String, Object>) m.get("primaryMetric");
        double err = JsonTrees.toDouble(p.get("scoreError"));
        return new double[] {JsonTrees.toDouble(p.get("score")), Double.isNaN(err) ? 0 : err};
    }

    @SuppressWarnings("unchecked")
    double secondary(String name, String metric) {
        Map<String, Object> m = jmh.get(name);
        if (m == null) {
            return Double.NaN;
        }
        Map<String, Object> s = (Map<String, Object>) m.get("secondaryMetrics");
        Object v = s == null ? null : s.get(metric);
        return v == null ? Double.NaN : JsonTrees.toDouble(((Map<String, Object>) v).get("score"));
    }

    /** NumPy's seconds per call of {@code shape}: the faster of its default-threads and one-thread runs. */
    double numpySeconds(String shape) {
        double all = numpySeconds(numpy, shape);
        double one = numpySeconds(numpyOne, shape);
        return Double.isNaN(one) ? all : Double.isNaN(all) ? one : Math.min(all, one);
    }

    @SuppressWarnings("unchecked")
    static double numpySeconds(Map<String, Object> run, String shape) {
        if (run == null) {
            return Double.NaN;
        }
        Map<String, Object> s = (Map<String, Object>) ((Map<String, Object>) run.get("shapes")).get(shape);
        return s == null ? Double.NaN : JsonTrees.toDouble(s.get("seconds"));
    }

    @SuppressWarnings("unchecked")
    double numpyFlops(String shape) {
        Map<String, Object> s = (Map<String, Object>) ((Map<String, Object>) numpy.get("shapes")).get(shape);
        return s == null ? Double.NaN : JsonTrees.toDouble(s.get("flops"));
    }

    void render(Path root, String loadBefore, String loadAfter) throws IOException {
        Runtime rt = Runtime.getRuntime();
        row("# attnproof bench");
        row("");
        row("JDK " + System.getProperty("java.vm.version") + ", " + rt.availableProcessors() + " CPUs ("
                + cpuModel() + "), load average before " + loadBefore + ", after " + loadAfter + ".");
        info("P3", "load_average_1min_before", parseLoad(loadBefore));
        info("P3", "load_average_1min_after", parseLoad(loadAfter));

        double[] peak1 = score("FmaPeakBench.oneThread");
        double[] peakAll = score("FmaPeakBench.allThreads");
        double peakOne = peak1 == null ? Double.NaN : peak1[0] * FmaPeakBench.flops() / 1e9;
        double peakMachine = peakAll == null ? Double.NaN : peakAll[0] * FmaPeakBench.flops() / 1e9;
        row("FP32 FMA peak (Vector API " + FmaPeakBench.SP + ", " + FmaPeakBench.CHAINS + " FMA chains): "
                + fmt(peakOne) + " GFLOP/s on 1 thread, " + fmt(peakMachine) + " GFLOP/s on "
                + rt.availableProcessors() + " threads (the machine peak the fractions below use).");
        info("P3", "fma_peak_gflops_1_thread", peakOne);
        info("P3", "fma_peak_gflops_machine", peakMachine);
        if (numpy != null) {
            row("NumPy " + numpy.get("numpy") + " (" + numpy.get("blas") + "): the same math in float32, dense masked"
                    + " scores (bench/numpy_union.py), timed with the BLAS's threads " + numpy.get("threads")
                    + (numpyOne == null ? "" : " and with 1 thread; the faster of the two per shape") + ".");
        } else {
            row("NumPy: skipped (" + numpySkip + ").");
        }
        if (!torch.isEmpty()) {
            Map<String, Object> any = torch.values().iterator().next();
            row("PyTorch: " + any.get("engine") + " through DJL (pytorch-engine, pytorch-native-cpu from the class path,"
                    + " ai.djl.offline=" + any.get("offline") + ", native library extracted into "
                    + any.get("engine_cache_dir") + ", HTTP(S) proxies on a closed port): the same math as PyTorch ops"
                    + " (scores matmul, materialised mask, softmax with the sink column, values matmul), checked"
                    + " against the fp64 oracle before timing (TorchBench).");
        } else {
            row("PyTorch: not measured (no bench/target/peers/torch-*.json: TorchBench did not run).");
        }
        row("");
        row("| shape | Java fast path ms | GFLOP/s | of FMA peak (burst) | of sustained FMA (paired) | naive Java ms | x naive | NumPy ms (default / 1 thread) | NumPy / Java | PyTorch ms | PyTorch / Java | alloc B/op |");
        row("|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (int batch : new int[] {1, 32, 128}) {
            for (int tc : new int[] {32, 512}) {
                String params = " batch=" + batch + " tc=" + tc;
                shapeRow("decode_B" + batch + "_tc" + tc, "decode B=" + batch + " t_c=" + tc,
                        "UnionDecodeBench.fast" + params, "UnionDecodeNaiveBench.naive" + params,
                        Shapes.decodeFlops(batch, tc), peakMachine, false);
            }
        }
        shapeRow("prefill_tq512", "prefill B=1 t_q=512 t_c=128", "UnionPrefillBench.fast",
                "UnionPrefillNaiveBench.naive", Shapes.prefillFlops(), peakMachine, true);
        shapeRow("sinks_t512_w128", "sinks (fused) B=1 Hq=64 Hkv=8 D=64 t=512 W=128", "SinksBench.fused", null,
                SinksBench.flops(), peakMachine, true);
        row("");
        pairedRows();

        // The 43-layer step: memo on/off and the per-sequence flag on/off, side by side in one JMH run.
        int[] builds = maskBuildsPerStep();
        row("43-layer decode step (context " + Shapes.STEP_CONTEXT + ", V4 ratio schedule, dsv4_attention per layer):");
        row("");
        row("| B | memo on ms | memo off ms | flag off ms | flag on ms | flag on / off | GFLOP/s (memo on) |");
        row("|---|---|---|---|---|---|---|");
        for (int batch : new int[] {1, 128}) {
            String p = " batch=" + batch;
            double[] on = score("StepBench.memoOn" + p);
            double[] off = score("StepBench.memoOff" + p);
            double[] flag = score("StepBench.flagOn" + p);
            if (on == null || off == null || flag == null) {
                row("| " + batch + " | not measured | | | | | |");
                continue;
            }
            double ratio = flag[0] / on[0];
            double noise = Math.hypot(flag[1] / flag[0], on[1] / on[0]);
            double gflops = Shapes.stepFlops(batch) / (on[0] * 1e6);
            row("| " + batch + " | " + ms(on) + " | " + ms(off) + " | " + ms(on) + " | " + ms(flag) + " | "
                    + String.format(Locale.ROOT, "%.3f (noise +/- %.3f)", ratio, noise) + " | " + fmt(gflops) + " |");
            info("P1", "step_ms_memo_on_B" + batch, on[0]);
            info("P1", "step_ms_memo_off_B" + batch, off[0]);
            info("P1", "step_ms_flag_on_B" + batch, flag[0]);
            info("P1", "step_memo_off_over_on_B" + batch, off[0] / on[0]);
            info("P1", "flag_on_over_off_B" + batch, ratio);
        }
        row("");
        row("Mask builds per 43-layer step (counted in process, B = 1): memo on " + builds[0] + ", memo off " + builds[1]
                + "; ragged masks built with the flag on (uniform batch): " + builds[2] + ".");
        check("M4", "mask_builds_per_step_bench", builds[0], 3);
        info("M4", "mask_builds_per_step_memo_off_bench", builds[1]);
        equal("R2", "ragged_builds_per_step_flag_on_uniform_bench", builds[2], 0);

        // Memory: a decode at B = 128 allocates its output and no per-layer dense mask.
        row("");
        int n = Shapes.RAW_KEYS + 512;
        long outBytes = 4L * 128 * Shapes.HEADS * Shapes.HEAD_DIM;
        long uniformMask = 4L * n;
        long batchMask = 4L * 128 * n;
        double single = secondary("UnionDecodeBench.fast batch=128 tc=512", "gc.alloc.rate.norm");
        double step = secondary("StepBench.memoOn batch=128", "gc.alloc.rate.norm");
        row("Allocation (JMH -prof gc, gc.alloc.rate.norm): decode B=128 t_c=512: " + bytes(single) + "/op, of which the"
                + " output [128,64,1,512] is " + bytes(outBytes) + "; overhead " + bytes(single - outBytes)
                + ". A dense uniform mask [1,1,1," + n + "] is " + bytes(uniformMask) + ", a per-layer B-wide mask"
                + " [128,1,1," + n + "] " + bytes(batchMask) + ".");
        info("P1", "alloc_overhead_bytes_decode_B128_tc512", single - outBytes);
        if (!Double.isNaN(step)) {
            double perLayer = (step - Shapes.STEP_LAYERS * (double) outBytes) / Shapes.STEP_LAYERS;
            row("43-layer step B=128: " + bytes(step) + "/op = 43 outputs (" + bytes(43 * outBytes) + ") + "
                    + bytes(perLayer) + " per layer.");
            info("P1", "alloc_overhead_bytes_per_layer_step_B128", perLayer);
        }

        // The sinks kernels, fused and unfused.
        row("");
        double[] fused = score("SinksBench.fused");
        double[] unfused = score("SinksBench.unfused");
        if (fused != null && unfused != null) {
            row("Sinks attention (B=1, Hq=64, Hkv=8, D=64, t=512, window 128): fused Java kernel " + ms(fused)
                    + " ms (" + fmt(SinksBench.flops() / (fused[0] * 1e6)) + " GFLOP/s), unfused path " + ms(unfused)
                    + " ms (" + fmt(SinksBench.flops() / (unfused[0] * 1e6)) + " GFLOP/s): unfused / fused "
                    + String.format(Locale.ROOT, "%.2f", unfused[0] / fused[0]) + ".");
            info("P3", "sinks_unfused_ms", unfused[0]);
            info("P3", "gflops:sinks_unfused", SinksBench.flops() / (unfused[0] * 1e6));
        }

        // The cost of the harness itself.
        row("");
        Path verify = root.resolve("bench/target/verify-seconds.txt");
        String verifyText = Files.isRegularFile(verify) ? Files.readString(verify).strip() : null;
        double verifySeconds = verifyText == null ? Double.NaN : Double.parseDouble(verifyText.split("\\s+")[0]);
        Path campaign = root.resolve("mutants/target/mutants/campaign.json");
        double campaignSeconds = Double.NaN;
        if (Files.isRegularFile(campaign)) {
            campaignSeconds = JsonTrees.toDouble(JsonTrees.parseObject(Files.readString(campaign)).get("wall_seconds"));
        }
        row("mvn -B clean verify: " + (Double.isNaN(verifySeconds) ? "not timed in this run (bench/run --no-verify)"
                : fmt(verifySeconds) + " s wall") + "; mutant campaign: "
                + (Double.isNaN(campaignSeconds) ? "no mutants/target/mutants/campaign.json" : fmt(campaignSeconds)
                        + " s wall (campaign.json)") + ".");
        info("P1", "mvn_verify_wall_seconds", verifySeconds);
        info("P1", "mutant_campaign_wall_seconds", campaignSeconds);
        if (!failures.isEmpty()) {
            row("");
            row("Failing checks: " + String.join("; ", failures) + ".");
        }
    }

    /**
     * One shape's row: P1 (NumPy / Java), P2 (PyTorch / Java, after the peer's oracle check) as checks on decode and
     * prefill shapes and as information on the sinks shape; P3 (share of the FMA peak) a check where {@code p3}.
     */
    private void shapeRow(String id, String label, String fastName, String naiveName, double flops, double peak,
            boolean p3) {
        boolean catalogShape = !id.startsWith("sinks");
        double[] fast = score(fastName);
        double[] naive = naiveName == null ? null : score(naiveName);
        double npMs = numpy == null ? Double.NaN : numpySeconds(id) * 1e3;
        double[] torchMs = score("TorchBench.run shape=" + id);
        Map<String, Object> peer = torch.get(id);
        if (peer != null) {
            // The peer's agreement with the fp64 oracle, measured before it was timed.
            check("P2", "max_abs_err_torch_vs_oracle:" + id, JsonTrees.toDouble(peer.get("max_abs_err")),
                    JsonTrees.toDouble(peer.get("limit")));
        }
        if (fast == null) {
            row("| " + label + " | not measured | | | | | | | | | | |");
            skipLine("P1", "Java " + id + " not measured");
            return;
        }
        double gflops = flops / (fast[0] * 1e6);
        double fraction = gflops / peak;
        double alloc = secondary(fastName, "gc.alloc.rate.norm");
        double sustained = p3 ? pairedMedianShare(id) : Double.NaN;
        row("| " + label + " | " + ms(fast) + " | " + fmt(gflops) + " | " + pct(fraction) + " | "
                + (Double.isNaN(sustained) ? "-" : pct(sustained)) + " | "
                + (naive == null ? "-" : ms(naive)) + " | " + (naive == null ? "-" : fmt(naive[0] / fast[0])) + " | "
                + (Double.isNaN(npMs) ? "skipped" : fmt(1e3 * numpySeconds(numpy, id)) + " / "
                        + fmt(1e3 * numpySeconds(numpyOne, id))) + " | " + (Double.isNaN(npMs) ? "-" : fmt(npMs / fast[0]))
                + " | " + (torchMs == null ? "not measured" : ms(torchMs)) + " | "
                + (torchMs == null ? "-" : fmt(torchMs[0] / fast[0])) + " | " + bytes(alloc) + " |");
        info("P1", "ms:" + id, fast[0]);
        info("P3", "gflops:" + id, gflops);
        info("P3", "fma_peak_fraction:" + id, fraction);
        if (naive != null) {
            info("P1", "speedup_over_naive:" + id, naive[0] / fast[0]);
        }
        if (numpy != null && !Double.isNaN(npMs)) {
            double npFlops = numpyFlops(id);
            if (Math.abs(npFlops - flops) > 1e-6 * flops) {
                throw new IllegalStateException(id + ": NumPy counted " + npFlops + " flops, Java " + flops);
            }
            if (catalogShape) {
                atLeast("P1", "numpy_over_java_at_least:" + id, npMs / fast[0], P1_MIN);
            } else {
                info("P1", "numpy_over_java:" + id, npMs / fast[0]);
            }
        } else {
            skipLine("P1", "NumPy " + id + ": " + (numpy == null ? numpySkip : "no such shape in numpy.json"));
        }
        if (torchMs != null) {
            if (catalogShape) {
                atLeast("P2", "torch_over_java_at_least:" + id, torchMs[0] / fast[0], P2_MIN);
            } else {
                info("P2", "torch_over_java:" + id, torchMs[0] / fast[0]);
            }
        } else {
            skipLine("P2", "PyTorch " + id + " not measured (TorchBench " + (peer == null ? "did not run"
                    : "failed its oracle check or was not timed") + ")");
        }
    }

    /** PairedShare's median share of the sustained FMA rate for shape {@code id}; NaN when it did not run. */
    @SuppressWarnings("unchecked")
    private double pairedMedianShare(String id) {
        if (paired == null || !(paired.get("shapes") instanceof Map<?, ?> shapes)
                || !(shapes.get(id) instanceof Map<?, ?> shape)) {
            return Double.NaN;
        }
        return median(doubles(((Map<String, Object>) shape).get("share")));
    }

    /** In process: memo builds of one 43-layer step with the memo, without it, and ragged builds with the flag on. */
    static int[] maskBuildsPerStep() {
        StepBench s = new StepBench();
        s.batch = 1;
        s.setup();
        org.openjdk.jmh.infra.Blackhole bh = new org.openjdk.jmh.infra.Blackhole(
                "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");
        UnionMaskMemo memo = UnionMaskMemo.current();
        memo.clear();
        s.step(bh, false, true); // the step before, at the previous position
        long before = memo.builds();
        s.step(bh, false, true);
        int on = (int) (memo.builds() - before);
        int off = 0;
        for (int layer = 0; layer < Shapes.STEP_LAYERS; layer++) {
            memo.clear();
            CompressRatio ratio = s.ratios[layer];
            Tensor blocks = ratio == CompressRatio.CSA ? s.csa : ratio == CompressRatio.HCA ? s.hca : null;
            Dsv4Attention.attention(s.q, s.k, s.k, blocks, null, s.sinks[layer],
                    Dsv4Config.of(ratio, Shapes.WINDOW, s.rawPrefix));
            off += (int) memo.builds();
        }
        long ragged = RaggedUnionMask.builds();
        s.step(bh, true, true);
        return new int[] {on, off, (int) (RaggedUnionMask.builds() - ragged)};
    }

    /**
     * How steady the FMA peak and the calls are over a minute ({@link PairedShare}), as info lines of P3: the range of
     * the FMA windows and of each call's GFLOP/s, the call's median over the run's fastest FMA window (the
     * conservative share: that window is the nearest to the hardware's peak), and its share against the FMA windows
     * either side of each call window (median, lowest, highest). P3's check is that median share, per shape, against
     * {@link #P3_MIN}; a shape PairedShare did not measure is a skip line, never a pass.
     */
    @SuppressWarnings("unchecked")
    private void pairedRows() {
        if (paired == null) {
            for (String id : P3_MIN.keySet()) {
                skipLine("P3", "sustained FMA share of " + id + ": no bench/target/paired.json (PairedShare did not run)");
            }
            row("FMA peak over a minute: not measured (no bench/target/paired.json: PairedShare did not run).");
            row("");
            return;
        }
        List<Double> fma = doubles(paired.get("fma_gflops"));
        StringBuilder text = new StringBuilder("FMA peak over a minute (PairedShare, one JVM: "
                + (int) JsonTrees.toDouble(paired.get("rounds")) + " rounds of "
                + fmt(JsonTrees.toDouble(paired.get("window_seconds"))) + " s windows of the FMA loop on " + (int) JsonTrees.toDouble(paired.get("threads")) + " threads between"
                + " windows of the calls): the FMA loop " + fmt(min(fma)) + "–" + fmt(max(fma)) + " GFLOP/s");
        for (var e : ((Map<String, Object>) paired.get("shapes")).entrySet()) {
            Map<String, Object> shape = (Map<String, Object>) e.getValue();
            List<Double> gflops = doubles(shape.get("gflops"));
            List<Double> share = doubles(shape.get("share"));
            double ofFastest = median(gflops) / max(fma);
            text.append("; ").append(e.getKey()).append(' ').append(fmt(min(gflops))).append("–")
                    .append(fmt(max(gflops))).append(" GFLOP/s, median ").append(pct(ofFastest))
                    .append(" of the fastest FMA window (against the FMA windows either side: median ")
                    .append(pct(median(share))).append(", ").append(pct(min(share))).append("–")
                    .append(pct(max(share))).append(')');
            info("P3", "paired_gflops_min:" + e.getKey(), min(gflops));
            info("P3", "paired_gflops_max:" + e.getKey(), max(gflops));
            info("P3", "paired_median_over_fastest_fma:" + e.getKey(), ofFastest);
            Double bar = P3_MIN.get(e.getKey());
            if (bar == null) {
                info("P3", "paired_fma_share_median:" + e.getKey(), median(share));
            } else {
                atLeast("P3", "sustained_fma_share_at_least:" + e.getKey(), median(share), bar);
            }
            info("P3", "paired_fma_share_min:" + e.getKey(), min(share));
            info("P3", "paired_fma_share_max:" + e.getKey(), max(share));
        }
        for (String id : P3_MIN.keySet()) {
            if (!((Map<String, Object>) paired.get("shapes")).containsKey(id)) {
                skipLine("P3", "sustained FMA share of " + id + ": not in bench/target/paired.json");
            }
        }
        info("P3", "paired_fma_gflops_min", min(fma));
        info("P3", "paired_fma_gflops_max", max(fma));
        row(text.append('.').toString());
        row("");
    }

    @SuppressWarnings("unchecked")
    private static List<Double> doubles(Object list) {
        return list == null ? List.of() : ((List<Object>) list).stream().map(JsonTrees::toDouble).toList();
    }

    private static double median(List<Double> xs) {
        List<Double> s = xs.stream().sorted().toList();
        int n = s.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    private static double min(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    private static double max(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    private void row(String s) {
        table.append(s).append('\n');
    }

    /** The recorder of {@code claim}'s lines (one per claim, all in Bench.jsonl). */
    private Evidence ev(String claim) {
        return evidence.computeIfAbsent(claim, c -> Evidence.of(c, Bench.class, "run", sink));
    }

    private void info(String claim, String metric, double value) {
        if (Double.isNaN(value)) {
            return; // not measured in this run: no line
        }
        ev(claim).info(metric, value);
        lines.add(claim + " " + metric);
    }

    /** {@code value <= limit}. */
    private void check(String claim, String metric, double value, double limit) {
        judged(claim, metric, () -> ev(claim).check(metric, value, limit, null));
    }

    /** {@code value >= min}; a value this run could not measure (NaN) is a skip line naming it. */
    private void atLeast(String claim, String metric, double value, double min) {
        if (Double.isNaN(value)) {
            skipLine(claim, metric + " not measured in this run");
            return;
        }
        judged(claim, metric, () -> ev(claim).checkAtLeast(metric, value, min));
    }

    /** {@code value == expected}. */
    private void equal(String claim, String metric, double value, double expected) {
        judged(claim, metric, () -> ev(claim).checkEqual(metric, value, expected));
    }

    private void judged(String claim, String metric, Runnable line) {
        lines.add(claim + " " + metric);
        try {
            line.run();
        } catch (AssertionError e) {
            failures.add(claim + " " + e.getMessage());
        }
    }

    private void skipLine(String claim, String reason) {
        ev(claim).skipped("cpu", reason);
        lines.add(claim + " skipped");
    }

    private static double parseLoad(String s) {
        try {
            return Double.parseDouble(s.trim().split("\\s+")[0]);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    private static String cpuModel() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("model name")) {
                    return l.substring(l.indexOf(':') + 1).strip();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: leave it out
        }
        return System.getProperty("os.arch");
    }

    private static String ms(double[] s) {
        return String.format(Locale.ROOT, "%.3g +/- %.2g", s[0], s[1]);
    }

    private static String fmt(double x) {
        if (Double.isNaN(x)) {
            return "-";
        }
        return x >= 100 ? String.format(Locale.ROOT, "%.0f", x) : String.format(Locale.ROOT, "%.3g", x);
    }

    private static String pct(double f) {
        return Double.isNaN(f) ? "-" : String.format(Locale.ROOT, "%.0f%%", 100 * f);
    }

    private static String bytes(double b) {
        if (Double.isNaN(b)) {
            return "-";
        }
        double a = Math.abs(b);
        return a >= 1 << 20 ? String.format(Locale.ROOT, "%.1f MiB", b / (1 << 20))
                : a >= 1 << 10 ? String.format(Locale.ROOT, "%.1f KiB", b / 1024) : String.format(Locale.ROOT, "%.0f B", b);
    }
}
