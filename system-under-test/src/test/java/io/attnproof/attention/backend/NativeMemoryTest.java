package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.sinks.MaskNeverDroppedTest;
import io.attnproof.attention.sinks.SinksRun;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The unfused native path holds bounded memory: no device buffer of a call is longer than
 * {@link NativeSinks#SCORES_BOUND} score elements or its inputs and output, however large {@code B * H * t_q * t_k}
 * (the query rows run in chunks), and a chunked call gives the same bits as one pass. The prefill at
 * t_q = t_k = 8192, H = 8, D = 64 on both emulated lanes within a 1 GiB heap is
 * {@code mvn -B verify -Pnative-prefill} (minutes of emulated compute: not in the default build).
 */
class NativeMemoryTest {

    static Stream<NativeSinks.Dialect> dialects() {
        return Stream.of(NativeSinks.Dialect.CUDA, NativeSinks.Dialect.METAL);
    }

    @ParameterizedTest
    @MethodSource("dialects")
    void aPrefillAt8192NeverAllocatesTheWholeScoreMatrix(NativeSinks.Dialect dialect) {
        int t = 8192;
        int h = 8;
        int d = 64;
        // Sizes only: holding the launches would keep every chunk's buffers alive (gigabytes at this shape).
        BufferSizes r = new BufferSizes();
        Device dev = dialect == NativeSinks.Dialect.CUDA ? Device.cuda(0) : Device.metal(0);
        NativeSinks sinks = new NativeSinks("recorder", dev, dialect, r);
        Tensor q = Tensor.zeros(DType.F32, dev, 1, h, t, d);
        Tensor k = Tensor.zeros(DType.F32, dev, 1, 1, t, d);
        Tensor s = Tensor.zeros(DType.F32, dev, h);
        Tensor out = sinks.sinksAttnUnfused(q, k, k, s, null, 0);
        assertEquals(List.of(1, h, t, d), java.util.Arrays.stream(out.shape()).boxed().toList());
        long largest = r.largest;
        long scoreBuffers = r.scoreBuffers;
        assertTrue(r.largestScores <= NativeSinks.SCORES_BOUND, "a scores buffer of " + r.largestScores
                + " elements, over the bound " + NativeSinks.SCORES_BOUND);
        long whole = (long) h * t * t;
        assertTrue(whole > 100 * NativeSinks.SCORES_BOUND, "the call is far over the bound: " + whole);
        assertTrue(scoreBuffers > 1, "the call ran in chunks: " + scoreBuffers + " score buffers");
        assertTrue(largest <= Math.max(NativeSinks.SCORES_BOUND, (long) h * t * d), "largest buffer " + largest);
    }

    /** A runner that runs nothing and keeps, of each launch, the sizes of its buffers. */
    static final class BufferSizes implements KernelRunner {
        long largest;
        long largestScores;
        long scoreBuffers;

        @Override
        public String lane() {
            return "recorder";
        }

        @Override
        public int gridStrideBlocks() {
            return 2;
        }

        @Override
        public void run(List<KernelLaunch> launches) {
            for (KernelLaunch l : launches) {
                for (KernelArg a : l.args()) {
                    if (a instanceof KernelArg.Buffer(DeviceBuffer b)) {
                        largest = Math.max(largest, b.length());
                        if (b.name().equals("scores")) {
                            scoreBuffers++;
                            largestScores = Math.max(largestScores, b.length());
                        }
                    }
                }
            }
        }
    }

    static Stream<Backend> emulated() {
        return Stream.of(Backend.cudaEmu(), Backend.metalEmu());
    }

    @ParameterizedTest
    @MethodSource("emulated")
    void aChunkedCallGivesTheBitsOfOnePass(Backend lane) {
        Lanes.assumeAvailable(lane);
        NativeSinks.Dialect dialect = lane instanceof MetalEmu ? NativeSinks.Dialect.METAL : NativeSinks.Dialect.CUDA;
        NativeSinks sinks = new NativeSinks(lane.name(), lane.device(), dialect, NativeFaultsTest.runner(lane));
        SinksInputs in = SinksInputs.generate(9103, 2, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        float[] q = SinksRun.tensor(in.q(), DType.F32, lane.device()).toFloatArray();
        float[] k = SinksRun.tensor(in.k(), DType.F32, lane.device()).toFloatArray();
        float[] v = SinksRun.tensor(in.v(), DType.F32, lane.device()).toFloatArray();
        float[] s = new float[8];
        for (int i = 0; i < 8; i++) {
            s[i] = (float) in.sinks()[i];
        }
        Tensor mask = SinksRun.tensor(MaskNeverDroppedTest.documentMask(2), DType.F32, lane.device());
        for (boolean causal : new boolean[] {true, false}) {
            float[] one = sinks.unfused(2, 8, 2, 24, 40, 64, q, k, v, s, mask, causal, 16, Long.MAX_VALUE);
            // 2 * 8 * 40 = 640 score elements per query row: chunks of 7 rows (the last one of 3).
            for (long bound : new long[] {4480}) {
                float[] chunked = sinks.unfused(2, 8, 2, 24, 40, 64, q, k, v, s, mask, causal, 16, bound);
                assertEquals(0, Diff.bitsDiffering(one, chunked), lane + " causal " + causal + " bound " + bound);
            }
            long nonZero = 0;
            for (float x : one) {
                nonZero += x != 0f ? 1 : 0;
            }
            assertTrue(nonZero > one.length / 2, "the call computed something: " + nonZero);
        }
    }

    @ParameterizedTest
    @MethodSource("emulated")
    @EnabledIfSystemProperty(named = "attnproof.prefill8192", matches = "true")
    void aPrefillAt8192RunsWithinTheHeap(Backend lane) {
        int t = 8192;
        int h = 8;
        int d = 64;
        long maxHeap = Runtime.getRuntime().maxMemory();
        assertTrue(maxHeap <= (1L << 30), "run with -Xmx1g (the native-prefill profile does): max heap " + maxHeap);
        SinksInputs in = SinksInputs.generate(8192, 1, h, 1, 64, 64, d, Precision.F32, 1.0);
        float[] q = new float[h * t * d];
        float[] k = new float[t * d];
        java.util.SplittableRandom rng = new java.util.SplittableRandom(8192);
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) rng.nextGaussian();
        }
        for (int i = 0; i < k.length; i++) {
            k[i] = (float) rng.nextGaussian();
        }
        Tensor qt = Tensor.of(q, DType.F32, lane.device(), 1, h, t, d);
        Tensor kt = Tensor.of(k, DType.F32, lane.device(), 1, 1, t, d);
        Tensor sinks = SinksRun.sinks(in.sinks(), lane.device());
        long start = System.nanoTime();
        Tensor out = lane.sinksAttnUnfused(qt, kt, kt, sinks, null, 0);
        double seconds = (System.nanoTime() - start) / 1e9;
        float[] o = out.toFloatArray();
        long finite = 0;
        for (float x : o) {
            finite += Float.isFinite(x) ? 1 : 0;
        }
        assertEquals(o.length, finite, "every output element finite");
        System.out.printf(java.util.Locale.ROOT, "prefill 8192 on %s: %.1f s, max heap %d MiB, used %d MiB%n",
                lane.name(), seconds, maxHeap >> 20,
                (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) >> 20);
    }
}
