package io.attnproof.bench;

import java.util.concurrent.TimeUnit;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * This machine's FP32 FMA peak as Java reaches it: 12 independent chains of Vector API FMAs on the preferred species
 * (enough to cover the FMA latency on every current x86 and ARM core), {@link #STEPS} steps an operation; one thread
 * (a core) and {@code threads = cores} (the machine). 1 fork, 3 warmup + 5 measured iterations of 1 s.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FmaPeakBench {
    static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    public static final int STEPS = 1 << 16;
    public static final int CHAINS = 12;

    float a = 0.999f;
    float b = 1e-3f;

    /** Flops of one operation: chains x steps x lanes x 2. */
    public static double flops() {
        return 2.0 * CHAINS * STEPS * SP.length();
    }

    static float chains(float x, float y) {
        FloatVector m = FloatVector.broadcast(SP, x);
        FloatVector add = FloatVector.broadcast(SP, y);
        FloatVector c0 = m, c1 = m, c2 = m, c3 = m, c4 = m, c5 = m, c6 = m, c7 = m, c8 = m, c9 = m, c10 = m, c11 = m;
        for (int i = 0; i < STEPS; i++) {
            c0 = c0.fma(m, add);
            c1 = c1.fma(m, add);
            c2 = c2.fma(m, add);
            c3 = c3.fma(m, add);
            c4 = c4.fma(m, add);
            c5 = c5.fma(m, add);
            c6 = c6.fma(m, add);
            c7 = c7.fma(m, add);
            c8 = c8.fma(m, add);
            c9 = c9.fma(m, add);
            c10 = c10.fma(m, add);
            c11 = c11.fma(m, add);
        }
        return c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7).add(c8).add(c9).add(c10).add(c11)
                .lane(0);
    }

    @Benchmark
    @Threads(1)
    public float oneThread() {
        return chains(a, b);
    }

    @Benchmark
    @Threads(Threads.MAX)
    public float allThreads() {
        return chains(a, b);
    }
}
