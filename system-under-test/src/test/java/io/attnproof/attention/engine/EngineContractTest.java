package io.attnproof.attention.engine;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import io.attnproof.attention.mask.UnionMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.OptionalInt;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The small contracts of the CPU engines, each pinned by exact values worked by hand: the admission sources' shape
 * rules, head mapping and per-head flags, the call's work estimate, the engine choice by size, the scratch helpers,
 * the engines' names and the empty calls.
 */
class EngineContractTest {

    private static Tensor t(int... shape) {
        return Tensor.zeros(DType.F32, Device.CPU, shape);
    }

    private static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    // ---- Admission -----------------------------------------------------------------------------------------------

    @Test
    void aDenseMaskTakesOneOrFullOnEachAxisAndTheExactColumns() {
        assertFalse(Admission.dense(t(1, 1, 1, 5), 2, 3, 4, 5).perHead());
        assertFalse(Admission.dense(t(2, 1, 4, 5), 2, 3, 4, 5).perHead());
        assertTrue(Admission.dense(t(2, 3, 4, 5), 2, 3, 4, 5).perHead());
        String rule = ": must be [B|1, H|1, t_q|1, n] = [2|1, 3|1, 4|1, 5]";
        refused("mask.shape = [1, 4, 5]" + rule, () -> Admission.dense(t(1, 4, 5), 2, 3, 4, 5));
        refused("mask.shape = [3, 1, 4, 5]" + rule, () -> Admission.dense(t(3, 1, 4, 5), 2, 3, 4, 5));
        refused("mask.shape = [1, 2, 4, 5]" + rule, () -> Admission.dense(t(1, 2, 4, 5), 2, 3, 4, 5));
        refused("mask.shape = [1, 1, 3, 5]" + rule, () -> Admission.dense(t(1, 1, 3, 5), 2, 3, 4, 5));
        refused("mask.shape = [1, 1, 4, 6]" + rule, () -> Admission.dense(t(1, 1, 4, 6), 2, 3, 4, 5));
        refused("mask.shape = [1, 1, 4, 5, 1]" + rule, () -> Admission.dense(t(1, 1, 4, 5, 1), 2, 3, 4, 5));
    }

    @Test
    void onlyAMaskWithAHeadAxisMakesHeadsTheirOwnRows() {
        assertFalse(Admission.rule(new UnionMask(4, 2, 0, 6, 8, 1, 4)).perHead());
        assertFalse(Admission.causal(2, 6, 0).perHead());
        assertFalse(Admission.dense(t(1, 1, 2, 5), 1, 1, 2, 5).perHead());
        assertFalse(Admission.gqaMask(MemorySegment.ofArray(new float[10]), 1, 1, 2, 5, 2, 2, null).perHead());
        assertTrue(Admission.gqaMask(MemorySegment.ofArray(new float[20]), 1, 4, 1, 5, 2, 2, null).perHead());
    }

    @Test
    void aGqaMaskRowIsTheMaskRowOfItsQueryHead() {
        // mask [1, 4, 1, 3]: query head qh admits column qh % 3 only, with bias qh + 1. Two KV heads of two query
        // heads each: batch entry b' = kvh, row j is query head kvh * 2 + j.
        float[] m = new float[4 * 3];
        Arrays.fill(m, Float.NEGATIVE_INFINITY);
        for (int qh = 0; qh < 4; qh++) {
            m[qh * 3 + qh % 3] = qh + 1;
        }
        Admission a = Admission.gqaMask(MemorySegment.ofArray(m), 1, 4, 1, 3, 2, 2, null);
        Admission.Row row = new Admission.Row();
        for (int kvh = 0; kvh < 2; kvh++) {
            for (int j = 0; j < 2; j++) {
                int qh = kvh * 2 + j;
                a.fill(kvh, j, 0, row);
                assertEquals(1, row.count, "query head " + qh);
                assertEquals(qh % 3, row.cols[0], "query head " + qh);
                assertEquals(qh + 1f, row.bias[0], "query head " + qh);
                assertTrue(row.biased);
            }
        }
    }

    @Test
    void aRowKeepsItsBuffersWhileTheyHoldTheCapacityPlusTheVectorSlack() {
        Admission.Row row = new Admission.Row();
        row.reset(10);
        int[] cols = row.cols;
        assertEquals(10 + 64, cols.length);
        row.addRun(3, 6);
        assertEquals(3, row.count);
        row.reset(10);
        assertSame(cols, row.cols, "a capacity the buffers already hold (74 = 10 + 64) keeps them");
        assertEquals(0, row.count);
        row.reset(11);
        assertEquals(11 + 64, row.cols.length);
    }

    // ---- UnionCall, UnionLanes ------------------------------------------------------------------------------------

    private static UnionCall call(int batch, int heads, int tq, int columns, int d) {
        UnionRows rows = UnionRows.of(new UnionRows.Span(MemorySegment.ofArray(new float[0]), columns, 0, columns, d),
                null);
        return new UnionCall(MemorySegment.ofArray(new float[0]), batch, heads, tq, d, 1f, rows, rows,
                Admission.causal(tq, columns, 0), new float[heads], new float[0]);
    }

