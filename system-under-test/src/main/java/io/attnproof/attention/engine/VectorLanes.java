package io.attnproof.attention.engine;

import static io.attnproof.attention.engine.HeadsInLanes.*;
import static io.attnproof.attention.engine.KeysInLanes.*;
import static io.attnproof.attention.engine.VectorExp.*;

import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The union kernel on the Vector API ({@code jdk.incubator.vector}): the operations {@link UnionLanes} states, lane
 * for lane, register-blocked. The query rows of one position share their admitted keys (a uniform batch, a ragged or
 * graph mask without a head axis), so one row group is the H heads of one query position, and the scores of a tile
 * are formed one of two ways, whichever transposes less:
 * <ul>
 *   <li><b>heads in lanes</b> (decode: few positions, many keys): q of the group transposed once to {@code [D][H]};
 *       each key row is read once for all heads (the absorbed-MQA shape: H rows of one MQA head);</li>
 *   <li><b>keys in lanes</b> (prefill: many positions share the keys): the union keys of a batch entry transposed once
 *       per call to {@code [D][n]}; each head's q element is broadcast against 16 consecutive columns.</li>
 * </ul>
 * Softmax and PV are then vectorised over heads (or keys) and over D. No input is copied: q, K and V are read in
 * place through read-only views. This class plans a call (layout, row blocks, head chunks, packing) and lends the
 * scratch; the two layouts are {@link HeadsInLanes} and {@link KeysInLanes}, PV and the final division
 * {@link PvBlocks}, the vector exp {@link VectorExp}. The trade-off, stated once: register blocking and packing buy
 * speed at the cost of many small kernels, each pinned to the scalar engine's bits by the engine tests.
 */
final class VectorLanes extends UnionLanes {
    static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    /** Ints in vectors of the same lanes. */
    static final VectorSpecies<Integer> ISP = SP.withLanes(int.class);
    /** Floats per vector on this machine. */
    static final int L = SP.length();
    /** Four vectors: a register block's keys (keys in lanes) or D elements (PV). */
    static final int L4 = 4 * L;
    static final int TILE = LaneMath.TILE;
    /** D is walked in chunks of this many so that a chunk of the packed q (or K) stays in L1. */
    static final int DC = 64;
    /** The same for keys in lanes: a chunk of K's columns, of q and of the tile's scores fit in L1 together. */
    static final int KDC = 64;
    /**
     * Packed V rows a multiple of 1 KiB long get one cache line more: rows 1 KiB apart fall in 1/16 of the L1 sets,
     * and a tile's slice of V (64 rows of a D block) no longer fits there while every head block passes over it.
     */
    static int vStride(int d) {
        return d % 256 == 0 ? d + 16 : d;
    }

    /** Columns per work item of the keys-in-lanes packing. */
    static final int PACK_COLUMNS = 64;
    /**
     * Floats before the first packed K and V element (speed only: the bits do not depend on it). G1 places an array of
     * half a region or more at the region's start, its first element 16 bytes in; 12 floats more put each V row and,
     * where nP is a multiple of 16, each K block on a cache line's start (when D is a multiple of 16), so those vector
     * loads do not straddle two lines. The benchmark's report holds what it was measured to buy.
     */
    static final int PACK_PAD = 12;
    static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT;
    static final float NEG_INF = Float.NEGATIVE_INFINITY;
    static final Pool<Scratch> SCRATCH = new Pool<>(Scratch::new);
    /** The packed K and V of a keys-in-lanes call, lent to one call at a time and reused by the next. */
    static final Pool<Packed> PACKED = new Pool<>(Packed::new);

    /** {@code kt}: K transposed, {@code [entry][D][nP]}; {@code vp}: V rows padded to {@link #vStride}. */
    static final class Packed {
        float[] kt = new float[0];
        float[] vp = new float[0];
    }

