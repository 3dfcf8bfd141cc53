package io.attnproof.bench;

import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.Tensor;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * dsv4_attention decode on the CPU fast path at V4 shapes ({@link Shapes}): t_q = 1, B in {1, 32, 128}, t_c in
 * {32, 512}. 1 fork, 6 warmup + 5 measured iterations of 1 s (about 12 s a shape; the warmup lets C2 finish, else the
 * first measured iterations still box vectors and allocate).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-Xms3g", "-Xmx3g", "-Xmn128m"})
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
public class UnionDecodeBench {
    @Param({"1", "32", "128"})
    public int batch;

    @Param({"32", "512"})
    public int tc;

    Tensor q;
    Tensor k;
    Tensor compressed;
    Tensor sinks;
    Dsv4Config config;

    @Setup
    public void setup() {
        int d = Shapes.HEAD_DIM;
        q = Inputs.tensor(1, batch, Shapes.HEADS, 1, d);
        k = Inputs.tensor(2, batch, 1, Shapes.RAW_KEYS, d);
        compressed = Inputs.tensor(3, batch, 1, tc, d);
        sinks = Inputs.sinkTensor(4, Shapes.HEADS, Shapes.RAW_KEYS + tc);
        config = Dsv4Config.of(CompressRatio.CSA, Shapes.WINDOW, Shapes.decodeContext(tc) - Shapes.RAW_KEYS);
    }

    @Benchmark
    public Tensor fast() {
        return Dsv4Attention.attention(q, k, k, compressed, null, sinks, config);
    }
}
