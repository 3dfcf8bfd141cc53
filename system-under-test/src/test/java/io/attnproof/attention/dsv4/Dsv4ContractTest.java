package io.attnproof.attention.dsv4;


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
 * The small contracts of the dsv4 package, each pinned by exact values worked by hand: the V4 ratio schedule at every
 * boundary, the config's refusals, value semantics and text, the refusals of {@code dsv4_attention} that the claim
 * tests never reach, the admission sources' shape rules, head mapping and per-head flags, the call's work estimate,
 * the engine choice by size, the scratch helpers, the engines' names and the empty calls.
 */
class Dsv4ContractTest {
    private static final Dsv4Config CSA = Dsv4Config.of(CompressRatio.CSA, 8, 0);

    private static Tensor t(int... shape) {
        return Tensor.zeros(DType.F32, Device.CPU, shape);
    }

    private static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    // ---- CompressRatio ------------------------------------------------------------------------------------------

    @Test
    void theV4ScheduleAtEveryBoundary() {
        // docs/system.md §2: ratio 0 at layers 0, 1 and the MTP block 43; 4 at even 2..42; 128 at odd 3..41.
        assertEquals(CompressRatio.STANDARD, CompressRatio.forV4Layer(0));
        assertEquals(CompressRatio.STANDARD, CompressRatio.forV4Layer(1));
        assertEquals(CompressRatio.CSA, CompressRatio.forV4Layer(2));
        assertEquals(CompressRatio.HCA, CompressRatio.forV4Layer(3));
        assertEquals(CompressRatio.HCA, CompressRatio.forV4Layer(41));
        assertEquals(CompressRatio.CSA, CompressRatio.forV4Layer(42));
        assertEquals(CompressRatio.STANDARD, CompressRatio.forV4Layer(43));
        refused("layer = -1: must lie in [0, 44)", () -> CompressRatio.forV4Layer(-1));
        refused("layer = 44: must lie in [0, 44)", () -> CompressRatio.forV4Layer(44));
        assertEquals(4, CompressRatio.CSA.value());
        assertEquals(128, CompressRatio.HCA.value());
        assertEquals(0, CompressRatio.STANDARD.value());
    }

    // ---- Dsv4Config ----------------------------------------------------------------------------------------------

    @Test
    void configRefusalsNameParameterValueAndRule() {
        // Position 0 is a position (the boundary just inside); -1 is not.
        assertArrayEquals(new long[] {0, 5}, CSA.withGraphPositions(0, 5).graphPositions());
        refused("graphPositions = [3, -1]: must hold positions >= 0", () -> CSA.withGraphPositions(3, -1));
        refused("rowQ0 = [3, 4]: must be absent in graph decode: its columns are device slots, not a left-aligned"
                + " cohort", () -> CSA.withRowQ0(3, 4).withGraphPositions(5, 6));
        assertEquals(1, Dsv4Config.of(CompressRatio.HCA, 1, 0).slidingWindow());
        refused("slidingWindow = 0: must be >= 1", () -> Dsv4Config.of(CompressRatio.HCA, 0, 0));
    }

    @Test
    void configEqualityIsOverEveryFieldBothWays() {
        Dsv4Config a = new Dsv4Config(CompressRatio.CSA, 8, 2, new long[] {1, 2}, null);
        Dsv4Config same = new Dsv4Config(CompressRatio.CSA, 8, 2, new long[] {1, 2}, null);
        assertEquals(a, same);
        assertEquals(same, a);
        assertEquals(a.hashCode(), same.hashCode());
        Dsv4Config[] others = {
            new Dsv4Config(CompressRatio.HCA, 8, 2, new long[] {1, 2}, null),
            new Dsv4Config(CompressRatio.CSA, 9, 2, new long[] {1, 2}, null),
            new Dsv4Config(CompressRatio.CSA, 8, 3, new long[] {1, 2}, null),
            new Dsv4Config(CompressRatio.CSA, 8, 2, new long[] {1, 3}, null),
            new Dsv4Config(CompressRatio.CSA, 8, 2, null, null),
        };
        for (Dsv4Config o : others) {
            assertNotEquals(a, o, o.toString());
            assertNotEquals(o, a, o.toString());
        }
        Dsv4Config g = CSA.withGraphPositions(4, 7);
        assertEquals(g, CSA.withGraphPositions(4, 7));
        assertNotEquals(g, CSA.withGraphPositions(4, 8));
        assertNotEquals(CSA.withGraphPositions(4, 8), g);
        assertNotEquals(g, CSA);
        assertNotEquals(CSA, g);
        assertFalse(a.equals(null));
        assertFalse(a.equals("Dsv4Config"));
    }