    /** One worker's buffers, grown on demand and reused across calls. */
    static final class Scratch {
        final Admission.Row row = new Admission.Row();
        float[] qt = new float[0];
        float[] s = new float[0];
        float[] m = new float[0];
        float[] l = new float[0];
        float[] alpha = new float[0];
        /** Keys in lanes: each head row's max over the tile, from the scores kernel. */
        float[] tileMax = new float[0];
        final float[] mNew = new float[L];
        float[] vt = new float[0];
        float[] kt = new float[0];
        float[] qs = new float[0];
        /** The q rows of a keys-in-lanes row block, [row][head][D]. */
        float[] qr = new float[0];
        /** Keys in lanes: the running max vectors of a 4-head block over a tile. */
        final float[] mx = new float[L4];
        /** Where a tail block's max over lanes past the tile goes (see scoresKeys4Whole). */
        final float[] mxJunk = new float[L4];
        int[] vRow = new int[TILE];
        /** Heads in lanes: the gather offsets of one head vector's rows of q ({@code k * D}). */
        final int[] qIdx = new int[L];

        /** Keys in lanes: the admitted keys of each row of a row block. */
        Admission.Row[] rows = {row};

        void rows(int n) {
            if (rows.length < n) {
                Admission.Row[] more = Arrays.copyOf(rows, n);
                for (int k = rows.length; k < n; k++) {
                    more[k] = new Admission.Row();
                }
                rows = more;
            }
        }

        void tile(int n) {
            if (vRow.length < n + L) {
                vRow = new int[Math.max(n + L, vRow.length * 2)];
            }
        }

        void lanes(int n) {
            m = grow(m, n);
            l = grow(l, n);
            // Room for whole vectors: the keys-in-lanes softmax exponentiates alpha in place.
            alpha = grow(alpha, n + L);
            tileMax = grow(tileMax, n);
        }
    }

    @Override
    String describe() {
        return "Vector API " + SP;
    }

    @Override
    void run(UnionCall c) {
        run(c, keysInLanes(c.admission().perHead(), c.columns(), c.tq(), c.heads()));
    }

    /**
     * The layout (speed only: both give the same bits): keys in lanes where the mask has a head axis (every head its
     * own group, served without idle lanes) or the union has fewer columns than a batch entry has query rows
     * ({@code tq * heads}), since its keys are then transposed once per entry ([D][n]) against q once per position.
     */
    static boolean keysInLanes(boolean perHead, int columns, int tq, int heads) {
        return perHead || (long) columns < (long) tq * heads;
    }

    /** Vectors that hold {@code n} lanes: the fewest whole vectors (heads are padded to them with zero rows). */
    static int vectors(int n) {
        return (n + L - 1) / L;
    }

    /** Work items of the keys-in-lanes packing of {@code columns} columns: blocks of {@link #PACK_COLUMNS}. */
    static int packBlocks(int columns) {
        return (columns + PACK_COLUMNS - 1) / PACK_COLUMNS;
    }

    /** The q of a keys-in-lanes row block stays under this many floats (16 KiB): it is read again for every tile. */
    static final int ROW_BLOCK_FLOATS = 4096;
    /** Rows a keys-in-lanes work item takes at most. */
    static final int ROW_BLOCK_MAX = 8;

    /**
     * Query rows a keys-in-lanes work item takes, tile by tile across them, when each row has {@code heads} head rows
     * of {@code d}: as many as keep their q under {@link #ROW_BLOCK_FLOATS}, between 1 and {@link #ROW_BLOCK_MAX}.
     */
    static int rowBlock(int heads, int d) {
        return (int) Math.max(1, Math.min(ROW_BLOCK_MAX, ROW_BLOCK_FLOATS / ((long) heads * d)));
    }

    /**
     * The 6-head register blocks a run of {@code heads} head rows takes before its 4-head blocks: as many as leave a
     * multiple of 4 where the count is even (64 = 10 x 6 + 4; 8 = 2 x 4), else as many as fit. A 6 x 4 block loads
     * 10 vectors for 24 multiply-adds, a 4 x 4 one 8 for 16.
     */
    static int sixBlocks(int heads) {
        int k = heads / 6;
        if (heads % 2 == 0 && (heads - 6 * k) % 4 != 0) {
            k--;
        }
        return Math.max(0, k);
    }

    /** Floats the packed K and V of the entries packed at once may take: 32 MiB. */
    static final int PACKED_FLOATS = 1 << 23;

    /**
     * Batch entries packed at once when each takes {@code perEntry > 0} floats: as many as fit in
     * {@link #PACKED_FLOATS}, at least 1 and at most {@code batch}.
     */
    static int packedEntries(int batch, long perEntry) {
        return (int) Math.max(1, Math.min(batch, PACKED_FLOATS / perEntry));
    }

