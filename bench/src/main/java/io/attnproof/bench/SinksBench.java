package io.attnproof.bench;

import io.attnproof.attention.engine.FusedSinksKernel;
import io.attnproof.attention.sinks.SinksAttention;
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
 * The fused Java sinks kernel (the CUDA/Metal kernels' structure: tiles, online softmax, causality and window inside)
 * against the unfused path ({@code sinks_attn_cpu}: the causal/window rule built as a dense mask, scores, softmax,
 * PV) on a GPT-OSS-like sliding layer: B = 1, Hq = 64, Hkv = 8, D = 64, t_q = t_k = 512, window 128. 1 fork, 8 warmup
 * + 5 measured iterations of 1 s (with 3 warmups C2 had not finished: 1334, 48, 44 ms, then 12.9 down to 10.8 ms
 * measured, idle machine).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 8, time = 1)
@Measurement(iterations = 5, time = 1)
public class SinksBench {
    public static final int HQ = 64;
    public static final int HKV = 8;
    public static final int D = 64;
    public static final int T = 512;
    public static final int WINDOW = 128;

    Tensor q;
    Tensor k;
    Tensor v;
    Tensor sinks;

    @Setup
    public void setup() {
        q = Inputs.tensor(31, 1, HQ, T, D);
        k = Inputs.tensor(32, 1, HKV, T, D);
        v = Inputs.tensor(33, 1, HKV, T, D);
        sinks = Inputs.sinkTensor(34, HQ, WINDOW);
    }

    @Benchmark
    public Tensor fused() {
        return FusedSinksKernel.attend(q, k, v, sinks, null, WINDOW);
    }

    @Benchmark
    public Tensor unfused() {
        return SinksAttention.sinksAttnCpu(q, k, v, sinks, null, WINDOW);
    }

    /** Useful flops: each query row against its min(r + 1, window) keys, 4 D each. */
    public static double flops() {
        double pairs = 0;
        for (int r = 0; r < T; r++) {
            pairs += Math.min(r + 1, WINDOW);
        }
        return 4.0 * HQ * D * pairs;
    }
}
