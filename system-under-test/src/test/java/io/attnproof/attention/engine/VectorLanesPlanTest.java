package io.attnproof.attention.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The Vector API engine's layout decisions, each against the rule its Javadoc states. They change speed only (the
 * layouts give the same bits, {@code UnionLanesTest}), so no result can show a wrong one: a decision that drifted
 * from its rule would leave a core idle, a lane unused or a block packed twice, and only these checks see it.
 */
class VectorLanesPlanTest {

    @Test
    void packedVRowsGetOneCacheLineMoreExactlyWhenTheyAreAMultipleOf1KiB() {
        for (int d = 1; d <= 1100; d++) {
            int expected = d % 256 == 0 ? d + 16 : d;
            assertEquals(expected, VectorLanes.vStride(d), "vStride(" + d + ")");
        }
        // the cases the padding is for: D 256 and 512, rows of 1 and 2 KiB; D 64 keeps its rows packed
        assertEquals(528, VectorLanes.vStride(512));
        assertEquals(272, VectorLanes.vStride(256));
        assertEquals(64, VectorLanes.vStride(64));
    }

    @Test
    void headsArePaddedToTheFewestWholeVectors() {
        int lanes = VectorLanes.L;
        assertEquals(0, VectorLanes.vectors(0));
        for (int n = 1; n <= 10 * lanes + 1; n++) {
            int v = VectorLanes.vectors(n);
            assertTrue((long) v * lanes >= n && (long) (v - 1) * lanes < n, n + " lanes in " + v + " vectors of "
                    + lanes);
        }
    }

    @Test
    void keysGoInLanesForAHeadAxisOrFewerColumnsThanQueryRows() {
        // tq * heads = 4 * 16 = 64 query rows per batch entry: 63 columns keys in lanes, 64 and more heads in lanes
        assertTrue(VectorLanes.keysInLanes(false, 63, 4, 16));
        assertFalse(VectorLanes.keysInLanes(false, 64, 4, 16));
        assertFalse(VectorLanes.keysInLanes(false, 65, 4, 16));
        // a head axis in the mask: keys in lanes whatever the counts
        assertTrue(VectorLanes.keysInLanes(true, 64, 4, 16));
        assertTrue(VectorLanes.keysInLanes(true, 100_000, 1, 1));
        // the product is taken in long: 65536 * 65536 query rows outnumber any int column count
        assertTrue(VectorLanes.keysInLanes(false, Integer.MAX_VALUE, 65536, 65536));
        // decode (tq 1) with 64 heads against 128 columns: heads in lanes; the sinks bench shape (8 heads of a KV
        // head at 512 positions against 512 keys): keys in lanes
        assertFalse(VectorLanes.keysInLanes(false, 128, 1, 64));
        assertTrue(VectorLanes.keysInLanes(false, 512, 512, 8));
    }

    @Test
    void packingBlocksCoverEveryColumnOnceWithNoEmptyBlock() {
        assertEquals(0, VectorLanes.packBlocks(0));
        for (int columns = 1; columns <= 700; columns++) {
            int blocks = VectorLanes.packBlocks(columns);
            assertTrue((long) blocks * 64 >= columns, "blocks of 64 cover " + columns + " columns");
            assertTrue((long) (blocks - 1) * 64 < columns, "the last of " + blocks + " blocks holds a column of "
                    + columns);
        }
    }

    @Test
    void headChunksAreTheFewestWholeVectorChunksThatGiveEveryThreadWork() {
        int lanes = VectorLanes.L;
        for (int heads = 1; heads <= 8 * lanes + 3; heads++) {
            int vectors = (heads + lanes - 1) / lanes;
            for (int groups = 1; groups <= 9; groups++) {
                for (int threads = 1; threads <= 9; threads++) {
                    String at = "heads " + heads + ", groups " + groups + ", threads " + threads;
                    assertEquals(1, VectorLanes.headChunks(heads, groups, false, threads), at + ", sequential");
                    int chunks = VectorLanes.headChunks(heads, groups, true, threads);
                    assertTrue(chunks >= 1 && chunks <= vectors, at + ": " + chunks + " chunks of " + vectors
                            + " head vectors");
                    // every thread has a work item, unless each head vector is a chunk already
                    assertTrue((long) groups * chunks >= threads || chunks == vectors, at + ": " + chunks + " chunks");
                    // and no fewer would do
                    assertTrue(chunks == 1 || (long) groups * (chunks - 1) < threads, at + ": " + chunks
                            + " chunks where fewer give every thread work");
                    int per = VectorLanes.headsPerChunk(heads, chunks);
                    assertEquals(0, per % lanes, at + ": " + per + " heads per chunk, not whole vectors");
                    assertTrue((long) per * chunks >= heads, at + ": " + chunks + " x " + per + " miss heads");
                    // as even as whole vectors allow (a trailing chunk may then start past the last head: run skips it)
                    assertEquals((vectors + chunks - 1) / chunks, per / lanes, at + ": " + per + " heads per chunk");
                }
            }
        }
    }

