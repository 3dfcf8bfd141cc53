package io.attnproof.attention.engine;

import static io.attnproof.attention.engine.VectorLanesRemainderTest.bitsDiffering;
import static io.attnproof.attention.engine.VectorLanesRemainderTest.denseCall;
import static io.attnproof.attention.engine.VectorLanesRemainderTest.drainScratch;
import static io.attnproof.attention.engine.VectorLanesRemainderTest.fresh;
import static io.attnproof.attention.engine.VectorLanesRemainderTest.gaussian;
import static io.attnproof.attention.engine.VectorLanesRemainderTest.worstAgainstReference;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.dispatch.DispatchRegistry;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Split-K decode ({@link SplitKDecode}, docs/system.md §8) on hand-built single-query calls: which calls it applies to
 * (the fused kernels' form on the kv length; the union form on the longest row of any batch entry or head), a call
 * mixing a split row with a short one (the short row is the engine's, bit for bit; only the long row is split), a
 * combine whose chunk maxima lie far apart and far above the sink (the max must be taken over every chunk, or the
 * rescaling overflows), and a split row with nothing to weigh (zeros). Buffers start empty (the pools are drained).
 */
class SplitKDecodeContractTest {
    private static final int N = 1100; // > SPLIT_K_MIN_KEYS: 5 chunks of 256

    /** A per-head or per-batch mask admitting, in row i, the columns {@code [0, admitted[i])}. */
    private static Tensor prefixMask(int mb, int mh, int... admitted) {
        float[] m = new float[mb * mh * N];
        Arrays.fill(m, Float.NEGATIVE_INFINITY);
        for (int row = 0; row < admitted.length; row++) {
            Arrays.fill(m, row * N, row * N + admitted[row], 0f);
        }
        return Tensor.of(m, DType.F32, Device.CPU, mb, mh, 1, N);
    }

    private static UnionCall call(long seed, int batch, int heads, int d, Tensor mask) {
        SplittableRandom rng = new SplittableRandom(seed);
        float[] sink = new float[heads];
        for (int h = 0; h < heads; h++) {
            sink[h] = (float) (rng.nextGaussian() + 3);
        }
        return denseCall(gaussian(rng, batch * heads * d, 1.5), gaussian(rng, batch * N * d, 1.5),
                gaussian(rng, batch * N * d, 1.0), batch, heads, 1, N, d, mask, sink);
    }

    @Test
    void itAppliesWhereSomeRowIsLongEnough() {
        assertTrue(DispatchRegistry.SPLIT_K_MIN_KEYS <= N && N < 2 * DispatchRegistry.SPLIT_K_MIN_KEYS);
        // The union form decides on each row's admitted keys: head 1 of 2 admits all 1100.
        assertTrue(SplitKDecode.applies(call(1, 1, 2, 8, prefixMask(1, 2, 100, N))));
        // No row reaches 1024 (per head, and per batch entry): no split, every row and entry looked at once.
        assertFalse(SplitKDecode.applies(call(2, 1, 2, 8, prefixMask(1, 2, 100, 1023))));
        assertFalse(SplitKDecode.applies(call(3, 2, 3, 8, prefixMask(2, 1, 1023, 1000))));
        assertTrue(SplitKDecode.applies(call(4, 2, 3, 8, prefixMask(2, 1, 1000, 1024))));
        // The fused kernels' form decides on the kv length alone: a window of 500 over 1300 keys still splits.
        float[] q = new float[4 * 32];
        float[] kv = new float[2 * 1300 * 32];
        MemorySegment qs = MemorySegment.ofArray(q);
        MemorySegment ks = MemorySegment.ofArray(kv);
        assertTrue(SplitKDecode.applies(SinksLanes.fusedCall(qs, ks, ks, 1, 4, 2, 1, 1300, 32, new float[4], 500)));
        assertFalse(SplitKDecode.applies(SinksLanes.fusedCall(qs, ks, ks, 1, 4, 2, 1, 1000, 32, new float[4], 0)));
    }

    @Test
    void aShortRowBesideALongOneIsTheEnginesRowBitForBit() {
        // Head 0 admits all 1100 keys (split into 5 chunks), head 1 the first 100 (not split).
        UnionCall c = call(5, 1, 2, 16, prefixMask(1, 2, N, 100));
        drainScratch();
        UnionCall split = fresh(c);
        assertEquals(1, SplitKDecode.run(split), "rows that took split-K");
        float[] engine = VectorLanesRemainderTest.scalar(c);
        float[] headOne = Arrays.copyOfRange(split.out(), c.outOffset(0, 1, 0), c.outOffset(0, 1, 0) + 16);
        float[] engineHeadOne = Arrays.copyOfRange(engine, c.outOffset(0, 1, 0), c.outOffset(0, 1, 0) + 16);
        assertEquals(0, bitsDiffering(engineHeadOne, headOne), "the short row: split-K call vs the engine");
        assertTrue(Math.abs(headOne[0]) > 0, "a non-trivial short row");
        double worst = worstAgainstReference(c, split.out());
        assertTrue(worst < 2e-5, "max |f32 - fp64| = " + worst);
    }

    @Test
    void theCombineTakesTheMaxOverEveryChunk() {
        // One head, 1024 keys (4 chunks), D = 4, q = e_0, so score_j = k_j[0] * 0.5 exactly. Chunk 0 scores near
        // -60, chunks 1..3 near +60, the sink -100: m must be chunk 3's max; a max over chunk 0 alone (or the sink)
        // would rescale by e^120 (or e^160), outside f32.
        int n = 1024;
        int d = 4;
        float[] q = {1f, 0f, 0f, 0f};
        float[] k = new float[n * d];
        SplittableRandom rng = new SplittableRandom(6);
        float[] v = gaussian(rng, n * d, 1.0);
        for (int j = 0; j < n; j++) {
            float score = (j < 256 ? -60f : 60f) + 0.125f * (j % 7);
            k[j * d] = 2 * score;
        }
        float[] m = new float[n];
        UnionCall c = denseCall(q, k, v, 1, 1, 1, n, d, Tensor.of(m, DType.F32, Device.CPU, 1, 1, 1, n),
                new float[] {-100f});
        drainScratch();
        UnionCall split = fresh(c);
        assertEquals(1, SplitKDecode.run(split));
        double worst = worstAgainstReference(c, split.out());
        assertTrue(worst < 2e-5, "max |f32 - fp64| = " + worst + " " + Arrays.toString(split.out()));
    }

    @Test
    void aSplitRowWithNothingToWeighIsZeros() {
        // No sink and every key scores -inf (a -inf element against q's positive element 0): m stays -inf.
        int d = 8;
        float[] q = new float[d];
        Arrays.fill(q, 1f);
        float[] k = new float[N * d];
        Arrays.fill(k, 1f);
        for (int j = 0; j < N; j++) {
            k[j * d] = Float.NEGATIVE_INFINITY;
        }
        float[] v = gaussian(new SplittableRandom(7), N * d, 1.0);
        UnionCall c = denseCall(q, k, v, 1, 1, 1, N, d, prefixMask(1, 1, N), new float[] {Float.NEGATIVE_INFINITY});
        drainScratch();
        UnionCall split = fresh(c);
        assertEquals(1, SplitKDecode.run(split));
        for (int e = 0; e < d; e++) {
            assertEquals(0, Float.floatToIntBits(split.out()[e]), "out[" + e + "] = " + split.out()[e]);
        }
    }
}