    @Test
    void configTextShowsOnlyTheFieldsPresent() {
        assertEquals("Dsv4Config[STANDARD, W=128, rawPrefix=0]", Dsv4Config.of(CompressRatio.STANDARD, 128, 0).toString());
        assertEquals("Dsv4Config[CSA, W=8, rawPrefix=2, rowQ0=[1, 2]]",
                new Dsv4Config(CompressRatio.CSA, 8, 2, new long[] {1, 2}, null).toString());
        assertEquals("Dsv4Config[HCA, W=16, rawPrefix=0, graphPositions=[5, 7]]",
                Dsv4Config.of(CompressRatio.HCA, 16, 0).withGraphPositions(5, 7).toString());
    }

    // ---- UnionGeometry, Dsv4Attention ----------------------------------------------------------------------------

    @Test
    void geometryTakesAWindowOfOneAndRefusesZero() {
        // keep = min(t_q + W - 1, t_k_full) = min(1, 4) = 1, base = 4 - 1 = 3, q0 = 4 - 1 = 3.
        assertEquals(new UnionGeometry(4, 3, 3, 1, 0), UnionGeometry.of(1, 4, 0, 1, 0));
        refused("slidingWindow = 0: must be >= 1", () -> UnionGeometry.of(1, 4, 0, 0, 0));
    }

    @Test
    void sdpaWindowOnStandardLayersOnlyAndRefusesZero() {
        assertEquals(OptionalInt.of(1), Dsv4Attention.sdpaSlidingWindow(CompressRatio.STANDARD, 1));
        assertEquals(OptionalInt.empty(), Dsv4Attention.sdpaSlidingWindow(CompressRatio.CSA, 1));
        assertEquals(OptionalInt.empty(), Dsv4Attention.sdpaSlidingWindow(CompressRatio.HCA, 128));
        refused("slidingWindow = 0: must be >= 1", () -> Dsv4Attention.sdpaSlidingWindow(CompressRatio.STANDARD, 0));
    }

    @Test
    void attentionRefusesNoHeadsNoHeadDimAndAForeignCompressedDtype() {
        refused("q.shape[1] (heads) = 0: must be >= 1",
                () -> Dsv4Attention.attention(t(1, 0, 3, 4), t(1, 1, 10, 4), t(1, 1, 10, 4), null, null, null, CSA));
        refused("q.shape[3] (head dim) = 0: must be >= 1",
                () -> Dsv4Attention.attention(t(1, 2, 3, 0), t(1, 1, 10, 0), t(1, 1, 10, 0), null, null, null, CSA));
        Tensor f16 = Tensor.zeros(DType.F16, Device.CPU, 1, 1, 2, 4);
        refused("compressed_kv = " + f16 + ": must share q's dtype F32 and device cpu",
                () -> Dsv4Attention.attention(t(1, 2, 3, 4), t(1, 1, 10, 4), t(1, 1, 10, 4), f16, null, null, CSA));
    }

    // ---- FusedVStats ---------------------------------------------------------------------------------------------

    @Test
    void statsCountEachSiteUnderItsKind() {
        FusedVStats stats = new FusedVStats();
        stats.count(true);
        stats.count(true);
        stats.count(false);
        assertEquals(2, stats.aliased());
        assertEquals(1, stats.materialized());
        assertEquals(new FusedVStats.Snapshot(2, 1), stats.snapshot());
        stats.reset();
        assertEquals(0, stats.aliased());
        assertEquals(0, stats.materialized());
    }

}
