package io.attnproof.bench;

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

/** The naive scalar loop on the prefill shape of {@link UnionPrefillBench}: single-shot, 1 fork, 1 + 3 calls. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-Xmn128m"})
@Warmup(iterations = 1)
@Measurement(iterations = 3)
public class UnionPrefillNaiveBench {
    float[] q;
    float[] k;
    float[] c;
    float[] sinks;

    @Setup
    public void setup() {
        int d = Shapes.HEAD_DIM;
        q = Inputs.gaussian(11, Shapes.HEADS * Shapes.PREFILL_TQ * d);
        k = Inputs.gaussian(12, Shapes.PREFILL_TQ * d);
        c = Inputs.gaussian(13, Shapes.PREFILL_TC * d);
        sinks = Inputs.sinks(14, Shapes.HEADS, Shapes.WINDOW + Shapes.PREFILL_TC);
    }

    @Benchmark
    public float[] naive() {
        return NaiveUnion.attend(q, 1, Shapes.HEADS, Shapes.PREFILL_TQ, Shapes.HEAD_DIM, k, Shapes.PREFILL_TQ, 0, c,
                Shapes.PREFILL_TC, sinks, Shapes.WINDOW, 4);
    }
}
