package io.attnproof.bench;

import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.mask.UnionMaskMemo;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * One 43-layer decode step of the V4 stack's attention: {@code dsv4_attention} per layer with the V4 ratio schedule,
 * called the way {@code V4Model.forward} calls it ({@code Dsv4Config.of(ratio, W, rawPrefix).withRowQ0(rowQ0)}, K
 * passed as V), at context 2048 ({@link Shapes}); the projections, compressor and cache of the model are not part of
 * it. Consecutive steps alternate between two positions (context 2048 and 2049, one more raw key passed as absent),
 * so that, as in a real decode, every step's masks are new to the memo. Three variants side by side: the memo as
 * shipped; without the memo (emptied before every layer, so every layer builds its mask); and the per-sequence flag
 * on (each row's own past length passed, all equal: a uniform batch).
 * 1 fork, 2 warmup + 10 measured iterations of 3 s (the flag's cost is a ratio near 1: more iterations, a tighter
 * interval).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-Xms4g", "-Xmx4g", "-Xmn128m"})
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 10, time = 3)
public class StepBench {
    @Param({"1", "128"})
    public int batch;

    Tensor q;
    Tensor k;
    Tensor csa;
    Tensor hca;
    Tensor[] sinks;
    CompressRatio[] ratios;
    long[][] rowQ0 = new long[2][];
    int rawPrefix;
    int step;

    @Setup
    public void setup() {
        int d = Shapes.HEAD_DIM;
        q = Inputs.tensor(21, batch, Shapes.HEADS, 1, d);
        k = Inputs.tensor(22, batch, 1, Shapes.RAW_KEYS, d);
        csa = Inputs.tensor(23, batch, 1, Shapes.stepBlocks(CompressRatio.CSA), d);
        hca = Inputs.tensor(24, batch, 1, Shapes.stepBlocks(CompressRatio.HCA), d);
        ratios = new CompressRatio[Shapes.STEP_LAYERS];
        sinks = new Tensor[Shapes.STEP_LAYERS];
        for (int layer = 0; layer < ratios.length; layer++) {
            ratios[layer] = CompressRatio.forV4Layer(layer);
            sinks[layer] = Inputs.sinkTensor(100 + layer, Shapes.HEADS,
                    Shapes.RAW_KEYS + Shapes.stepBlocks(ratios[layer]));
        }
        rawPrefix = Shapes.STEP_CONTEXT - Shapes.RAW_KEYS;
        for (int parity = 0; parity < 2; parity++) {
            rowQ0[parity] = new long[batch];
            Arrays.fill(rowQ0[parity], Shapes.STEP_CONTEXT - 1L + parity); // every row at the batch's position
        }
    }

    /** The step as {@code V4Model.forward} runs it, at the next position: per-row offsets passed or not (null). */
    public void step(Blackhole bh, boolean perSequenceFlag, boolean memo) {
        int parity = step++ & 1;
        long[] perRow = perSequenceFlag ? rowQ0[parity] : null;
        for (int layer = 0; layer < ratios.length; layer++) {
            CompressRatio ratio = ratios[layer];
            Tensor blocks = ratio == CompressRatio.CSA ? csa : ratio == CompressRatio.HCA ? hca : null;
            Dsv4Config cfg = Dsv4Config.of(ratio, Shapes.WINDOW, rawPrefix + parity).withRowQ0(perRow);
            if (!memo) {
                UnionMaskMemo.current().clear();
            }
            bh.consume(Dsv4Attention.attention(q, k, k, blocks, null, sinks[layer], cfg));
        }
    }

    @Benchmark
    public void memoOn(Blackhole bh) {
        step(bh, false, true);
    }

    @Benchmark
    public void memoOff(Blackhole bh) {
        step(bh, false, false);
    }

    @Benchmark
    public void flagOn(Blackhole bh) {
        step(bh, true, true);
    }
}
