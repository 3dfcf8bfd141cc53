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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * dsv4_attention prefill on the CPU fast path: B = 1, t_q = t_k = 512, CSA t_c = 128 ({@link Shapes}). 1 fork, 4
 * warmup + 5 measured iterations of 2 s.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-Xms2g", "-Xmx2g", "-Xmn128m"})
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 5, time = 2)
public class UnionPrefillBench {
    Tensor q;
    Tensor k;
    Tensor compressed;
    Tensor sinks;
    Dsv4Config config;

    @Setup
    public void setup() {
        int d = Shapes.HEAD_DIM;
        q = Inputs.tensor(11, 1, Shapes.HEADS, Shapes.PREFILL_TQ, d);
        k = Inputs.tensor(12, 1, 1, Shapes.PREFILL_TQ, d);
        compressed = Inputs.tensor(13, 1, 1, Shapes.PREFILL_TC, d);
        sinks = Inputs.sinkTensor(14, Shapes.HEADS, Shapes.WINDOW + Shapes.PREFILL_TC);
        config = Dsv4Config.of(CompressRatio.CSA, Shapes.WINDOW, 0);
    }

    @Benchmark
    public Tensor fast() {
        return Dsv4Attention.attention(q, k, k, compressed, null, sinks, config);
    }
}
