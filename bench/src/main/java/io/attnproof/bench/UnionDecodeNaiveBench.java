package io.attnproof.bench;

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
 * The naive scalar Java loop ({@link NaiveUnion}) on the decode shapes of {@link UnionDecodeBench}. Seconds per call
 * at B = 128, so: single-shot, 1 fork, 1 warmup + 3 measured calls.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-Xmn128m"})
@Warmup(iterations = 1)
@Measurement(iterations = 3)
public class UnionDecodeNaiveBench {
    @Param({"1", "32", "128"})
    public int batch;

    @Param({"32", "512"})
    public int tc;

    float[] q;
    float[] k;
    float[] c;
    float[] sinks;

    @Setup
    public void setup() {
        int d = Shapes.HEAD_DIM;
        q = Inputs.gaussian(1, batch * Shapes.HEADS * d);
        k = Inputs.gaussian(2, batch * Shapes.RAW_KEYS * d);
        c = Inputs.gaussian(3, batch * tc * d);
        sinks = Inputs.sinks(4, Shapes.HEADS, Shapes.RAW_KEYS + tc);
    }

    @Benchmark
    public float[] naive() {
        return NaiveUnion.attend(q, batch, Shapes.HEADS, 1, Shapes.HEAD_DIM, k, Shapes.RAW_KEYS,
                Shapes.decodeContext(tc) - Shapes.RAW_KEYS, c, tc, sinks, Shapes.WINDOW, 4);
    }
}