    @Test
    void macsCountScoresAndPvOfEveryRowAgainstEveryColumn() {
        assertEquals(2L * 2 * 3 * 5 * 7 * 11, call(2, 3, 5, 7, 11).macs());
        assertEquals(4620L, call(2, 3, 5, 7, 11).macs());
    }

    @Test
    void smallCallsTakeTheScalarEngineAndLargeOnesTheDefault() {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("attnproof.cpu.lanes") == null,
                "the engine is forced by -Dattnproof.cpu.lanes");
        UnionCall small = call(2, 3, 5, 7, 11); // 4620 multiply-adds
        UnionCall large = call(1, 64, 1, 1024, 512); // 2^26
        assertSame(ScalarLanes.INSTANCE, UnionLanes.forCall(small));
        assertSame(UnionLanes.engine(), UnionLanes.forCall(large));
        assertTrue(UnionLanes.forCall(large) instanceof VectorLanes);
        assertTrue(UnionLanes.smallCall(UnionLanes.VECTOR_MIN_MACS - 1));
        assertFalse(UnionLanes.smallCall(UnionLanes.VECTOR_MIN_MACS));
        assertFalse(UnionLanes.parallel(UnionLanes.PARALLEL_MIN_MACS - 1));
        assertTrue(UnionLanes.parallel(UnionLanes.PARALLEL_MIN_MACS));
    }

    @Test
    void aParallelCallCountsTheCommonPoolAndTheCaller() {
        org.junit.jupiter.api.Assumptions.assumeFalse(UnionLanes.SINGLE_THREAD, "-Dattnproof.cpu.threads=1");
        assertEquals(ForkJoinPool.getCommonPoolParallelism() + 1, UnionLanes.threads());
    }

    @Test
    void aPoolLendsWhatWasGivenBackAndMakesOneWhenEmpty() {
        UnionLanes.Pool<Object> pool = new UnionLanes.Pool<>(Object::new);
        Object first = pool.take();
        assertNotNull(first);
        pool.give(first);
        assertSame(first, pool.take());
        Object second = pool.take();
        assertNotNull(second);
        assertNotSame(first, second);
    }

    @Test
    void theEnginesNameThemselves() {
        assertEquals("scalar f32", ScalarLanes.INSTANCE.describe());
        String vector = UnionLanes.vector().describe();
        assertTrue(vector.startsWith("Vector API Species[float, "), vector);
        assertTrue(vector.contains(", S_"), vector);
    }

    // ---- empty calls ---------------------------------------------------------------------------------------------

    @Test
    void anEmptyCallReturnsAnEmptyOutput() {
        // t_q = 0: nothing to compute, an empty array (not null) on both the union kernel and sinks attention.
        float[] union = UnionKernel.repeatKv(t(1, 2, 0, 4), t(1, 1, 3, 4), t(1, 1, 3, 4), t(1, 1, 1, 3), null);
        assertArrayEquals(new float[0], union);
        MemorySegment none = MemorySegment.ofArray(new float[0]);
        MemorySegment kv = MemorySegment.ofArray(new float[3 * 4]);
        assertArrayEquals(new float[0], SinksLanes.fused(none, kv, kv, 1, 2, 1, 0, 3, 4, new float[2], 0));
    }

    @Test
    void theAbsorbedReferenceFormIsTheRepeatKvOneBitForBit() {
        // Decode (t_q = 1), 3 heads, 5 keys, D = 4, a mask removing key 1 and biasing key 3; small integers so the
        // result is well away from any tie.
        float[] qv = new float[3 * 4];
        float[] kv = new float[5 * 4];
        float[] vv = new float[5 * 4];
        for (int i = 0; i < qv.length; i++) {
            qv[i] = (i % 5) - 2;
        }
        for (int i = 0; i < kv.length; i++) {
            kv[i] = (i % 7) - 3;
            vv[i] = (i % 3) + 0.5f;
        }
        Tensor q = Tensor.of(qv, DType.F32, Device.CPU, 1, 3, 1, 4);
        Tensor k = Tensor.of(kv, DType.F32, Device.CPU, 1, 1, 5, 4);
        Tensor v = Tensor.of(vv, DType.F32, Device.CPU, 1, 1, 5, 4);
        Tensor mask = Tensor.of(new float[] {0, Float.NEGATIVE_INFINITY, 0, 0.5f, 0}, DType.F32, Device.CPU,
                1, 1, 1, 5);
        float[] sink = {0.25f, -1f, 2f};
        float[] absorbed = UnionKernel.absorbedMqa(q, k, v, mask, sink);
        float[] repeat = UnionKernel.repeatKv(q, k, v, mask, sink);
        assertEquals(3 * 4, absorbed.length);
        assertArrayEquals(repeat, absorbed);
        assertTrue(Math.abs(absorbed[0]) > 0, "a non-trivial output");
    }
}