    @Test
    void aRowBlockKeepsItsQUnder16KiBAndTakes1To8Rows() {
        for (int heads = 1; heads <= 130; heads++) {
            for (int d = 1; d <= 600; d += 7) {
                int rows = VectorLanes.rowBlock(heads, d);
                long q = (long) heads * d;
                assertTrue(rows >= 1 && rows <= VectorLanes.ROW_BLOCK_MAX, heads + " x " + d + ": " + rows + " rows");
                // as many rows as fit, capped: one more would pass the budget or the cap
                assertTrue(rows == 1 || rows * q <= VectorLanes.ROW_BLOCK_FLOATS, heads + " x " + d + ": over");
                assertTrue(rows == VectorLanes.ROW_BLOCK_MAX || (rows + 1) * q > VectorLanes.ROW_BLOCK_FLOATS,
                        heads + " x " + d + ": " + rows + " rows where " + (rows + 1) + " fit");
            }
        }
        // the shapes the blocks are for: a GPT-OSS sliding layer (8 heads of 64 a KV head) takes 8 rows; the V4
        // prefill (64 heads of 512) one; a head row past the budget still one
        assertEquals(8, VectorLanes.rowBlock(8, 64));
        assertEquals(1, VectorLanes.rowBlock(64, 512));
        assertEquals(1, VectorLanes.rowBlock(1, 100_000));
        assertEquals(2, VectorLanes.rowBlock(1, 2048));
    }

    @Test
    void sixHeadBlocksLeaveAMultipleOf4WhereTheHeadCountIsEven() {
        for (int heads = 0; heads <= 130; heads++) {
            int six = VectorLanes.sixBlocks(heads);
            int rest = heads - 6 * six;
            assertTrue(six >= 0 && rest >= 0, heads + " heads: " + six + " blocks of 6");
            if (heads % 2 == 0 && heads != 2) {
                // the rest goes in 4-head blocks, and no more 6-head blocks would leave that: six + 2 does not fit
                // (2 heads, the one even count that no 6-head block can leave a multiple of 4, take none)
                assertEquals(0, rest % 4, heads + " heads: " + six + " blocks of 6 leave " + rest);
                assertTrue(rest < 12, heads + " heads: " + six + " blocks of 6 where " + (six + 2) + " fit");
            } else {
                assertTrue(rest < 6, heads + " heads: " + six + " blocks of 6 where " + (six + 1) + " fit");
                assertEquals(heads == 2 ? 0 : heads / 6, six, heads + " heads");
            }
        }
        // the V4 shapes: 64 heads (decode on one thread) and 32 (split over two threads); the GPT-OSS group of 8
        assertEquals(10, VectorLanes.sixBlocks(64));
        assertEquals(4, VectorLanes.sixBlocks(32));
        assertEquals(0, VectorLanes.sixBlocks(8));
        assertEquals(0, VectorLanes.sixBlocks(2));
        assertEquals(1, VectorLanes.sixBlocks(7));
    }

    @Test
    void packingTakesAsManyEntriesAsFitIn32MiBAtLeastOneAtMostTheBatch() {
        long budget = VectorLanes.PACKED_FLOATS;
        for (int batch = 1; batch <= 40; batch++) {
            for (long per : new long[] {1, 2, 1000, budget / 7, budget / 2, budget - 1, budget, budget + 1,
                    4 * budget}) {
                int n = VectorLanes.packedEntries(batch, per);
                assertTrue(n >= 1 && n <= batch, batch + " entries of " + per + ": " + n);
                assertTrue(n == 1 || n * per <= budget, batch + " entries of " + per + ": " + n + " over budget");
                assertTrue(n == batch || (n + 1) * per > budget, batch + " entries of " + per + ": " + n
                        + " where " + (n + 1) + " fit");
            }
        }
        assertEquals(8, VectorLanes.packedEntries(8, 64L * 528 + 512 * 64)); // the sinks bench shape, in one pass
        assertEquals(1, VectorLanes.packedEntries(2, 512L * 8208 + 8192 * 528)); // 8.5 M floats an entry
        assertEquals(2, VectorLanes.packedEntries(3, 256L * 6160 + 6144 * 272)); // 3.25 M: 2 of 3 a pass
    }
}
