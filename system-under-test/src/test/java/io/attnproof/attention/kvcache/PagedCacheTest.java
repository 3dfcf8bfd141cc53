package io.attnproof.attention.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.tolerance.Diff;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** K1 (paged arm): K and V written from {@code k} and {@code k.copy()} gather back byte-identical; V = K is refused. */
@Claim("K1")
class PagedCacheTest {
    static final int BLOCK = 4;
    static final int D = 8;

    /** Two requests written in interleaved chunks, so their blocks are not contiguous. */
    record Written(PagedCache cache, BlockTable a, BlockTable b, Tensor kA, Tensor kB) {
    }

    static Written interleaved(long seed, DType dtype, boolean vFromCopy) {
        PagedCache cache = new PagedCache(BLOCK, 16, D, dtype);
        BlockTable a = cache.newTable();
        BlockTable b = cache.newTable();
        SplittableRandom ra = Streams.row(seed, 0);
        SplittableRandom rb = Streams.row(seed, 1);
        SplittableRandom other = Streams.named(seed, "distinct-v");
        List<Tensor> partsA = new ArrayList<>();
        List<Tensor> partsB = new ArrayList<>();
        int[][] chunks = {{3, 5}, {6, 2}, {2, 7}, {5, 1}};
        for (int[] chunk : chunks) {
            for (int r = 0; r < 2; r++) {
                BlockTable table = r == 0 ? a : b;
                Tensor k = KvRows.tokens(r == 0 ? ra : rb, 1, chunk[r], D, dtype);
                Tensor v = vFromCopy ? k.copy() : KvRows.tokens(other, 1, chunk[r], D, dtype);
                cache.reshapeAndCache(k, v, cache.appendSlots(table, chunk[r]));
                (r == 0 ? partsA : partsB).add(k);
            }
        }
        return new Written(cache, a, b, Tensor.cat(2, partsA.toArray(Tensor[]::new)),
                Tensor.cat(2, partsB.toArray(Tensor[]::new)));
    }

    /** Whether the table's blocks are not one contiguous run (another request's block sits between two of them). */
    static boolean hasGap(BlockTable t) {
        int[] x = t.blocks();
        for (int i = 1; i < x.length; i++) {
            if (x[i] != x[i - 1] + 1) {
                return true;
            }
        }
        return false;
    }

    @Test
    void gatherOfKAndACopyOfKIsByteIdentical(Evidence ev) {
        long seed = 0x4B31_0201L;
        ev.seed(seed);
        for (DType dtype : DType.values()) {
            Written w = interleaved(seed, dtype, true);
            ev.degeneracy("table_spans_several_blocks_" + dtype, w.a().blocks().length > 1 && w.b().blocks().length > 1,
                    w.a() + " " + w.b());
            ev.degeneracy("blocks_interleaved_" + dtype, hasGap(w.a()) && hasGap(w.b()), w.a() + " " + w.b());
            ev.degeneracy("partial_last_block_" + dtype, w.a().length() % BLOCK != 0 || w.b().length() % BLOCK != 0,
                    w.a() + " " + w.b());

            long bits = 0;
            long wrongK = 0;
            for (BlockTable table : new BlockTable[] {w.a(), w.b()}) {
                PagedCache.Gathered g = w.cache().gather(table, table.length());
                ev.degeneracy("gathered_v_is_its_own_handle_" + dtype, !g.k().id().equals(g.v().id()), g.toString());
                bits += Diff.bitsDiffering(g.k().toFloatArray(), g.v().toFloatArray());
                Tensor written = table == w.a() ? w.kA() : w.kB();
                wrongK += Diff.bitsDiffering(g.k().toFloatArray(), written.toFloatArray());
            }
            ev.checkBitIdentical("bits_differing_k_vs_v_" + dtype, bits);
            ev.checkBitIdentical("bits_differing_gathered_k_vs_written_" + dtype, wrongK);

            // A prefix gather reads the same slots.
            PagedCache.Gathered part = w.cache().gather(w.a(), 5);
            ev.checkBitIdentical("bits_prefix_gather_" + dtype, Diff.bitsDiffering(part.k().toFloatArray(),
                    w.kA().narrow(2, 0, 5).toFloatArray()));

            // Control: V written from an independent tensor gathers back different.
            Written control = interleaved(seed, dtype, false);
            PagedCache.Gathered g = control.cache().gather(control.a(), control.a().length());
            ev.controlAtLeast("bits_differing_with_distinct_v_" + dtype,
                    Diff.bitsDiffering(g.k().toFloatArray(), g.v().toFloatArray()), 1);
        }
    }

    @Test
    void vPassedAsKsOwnHandleIsRefusedNamingTheDeadlockAndNothingIsWritten(Evidence ev) {
        long seed = 0x4B31_0202L;
        ev.seed(seed);
        Written w = interleaved(seed, DType.BF16, true);
        PagedCache.Gathered before = w.cache().gather(w.a(), w.a().length());
        int[] slots = new int[] {w.a().slot(0), w.a().slot(1), w.a().slot(2)};
        Tensor k = KvRows.tokens(Streams.named(seed, "overwrite"), 1, 3, D, DType.BF16);
        ev.degeneracy("overwrite_differs_from_stored", Diff.bitsDiffering(k.toFloatArray(),
                before.k().narrow(2, 0, 3).toFloatArray()) > 0, "the refused write would be invisible");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> w.cache().reshapeAndCache(k, k, slots));
        assertEquals("v = " + k + ": must not be k's own handle: reshape_and_cache writes the K and V pools under one"
                + " lock while reading k and v, and writing and reading the same storage under that lock"
                + " self-deadlocks upstream; pass v = k.copy()", e.getMessage());
        ev.check("refusal_missing_deadlock_or_remedy",
                e.getMessage().contains("deadlock") && e.getMessage().contains("v = k.copy()") ? 0 : 1, 0, null);
        PagedCache.Gathered after = w.cache().gather(w.a(), w.a().length());
        ev.checkBitIdentical("bits_changed_by_refused_write_k",
                Diff.bitsDiffering(before.k().toFloatArray(), after.k().toFloatArray()));
        ev.checkBitIdentical("bits_changed_by_refused_write_v",
                Diff.bitsDiffering(before.v().toFloatArray(), after.v().toFloatArray()));

        // Control: the remedy v = k.copy() is accepted and lands.
        w.cache().reshapeAndCache(k, k.copy(), slots);
        PagedCache.Gathered fixed = w.cache().gather(w.a(), 3);
        ev.checkBitIdentical("bits_remedy_k_vs_v", Diff.bitsDiffering(fixed.k().toFloatArray(), fixed.v().toFloatArray()));
        ev.controlAtLeast("bits_changed_by_accepted_copy",
                Diff.bitsDiffering(before.k().narrow(2, 0, 3).toFloatArray(), fixed.k().toFloatArray()), 1);
        assertTrue(w.cache().supportsPerSequenceAdvance(), "a block table per request carries its own length");
    }
}