    /**
     * How many chunks the heads-in-lanes layout splits {@code heads} into, for {@code groups} row groups on
     * {@code threads} threads: 1 unless {@code parallel}; else the fewest chunks of whole vectors that give every
     * thread a work item ({@code groups * chunks >= threads}), at most one per head vector.
     */
    static int headChunks(int heads, int groups, boolean parallel, int threads) {
        int vectors = vectors(heads);
        return parallel ? Math.max(1, Math.min(vectors, (threads + groups - 1) / groups)) : 1;
    }

    /**
     * Heads per chunk when {@code heads} are split into {@code chunks}: whole vectors, as even as they allow (a trailing
     * chunk may start past the last head, and is skipped).
     */
    static int headsPerChunk(int heads, int chunks) {
        int vectors = vectors(heads);
        return (vectors + chunks - 1) / chunks * L;
    }

    /** {@link #run(UnionCall)} with the layout forced (the engine test runs both on the same call). */
    void run(UnionCall c, boolean keysInLanes) {
        boolean perHead = c.admission().perHead();
        boolean parallel = parallel(c.macs());
        int d = c.headDim();
        if (keysInLanes) {
            int nP = c.columns() + L;
            int kStride = d * nP;
            int vStride = c.columns() * vStride(d);
            int perRow = perHead ? c.heads() : 1;
            int blocks = packBlocks(c.columns());
            int rowBlock = rowBlock(perHead ? 1 : c.heads(), d);
            int items = (c.tq() + rowBlock - 1) / rowBlock * perRow;
            int entries = packedEntries(c.batch(), (long) kStride + vStride);
            Packed packed = PACKED.take();
            try {
                // L4: a tail block reads <= 46 columns past the last
                packed.kt = grow(packed.kt, PACK_PAD + entries * kStride + L4);
                packed.vp = grow(packed.vp, PACK_PAD + entries * vStride);
                float[] kt = packed.kt;
                float[] vp = packed.vp;
                // Entries a group at a time: every thread packs, then every thread takes rows of the whole group
                // (two barriers a group rather than two an entry). A row item is a block of consecutive rows.
                for (int b0 = 0; b0 < c.batch(); b0 += entries) {
                    final int first = b0;
                    int n = Math.min(entries, c.batch() - b0);
                    forEach(n * blocks, parallel, SCRATCH, (scratch, w) -> {
                        int e = w / blocks;
                        int blk = w % blocks;
                        pack(c, first + e, kt, PACK_PAD + e * kStride, nP, vp, PACK_PAD + e * vStride,
                                blk * PACK_COLUMNS, Math.min(c.columns(), (blk + 1) * PACK_COLUMNS), scratch);
                    });
                    forEach(n * items, parallel, SCRATCH, (scratch, g) -> {
                        int e = g / items;
                        int r0 = g % items / perRow * rowBlock;
                        int h0 = perHead ? g % perRow : 0;
                        KeysInLanes.keysInLanes(c, first + e, r0, Math.min(c.tq(), r0 + rowBlock), h0,
                                perHead ? h0 + 1 : c.heads(), kt, PACK_PAD + e * kStride, nP, vp,
                                PACK_PAD + e * vStride, scratch);
                    });
                }
            } finally {
                PACKED.give(packed);
            }
        } else {
            if (perHead) {
                forEach(c.batch() * c.tq() * c.heads(), parallel, SCRATCH, (scratch, g) -> {
                    int h = g % c.heads();
                    int group = g / c.heads();
                    headsInLanes(c, group / c.tq(), group % c.tq(), h, h + 1, scratch);
                });
                return;
            }
            int groups = c.batch() * c.tq();
            // Few groups and several threads: split the heads (whole vectors) so every thread has work.
            int chunks = headChunks(c.heads(), groups, parallel, threads());
            int perChunk = headsPerChunk(c.heads(), chunks);
            forEach(groups * chunks, parallel, SCRATCH, (scratch, g) -> {
                int group = g / chunks;
                int h0 = g % chunks * perChunk;
                int h1 = Math.min(c.heads(), h0 + perChunk);
                if (h0 < h1) {
                    headsInLanes(c, group / c.tq(), group % c.tq(), h0, h1, scratch);
                }
            });
        }
    }

}
