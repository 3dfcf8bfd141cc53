package io.attnproof.bench;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The PyTorch peer ({@link TorchPeer}, DJL, offline) on every benchmarked shape: the six decode shapes and the
 * prefill of {@link Shapes}, and the sinks shape of {@link SinksBench}, on the same inputs as the Java benchmarks
 * (the same seeds). Before anything is timed, the peer's output is checked against the fp64 oracle (oracles module)
 * under the claims' tolerance rule (2 x a naive f32 implementation's error + 2 x noise floor) on a slice of the shape
 * (decode: batch entries 0 and 1; prefill: heads 0 to 3; sinks: query heads 0, 8, .., 56, one per KV head); the
 * result goes to {@code bench/target/peers/torch-<shape>.json}, and a peer over its limit is not timed (the setup
 * throws). PyTorch runs with its default intra-op threads (one per core). 1 fork, 3 warmup + 5 measured iterations of
 * 1 s.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-Xmn128m", "--enable-native-access=ALL-UNNAMED",
        "-Dai.djl.offline=true", "-DENGINE_CACHE_DIR=bench/target/djl-cache", "-DPYTORCH_VERSION=2.7.1",
        "-DPYTORCH_FLAVOR=cpu", "-Dhttp.proxyHost=127.0.0.1", "-Dhttp.proxyPort=9", "-Dhttps.proxyHost=127.0.0.1",
        "-Dhttps.proxyPort=9"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TorchBench {
    /** The shapes, named as bench/numpy_union.py and the report name them. */
    @Param({"decode_B1_tc32", "decode_B1_tc512", "decode_B32_tc32", "decode_B32_tc512", "decode_B128_tc32",
        "decode_B128_tc512", "prefill_tq512", "sinks_t512_w128"})
    public String shape;

    TorchPeer peer;
    NDArray q;
    NDArray k;
    NDArray c;
    NDArray v;
    NDArray sinks;
    int window;
    int rawPrefix;

    @Setup
    public void setup() {
        peer = TorchPeer.open();
        Check check = shape.startsWith("sinks") ? setupSinks() : setupUnion();
        write(check);
        if (!(check.err <= check.limit)) {
            throw new IllegalStateException("PyTorch " + shape + ": max_abs_err " + check.err + " > limit "
                    + check.limit + " against the fp64 oracle (" + check.slice + "): not timed");
        }
    }

    @Benchmark
    public long run() {
        try (NDManager m = peer.call()) {
            NDArray out = shape.startsWith("sinks") ? TorchPeer.sinks(m, q, k, v, sinks, window)
                    : TorchPeer.union(m, q, k, c, sinks, Shapes.WINDOW, 4, rawPrefix);
            return out.getShape().size();
        }
    }

    @TearDown
    public void tearDown() {
        peer.close();
    }

    record Check(double err, double limit, String slice) {
    }

    private Check setupUnion() {
        int d = Shapes.HEAD_DIM;
        int h = Shapes.HEADS;
        boolean prefill = shape.startsWith("prefill");
        int batch = prefill ? 1 : Integer.parseInt(shape.substring("decode_B".length(), shape.indexOf("_tc")));
        int tc = prefill ? Shapes.PREFILL_TC : Integer.parseInt(shape.substring(shape.indexOf("_tc") + 3));
        int tq = prefill ? Shapes.PREFILL_TQ : 1;
        int tk = prefill ? Shapes.PREFILL_TQ : Shapes.RAW_KEYS;
        rawPrefix = prefill ? 0 : Shapes.decodeContext(tc) - Shapes.RAW_KEYS;
        // The Java benchmarks' seeds (UnionDecodeBench 1..4, UnionPrefillBench 11..14).
        long s0 = prefill ? 11 : 1;
        float[] qf = Inputs.gaussian(s0, batch * h * tq * d);
        float[] kf = Inputs.gaussian(s0 + 1, batch * tk * d);
        float[] cf = Inputs.gaussian(s0 + 2, batch * tc * d);
        float[] sf = Inputs.sinks(s0 + 3, h, prefill ? Shapes.WINDOW + Shapes.PREFILL_TC : Shapes.RAW_KEYS + tc);
        q = peer.array(qf, batch, h, tq, d);
        k = peer.array(kf, batch, tk, d);
        c = peer.array(cf, batch, tc, d);
        sinks = peer.array(sf, 1, h, 1, 1);
        float[] out;
        try (NDManager m = peer.call()) {
            out = TorchPeer.union(m, q, k, c, sinks, Shapes.WINDOW, 4, rawPrefix).toFloatArray();
        }
        // The slice the oracle checks: decode batch entries 0 and 1 (every head); prefill heads 0..3 (every row).
        int bs = Math.min(batch, 2);
        int hs = prefill ? 4 : h;
        double[][][][] qd = new double[bs][hs][tq][d];
        double[][][][] actual = new double[bs][hs][tq][d];
        double[][][] kd = new double[bs][tk][d];
        double[][][] cd = new double[bs][tc][d];
        double[] sd = new double[hs];
        for (int b = 0; b < bs; b++) {
            for (int hh = 0; hh < hs; hh++) {
                for (int r = 0; r < tq; r++) {
                    for (int e = 0; e < d; e++) {
                        int at = ((b * h + hh) * tq + r) * d + e;
                        qd[b][hh][r][e] = qf[at];
                        actual[b][hh][r][e] = out[at];
                    }
                }
            }
            for (int j = 0; j < tk; j++) {
                for (int e = 0; e < d; e++) {
                    kd[b][j][e] = kf[(b * tk + j) * d + e];
                }
            }
            for (int j = 0; j < tc; j++) {
                for (int e = 0; e < d; e++) {
                    cd[b][j][e] = cf[(b * tc + j) * d + e];
                }
            }
        }
        for (int hh = 0; hh < hs; hh++) {
            sd[hh] = sf[hh];
        }
        UnionProblem p = new UnionProblem(qd, kd, kd, cd, sd, null, Shapes.WINDOW, 4, rawPrefix);
        double[][][][] oracle = UnionAttentionOracle.attend(p);
        Diff diff = Diff.of(oracle, actual);
        double naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(p, Precision.F32)).maxAbs();
        return new Check(diff.maxAbs(), Tolerance.limit(Precision.F32, naive, diff.oracleMaxAbs()),
                prefill ? "heads 0..3, every row" : "batch entries 0.." + (bs - 1) + ", every head");
    }

    private Check setupSinks() {
        int hq = SinksBench.HQ;
        int hkv = SinksBench.HKV;
        int d = SinksBench.D;
        int t = SinksBench.T;
        window = SinksBench.WINDOW;
        // SinksBench's seeds 31..34.
        float[] qf = Inputs.gaussian(31, hq * t * d);
        float[] kf = Inputs.gaussian(32, hkv * t * d);
        float[] vf = Inputs.gaussian(33, hkv * t * d);
        float[] sf = Inputs.sinks(34, hq, window);
        q = peer.array(qf, 1, hq, t, d);
        k = peer.array(kf, 1, hkv, t, d);
        v = peer.array(vf, 1, hkv, t, d);
        sinks = peer.array(sf, 1, hq, 1, 1);
        float[] out;
        try (NDManager m = peer.call()) {
            out = TorchPeer.sinks(m, q, k, v, sinks, window).toFloatArray();
        }
        // Query heads 0, G, 2G, ..: one per KV head (KV head i is the i-th slice's own head).
        int g = hq / hkv;
        double[][][][] qd = new double[1][hkv][t][d];
        double[][][][] actual = new double[1][hkv][t][d];
        double[][][][] kd = new double[1][hkv][t][d];
        double[][][][] vd = new double[1][hkv][t][d];
        double[] sd = new double[hkv];
        for (int i = 0; i < hkv; i++) {
            int h = i * g;
            sd[i] = sf[h];
            for (int r = 0; r < t; r++) {
                for (int e = 0; e < d; e++) {
                    qd[0][i][r][e] = qf[(h * t + r) * d + e];
                    actual[0][i][r][e] = out[(h * t + r) * d + e];
                    kd[0][i][r][e] = kf[(i * t + r) * d + e];
                    vd[0][i][r][e] = vf[(i * t + r) * d + e];
                }
            }
        }
        SinksProblem p = new SinksProblem(qd, kd, vd, sd, null, window, true);
        double[][][][] oracle = SinksAttentionOracle.attend(p);
        Diff diff = Diff.of(oracle, actual);
        double naive = Diff.of(oracle, SinksAttentionOracle.attendNaive(p, Precision.F32)).maxAbs();
        return new Check(diff.maxAbs(), Tolerance.limit(Precision.F32, naive, diff.oracleMaxAbs()),
                "query heads 0, " + g + ", .., " + (hq - g) + " (one per KV head), every row");
    }

    private void write(Check check) {
        Path dir = Path.of("bench", "target", "peers");
        String json = String.format(Locale.ROOT, "{\"peer\":\"torch\",\"engine\":\"%s\",\"shape\":\"%s\","
                + "\"max_abs_err\":%s,\"limit\":%s,\"slice\":\"%s\",\"offline\":\"%s\",\"engine_cache_dir\":\"%s\"}%n",
                TorchPeer.engine(), shape, check.err, check.limit, check.slice, System.getProperty("ai.djl.offline"),
                System.getProperty("ENGINE_CACHE_DIR"));
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("torch-" + shape + ".json"), json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
