package io.attnproof.bench;

import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * How steady the FMA peak is beside the calls (P3, informational): in one JVM, windows of the FMA loop on every
 * thread ({@link FmaPeakBench#chains}) alternate with windows of the prefill call ({@link UnionPrefillBench#fast}) and
 * the fused sinks call ({@link SinksBench#fused}), each call window set against the mean of the two FMA windows
 * either side of it. JMH measures the FMA loop once, in its own fork, minutes before the calls; on a shared host
 * whose state drifts within a minute, these windows show how much the share depends on that moment.
 *
 * <p>Args: {@code OUT_JSON [ROUNDS [WINDOW_SECONDS]]} (defaults 12 and 1; 4 warm-up rounds first). Writes the FMA
 * windows' GFLOP/s and, per shape, every window's ms a call, GFLOP/s and share; bench/run runs it after JMH,
 * {@link Report} reads it.
 */
public final class PairedShare {
    private record Shape(String id, Supplier<Object> call, double flops) {
    }

    private static volatile Object sink;

    private PairedShare() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            throw new IllegalArgumentException(
                    "args = [] must name the output JSON file (then ROUNDS, WINDOW_SECONDS)");
        }
        Path out = Path.of(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 12;
        double window = args.length > 2 ? Double.parseDouble(args[2]) : 1.0;
        if (rounds < 1 || !(window > 0)) {
            throw new IllegalArgumentException("rounds = " + rounds + ", window = " + window
                    + " must be at least 1 round of a positive number of seconds");
        }
        UnionPrefillBench prefill = new UnionPrefillBench();
        prefill.setup();
        SinksBench sinks = new SinksBench();
        sinks.setup();
        List<Shape> shapes = List.of(new Shape("prefill_tq512", prefill::fast, Shapes.prefillFlops()),
                new Shape("sinks_t512_w128", sinks::fused, SinksBench.flops()));
        int threads = Runtime.getRuntime().availableProcessors();
        for (int i = 0; i < 4; i++) { // warm-up, as long as JMH's prefill warm-up: C2 compiles the kernels and the loop
            fmaGflops(threads, window);
            for (Shape s : shapes) {
                msPerCall(s.call(), 2 * window);
            }
        }
        List<Double> fma = new ArrayList<>();
        Map<String, List<Double>> ms = new LinkedHashMap<>();
        Map<String, List<Double>> gflops = new LinkedHashMap<>();
        Map<String, List<Double>> share = new LinkedHashMap<>();
        fma.add(fmaGflops(threads, window));
        for (int r = 0; r < rounds; r++) {
            for (Shape s : shapes) {
                double t = msPerCall(s.call(), window);
                double after = fmaGflops(threads, window);
                double before = fma.getLast();
                fma.add(after);
                double rate = s.flops() / (t * 1e6);
                ms.computeIfAbsent(s.id(), k -> new ArrayList<>()).add(t);
                gflops.computeIfAbsent(s.id(), k -> new ArrayList<>()).add(rate);
                share.computeIfAbsent(s.id(), k -> new ArrayList<>()).add(rate / ((before + after) / 2));
            }
        }
        StringBuilder json = new StringBuilder("{\"threads\":" + threads + ",\"rounds\":" + rounds
                + ",\"window_seconds\":" + JsonTrees.number(window) + ",\"fma_gflops\":" + array(fma) + ",\"shapes\":{");
        for (Shape s : shapes) {
            json.append(s == shapes.getFirst() ? "" : ",").append(JsonTrees.quote(s.id())).append(":{\"ms\":")
                    .append(array(ms.get(s.id()))).append(",\"gflops\":").append(array(gflops.get(s.id())))
                    .append(",\"share\":").append(array(share.get(s.id()))).append('}');
        }
        Files.writeString(out, json.append("}}\n").toString());
        System.out.print(json);
    }

    /** GFLOP/s of the FMA loop on {@code threads} threads over one window. */
    static double fmaGflops(int threads, double seconds) {
        long[] ops = new long[threads];
        long t0 = System.nanoTime();
        long end = t0 + (long) (seconds * 1e9);
        IntStream.range(0, threads).parallel().forEach(w -> {
            long n = 0;
            do {
                sink = FmaPeakBench.chains(0.999f, 1e-3f);
                n++;
            } while (System.nanoTime() < end);
            ops[w] = n;
        });
        double elapsed = (System.nanoTime() - t0) / 1e9;
        return IntStream.range(0, threads).mapToDouble(w -> ops[w]).sum() * FmaPeakBench.flops() / elapsed / 1e9;
    }

    /** Mean ms a call over one window (at least one call). */
    static double msPerCall(Supplier<Object> call, double seconds) {
        long t0 = System.nanoTime();
        long end = t0 + (long) (seconds * 1e9);
        int n = 0;
        do {
            sink = call.get();
            n++;
        } while (System.nanoTime() < end);
        return (System.nanoTime() - t0) / 1e6 / n;
    }

    private static String array(List<Double> xs) {
        return xs.stream().map(JsonTrees::number).collect(Collectors.joining(",", "[", "]"));
    }
}
