package io.attnproof.attention.kvcache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.tolerance.Diff;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** K1 (capability): XsRolling cannot carry a per-row length, and says so; the other caches can. */
class XsRollingTest {
    static final String WHY = "XsRolling overwrites its oldest position once the window is full and keeps one length"
            + " for the whole batch, so it cannot carry a per-row length";

    static XsRolling filled(long seed) {
        XsRolling xs = XsRolling.create(2, 4, 3, DType.F32, Device.CPU);
        Tensor k = KvRows.tokens(Streams.row(seed, 0), 2, 6, 3, DType.F32);
        xs.append(k, k);
        return xs;
    }

    @Test
    @Claim("K1")
    void perRowRequestsOnXsRollingAreRefusedNamingTheCheckAndWhy(Evidence ev) {
        long seed = 0x4B31_0301L;
        ev.seed(seed);
        XsRolling xs = filled(seed);
        ev.degeneracy("window_overflowed", xs.currentSeqLen() > xs.window(), xs.toString());
        float[] before = xs.k().toFloatArray();
        String head = "cache_supports_per_sequence_advance = false for XsRolling(window 4, batch 2, D 3, F32): must hold for ";
        List<Object[]> calls = List.of(
                new Object[] {"row(1)", (Executable) () -> xs.row(1)},
                new Object[] {"setRowLens([3, 5])", (Executable) () -> xs.setRowLens(new int[] {3, 5})},
                new Object[] {"a per-sequence KV advance", (Executable) () -> CacheOps.requirePerSequenceAdvance(xs)});
        long missing = 0;
        for (Object[] call : calls) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, (Executable) call[1]);
            assertEquals(head + call[0] + ": " + WHY, e.getMessage());
            missing += e.getMessage().contains("cache_supports_per_sequence_advance") && e.getMessage().contains("XsRolling")
                    ? 0 : 1;
        }
        ev.check("refusals_not_naming_check_and_xsrolling", missing, 0, null);
        ev.checkBitIdentical("bits_changed_by_refusals", Diff.bitsDiffering(before, xs.k().toFloatArray()));
        ev.check("xs_rolling_supports_per_sequence_advance", xs.supportsPerSequenceAdvance() ? 1 : 0, 0, null);

        // Control: the same request on each cache that carries per-row lengths passes.
        List<KvCache> capable = List.of(SingleCache.create(2, 8, 3, DType.F32),
                NormalCache.create(NormalCache.V4_LAYERS, 2, 8, 3, DType.F32, Device.CPU),
                new PagedCache(4, 4, 3, DType.F32));
        long passed = 0;
        for (KvCache c : capable) {
            CacheOps.requirePerSequenceAdvance(c);
            passed += c.supportsPerSequenceAdvance() ? 1 : 0;
        }
        ev.controlAtLeast("capable_caches_passing", passed, capable.size());
    }

    @Test
    void theWindowRollsOverTheOldestAndKeepsStreamOrder() {
        XsRolling xs = XsRolling.create(1, 3, 1, DType.F32, Device.CPU);
        Tensor a = Tensor.of(new float[] {1, 2}, DType.F32, Device.CPU, 1, 1, 2, 1);
        Tensor b = Tensor.of(new float[] {3, 4, 5}, DType.F32, Device.CPU, 1, 1, 3, 1);
        xs.append(a, a);
        assertArrayEquals(new float[] {1, 2}, xs.k().toFloatArray());
        xs.append(b, b);
        assertEquals(5, xs.currentSeqLen());
        assertEquals(3, xs.live());
        assertArrayEquals(new float[] {3, 4, 5}, xs.k().toFloatArray(), "the two oldest were overwritten");
        assertSame(xs.k(), xs.v(), "V passed as K's handle stays K's handle");
        Tensor c = Tensor.of(new float[] {6, 7, 8, 9}, DType.F32, Device.CPU, 1, 1, 4, 1);
        xs.append(c, c.copy());
        assertFalse(xs.vAliasesK());
        assertArrayEquals(new float[] {7, 8, 9}, xs.k().toFloatArray(), "more than a window: the last window kept");
        assertArrayEquals(new float[] {7, 8, 9}, xs.v().toFloatArray());
        assertTrue(xs.describe().startsWith("XsRolling("));
    }
}
