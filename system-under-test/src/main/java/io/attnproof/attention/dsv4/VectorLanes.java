package io.attnproof.attention.dsv4;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
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
 * place through read-only views.
 */
final class VectorLanes extends UnionLanes {
    private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
    /** Ints in vectors of the same lanes. */
    private static final VectorSpecies<Integer> ISP = SP.withLanes(int.class);
    /** Floats per vector on this machine. */
    static final int L = SP.length();
    /** Four vectors: a register block's keys (keys in lanes) or D elements (PV). */
    private static final int L4 = 4 * L;
    private static final int TILE = LaneMath.TILE;
    /** D is walked in chunks of this many so that a chunk of the packed q (or K) stays in L1. */
    private static final int DC = 64;
    /** The same for keys in lanes: a chunk of K's columns, of q and of the tile's scores fit in L1 together. */
    private static final int KDC = 64;
    /**
     * Packed V rows a multiple of 1 KiB long get one cache line more: rows 1 KiB apart fall in 1/16 of the L1 sets,
     * and a tile's slice of V (64 rows of a D block) no longer fits there while every head block passes over it.
     */
    static int vStride(int d) {
        return d % 256 == 0 ? d + 16 : d;
    }

    /** Columns per work item of the keys-in-lanes packing. */
    private static final int PACK_COLUMNS = 64;
    /**
     * Floats before the first packed K and V element (speed only). G1 places an array of half a region or more (the
     * packed K and V of a call worth packing) at the region's start, its first element 16 bytes in; 12 floats more put
     * each V row and, where nP is a multiple of 16, each K block at a column that is one, on a cache line's start (when
     * D is a multiple of 16), so those vector loads do not straddle two lines. The trade-off: 12 floats of scratch per
     * buffer for a gain small enough that only the benchmark's report (bench/run) can show it; the bits are the same.
     */
    static final int PACK_PAD = 12;
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT;
    private static final float NEG_INF = Float.NEGATIVE_INFINITY;
    private static final Pool<Scratch> SCRATCH = new Pool<>(Scratch::new);
    /** The packed K and V of a keys-in-lanes call, lent to one call at a time and reused by the next. */
    private static final Pool<Packed> PACKED = new Pool<>(Packed::new);

    /** {@code kt}: K transposed, {@code [entry][D][nP]}; {@code vp}: V rows padded to {@link #vStride}. */
    private static final class Packed {
        float[] kt = new float[0];
        float[] vp = new float[0];
    }

    /** One worker's buffers, grown on demand and reused across calls. */
    private static final class Scratch {
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
                        keysInLanes(c, first + e, r0, Math.min(c.tq(), r0 + rowBlock), h0,
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

    // ---- heads in lanes -------------------------------------------------------------------------------------------

    private static void headsInLanes(UnionCall c, int b, int r, int h0, int h1, Scratch s) {
        Admission.Row row = s.row;
        c.admission().fill(b, h0, r, row);
        int d = c.headDim();
        int hc = h1 - h0;
        int hp = vectors(hc) * L;
        int nv = hp / L;
        boolean twoPass = c.form().twoPass();
        // The unfused form takes every admitted key as one tile.
        int tile = twoPass ? Math.max(1, row.count) : TILE;
        s.qt = grow(s.qt, d * hp);
        s.s = grow(s.s, tile * hp);
        int vs = vStride(d);
        s.kt = grow(s.kt, tile * vs);
        // V aliases K (the call holds one row set for both): the K rows copied for the scores are PV's V rows too.
        boolean kIsV = c.values() == c.keys();
        float[] vt = kIsV ? s.kt : (s.vt = grow(s.vt, tile * vs));
        s.tile(tile);
        s.lanes(hp);
        float[] qt = s.qt;
        // q of the group's heads, rows side by side (zero rows up to hp), then transposed to [D][hp].
        s.qs = grow(s.qs, hp * d);
        for (int j = 0; j < hc; j++) {
            MemorySegment.copy(c.q(), F, c.qByteOffset(b, h0 + j, r), s.qs, j * d, d);
        }
        Arrays.fill(s.qs, hc * d, hp * d, 0f);
        float[] qs = s.qs;
        // One gather a head vector and element of D: lane k reads row j + k.
        for (int k = 0; k < L; k++) {
            s.qIdx[k] = k * d;
        }
        for (int j = 0; j < hp; j += L) {
            for (int e = 0; e < d; e++) {
                FloatVector.fromArray(SP, qs, j * d + e, s.qIdx, 0).intoArray(qt, e * hp + j);
            }
        }
        for (int j = 0; j < hp; j++) {
            s.m[j] = j < hc ? c.sink(b, h0 + j) : NEG_INF;
            s.l[j] = 0f;
        }
        for (int t0 = 0; t0 < row.count; t0 += tile) {
            int tn = Math.min(tile, row.count - t0);
            for (int i = 0; i < tn; i++) {
                int col = row.cols[t0 + i];
                // The tile's K and V rows packed side by side (each is read by every head of the group).
                MemorySegment.copy(c.keys().data(col), F, c.keys().byteOffset(b, col), s.kt, i * vs, d);
                if (!kIsV) {
                    MemorySegment.copy(c.values().data(col), F, c.values().byteOffset(b, col), vt, i * vs, d);
                }
                s.vRow[i] = i * vs;
            }
            scoresHeads(c, s, row, t0, tn, hp, nv);
            if (twoPass) {
                softmaxHeadsTwoPass(s, tn, hp, nv);
            } else {
                softmaxHeads(s, tn, hp, nv);
            }
            pv(c, b, r, h0, hc, s.s, 1, hp, tn, s.alpha, vt, s.vRow);
        }
        finish(c, b, r, h0, hc, s.m, s.l, 0);
    }

    /**
     * {@code S[i][lane] = fma-chain(q, k_i) * scale (+ bias_i)}: register blocks of 4 head vectors x 4 keys (2 or 1
     * head vectors where fewer remain), over D in chunks of {@link #DC} so the chunk of transposed q stays in L1; the
     * partial sums wait in S between chunks (stored and reloaded exactly, so the chain over D is unbroken).
     */
    private static void scoresHeads(UnionCall c, Scratch s, Admission.Row row, int t0, int tn, int hp, int nv) {
        int d = c.headDim();
        int ks = vStride(d); // the K rows are padded as the V rows are (they may be the V rows)
        float[] qt = s.qt;
        float[] sc = s.s;
        Arrays.fill(sc, 0, tn * hp, 0f); // every chain starts at 0
        for (int e0 = 0; e0 < d; e0 += DC) {
            int e1 = Math.min(d, e0 + DC);
            int i = 0;
            if (nv == 2) {
                // Two head vectors (a group split over threads): 2 x 8 keys per register block.
                for (; i + 8 <= tn; i += 8) {
                    qk2x8(qt, hp, s.kt, i * ks, ks, e0, e1, sc, i * hp);
                }
            }
            for (; i + 4 <= tn; i += 4) {
                int o0 = i * ks;
                int v = 0;
                for (; v + 4 <= nv; v += 4) {
                    qk4x4(qt, hp, v * L, s.kt, o0, ks, e0, e1, sc, i * hp + v * L);
                }
                for (; v + 2 <= nv; v += 2) {
                    qk2x4(qt, hp, v * L, s.kt, o0, ks, e0, e1, sc, i * hp + v * L);
                }
                for (; v < nv; v++) {
                    for (int k = 0; k < 4; k++) {
                        qk1x1(qt, hp, v * L, s.kt, o0 + k * ks, e0, e1, sc, (i + k) * hp + v * L);
                    }
                }
            }
            for (; i < tn; i++) {
                for (int v = 0; v < nv; v++) {
                    qk1x1(qt, hp, v * L, s.kt, i * ks, e0, e1, sc, i * hp + v * L);
                }
            }
        }
        FloatVector scale = FloatVector.broadcast(SP, c.scale());
        for (int i = 0; i < tn; i++) {
            for (int v = 0; v < nv; v++) {
                int at = i * hp + v * L;
                FloatVector x = FloatVector.fromArray(SP, sc, at).mul(scale);
                if (row.biased) {
                    x = x.add(row.bias[t0 + i]);
                }
                x.intoArray(sc, at);
            }
        }
    }

    private static void qk4x4(float[] qt, int hp, int qb, float[] kt, int o0, int d, int e0, int e1, float[] sc,
            int at) {
        int o1 = o0 + d;
        int o2 = o1 + d;
        int o3 = o2 + d;
        FloatVector a00 = FloatVector.fromArray(SP, sc, at);
        FloatVector a10 = FloatVector.fromArray(SP, sc, at + L);
        FloatVector a20 = FloatVector.fromArray(SP, sc, at + 2 * L);
        FloatVector a30 = FloatVector.fromArray(SP, sc, at + 3 * L);
        FloatVector a01 = FloatVector.fromArray(SP, sc, at + hp);
        FloatVector a11 = FloatVector.fromArray(SP, sc, at + hp + L);
        FloatVector a21 = FloatVector.fromArray(SP, sc, at + hp + 2 * L);
        FloatVector a31 = FloatVector.fromArray(SP, sc, at + hp + 3 * L);
        FloatVector a02 = FloatVector.fromArray(SP, sc, at + 2 * hp);
        FloatVector a12 = FloatVector.fromArray(SP, sc, at + 2 * hp + L);
        FloatVector a22 = FloatVector.fromArray(SP, sc, at + 2 * hp + 2 * L);
        FloatVector a32 = FloatVector.fromArray(SP, sc, at + 2 * hp + 3 * L);
        FloatVector a03 = FloatVector.fromArray(SP, sc, at + 3 * hp);
        FloatVector a13 = FloatVector.fromArray(SP, sc, at + 3 * hp + L);
        FloatVector a23 = FloatVector.fromArray(SP, sc, at + 3 * hp + 2 * L);
        FloatVector a33 = FloatVector.fromArray(SP, sc, at + 3 * hp + 3 * L);
        for (int e = e0; e < e1; e++) {
            int qo = e * hp + qb;
            FloatVector q0 = FloatVector.fromArray(SP, qt, qo);
            FloatVector q1 = FloatVector.fromArray(SP, qt, qo + L);
            FloatVector q2 = FloatVector.fromArray(SP, qt, qo + 2 * L);
            FloatVector q3 = FloatVector.fromArray(SP, qt, qo + 3 * L);
            FloatVector x0 = FloatVector.broadcast(SP, kt[o0 + e]);
            FloatVector x1 = FloatVector.broadcast(SP, kt[o1 + e]);
            FloatVector x2 = FloatVector.broadcast(SP, kt[o2 + e]);
            FloatVector x3 = FloatVector.broadcast(SP, kt[o3 + e]);
            a00 = q0.fma(x0, a00);
            a01 = q0.fma(x1, a01);
            a02 = q0.fma(x2, a02);
            a03 = q0.fma(x3, a03);
            a10 = q1.fma(x0, a10);
            a11 = q1.fma(x1, a11);
            a12 = q1.fma(x2, a12);
            a13 = q1.fma(x3, a13);
            a20 = q2.fma(x0, a20);
            a21 = q2.fma(x1, a21);
            a22 = q2.fma(x2, a22);
            a23 = q2.fma(x3, a23);
            a30 = q3.fma(x0, a30);
            a31 = q3.fma(x1, a31);
            a32 = q3.fma(x2, a32);
            a33 = q3.fma(x3, a33);
        }
        a00.intoArray(sc, at);
        a10.intoArray(sc, at + L);
        a20.intoArray(sc, at + 2 * L);
        a30.intoArray(sc, at + 3 * L);
        a01.intoArray(sc, at + hp);
        a11.intoArray(sc, at + hp + L);
        a21.intoArray(sc, at + hp + 2 * L);
        a31.intoArray(sc, at + hp + 3 * L);
        a02.intoArray(sc, at + 2 * hp);
        a12.intoArray(sc, at + 2 * hp + L);
        a22.intoArray(sc, at + 2 * hp + 2 * L);
        a32.intoArray(sc, at + 2 * hp + 3 * L);
        a03.intoArray(sc, at + 3 * hp);
        a13.intoArray(sc, at + 3 * hp + L);
        a23.intoArray(sc, at + 3 * hp + 2 * L);
        a33.intoArray(sc, at + 3 * hp + 3 * L);
    }

    private static void qk2x4(float[] qt, int hp, int qb, float[] kt, int o0, int d, int e0, int e1, float[] sc,
            int at) {
        int o1 = o0 + d;
        int o2 = o1 + d;
        int o3 = o2 + d;
        FloatVector a00 = FloatVector.fromArray(SP, sc, at);
        FloatVector a10 = FloatVector.fromArray(SP, sc, at + L);
        FloatVector a01 = FloatVector.fromArray(SP, sc, at + hp);
        FloatVector a11 = FloatVector.fromArray(SP, sc, at + hp + L);
        FloatVector a02 = FloatVector.fromArray(SP, sc, at + 2 * hp);
        FloatVector a12 = FloatVector.fromArray(SP, sc, at + 2 * hp + L);
        FloatVector a03 = FloatVector.fromArray(SP, sc, at + 3 * hp);
        FloatVector a13 = FloatVector.fromArray(SP, sc, at + 3 * hp + L);
        for (int e = e0; e < e1; e++) {
            int qo = e * hp + qb;
            FloatVector q0 = FloatVector.fromArray(SP, qt, qo);
            FloatVector q1 = FloatVector.fromArray(SP, qt, qo + L);
            FloatVector x0 = FloatVector.broadcast(SP, kt[o0 + e]);
            FloatVector x1 = FloatVector.broadcast(SP, kt[o1 + e]);
            FloatVector x2 = FloatVector.broadcast(SP, kt[o2 + e]);
            FloatVector x3 = FloatVector.broadcast(SP, kt[o3 + e]);
            a00 = q0.fma(x0, a00);
            a01 = q0.fma(x1, a01);
            a02 = q0.fma(x2, a02);
            a03 = q0.fma(x3, a03);
            a10 = q1.fma(x0, a10);
            a11 = q1.fma(x1, a11);
            a12 = q1.fma(x2, a12);
            a13 = q1.fma(x3, a13);
        }
        a00.intoArray(sc, at);
        a10.intoArray(sc, at + L);
        a01.intoArray(sc, at + hp);
        a11.intoArray(sc, at + hp + L);
        a02.intoArray(sc, at + 2 * hp);
        a12.intoArray(sc, at + 2 * hp + L);
        a03.intoArray(sc, at + 3 * hp);
        a13.intoArray(sc, at + 3 * hp + L);
    }

    private static void qk2x8(float[] qt, int hp, float[] kt, int o0, int d, int e0, int e1, float[] sc, int at) {
        FloatVector a00 = FloatVector.fromArray(SP, sc, at);
        FloatVector a10 = FloatVector.fromArray(SP, sc, at + L);
        FloatVector a01 = FloatVector.fromArray(SP, sc, at + hp);
        FloatVector a11 = FloatVector.fromArray(SP, sc, at + hp + L);
        FloatVector a02 = FloatVector.fromArray(SP, sc, at + 2 * hp);
        FloatVector a12 = FloatVector.fromArray(SP, sc, at + 2 * hp + L);
        FloatVector a03 = FloatVector.fromArray(SP, sc, at + 3 * hp);
        FloatVector a13 = FloatVector.fromArray(SP, sc, at + 3 * hp + L);
        FloatVector a04 = FloatVector.fromArray(SP, sc, at + 4 * hp);
        FloatVector a14 = FloatVector.fromArray(SP, sc, at + 4 * hp + L);
        FloatVector a05 = FloatVector.fromArray(SP, sc, at + 5 * hp);
        FloatVector a15 = FloatVector.fromArray(SP, sc, at + 5 * hp + L);
        FloatVector a06 = FloatVector.fromArray(SP, sc, at + 6 * hp);
        FloatVector a16 = FloatVector.fromArray(SP, sc, at + 6 * hp + L);
        FloatVector a07 = FloatVector.fromArray(SP, sc, at + 7 * hp);
        FloatVector a17 = FloatVector.fromArray(SP, sc, at + 7 * hp + L);
        for (int e = e0; e < e1; e++) {
            int qo = e * hp;
            FloatVector q0 = FloatVector.fromArray(SP, qt, qo);
            FloatVector q1 = FloatVector.fromArray(SP, qt, qo + L);
            int ko = o0 + e;
            FloatVector x = FloatVector.broadcast(SP, kt[ko]);
            a00 = q0.fma(x, a00);
            a10 = q1.fma(x, a10);
            x = FloatVector.broadcast(SP, kt[ko + d]);
            a01 = q0.fma(x, a01);
            a11 = q1.fma(x, a11);
            x = FloatVector.broadcast(SP, kt[ko + 2 * d]);
            a02 = q0.fma(x, a02);
            a12 = q1.fma(x, a12);
            x = FloatVector.broadcast(SP, kt[ko + 3 * d]);
            a03 = q0.fma(x, a03);
            a13 = q1.fma(x, a13);
            x = FloatVector.broadcast(SP, kt[ko + 4 * d]);
            a04 = q0.fma(x, a04);
            a14 = q1.fma(x, a14);
            x = FloatVector.broadcast(SP, kt[ko + 5 * d]);
            a05 = q0.fma(x, a05);
            a15 = q1.fma(x, a15);
            x = FloatVector.broadcast(SP, kt[ko + 6 * d]);
            a06 = q0.fma(x, a06);
            a16 = q1.fma(x, a16);
            x = FloatVector.broadcast(SP, kt[ko + 7 * d]);
            a07 = q0.fma(x, a07);
            a17 = q1.fma(x, a17);
        }
        a00.intoArray(sc, at);
        a10.intoArray(sc, at + L);
        a01.intoArray(sc, at + hp);
        a11.intoArray(sc, at + hp + L);
        a02.intoArray(sc, at + 2 * hp);
        a12.intoArray(sc, at + 2 * hp + L);
        a03.intoArray(sc, at + 3 * hp);
        a13.intoArray(sc, at + 3 * hp + L);
        a04.intoArray(sc, at + 4 * hp);
        a14.intoArray(sc, at + 4 * hp + L);
        a05.intoArray(sc, at + 5 * hp);
        a15.intoArray(sc, at + 5 * hp + L);
        a06.intoArray(sc, at + 6 * hp);
        a16.intoArray(sc, at + 6 * hp + L);
        a07.intoArray(sc, at + 7 * hp);
        a17.intoArray(sc, at + 7 * hp + L);
    }

    private static void qk1x1(float[] qt, int hp, int qb, float[] kt, int o0, int e0, int e1, float[] sc, int at) {
        FloatVector a = FloatVector.fromArray(SP, sc, at);
        for (int e = e0; e < e1; e++) {
            a = FloatVector.fromArray(SP, qt, e * hp + qb).fma(FloatVector.broadcast(SP, kt[o0 + e]), a);
        }
        a.intoArray(sc, at);
    }

    /**
     * Online softmax of one tile, lanes over heads: leaves {@code p} in {@code s.s}, the new running max and sum in
     * {@code s.m}, {@code s.l}, and {@code alpha} per head. The exponentials of the tile run in {@link #expHeads},
     * whose vectors never cross a call (a vector passed to or returned from a method C2 does not inline is boxed).
     */
    private static void softmaxHeads(Scratch s, int tn, int hp, int nv) {
        float[] sc = s.s;
        for (int v = 0; v < nv; v++) {
            int lane = v * L;
            newMax(s, sc, tn, hp, lane);
            for (int j = 0; j < L; j++) {
                float mNew = s.mNew[j];
                float alpha = mNew == NEG_INF ? 0f : LaneMath.exp(s.m[lane + j] - mNew);
                s.alpha[lane + j] = alpha;
                s.l[lane + j] = s.l[lane + j] * alpha;
                s.m[lane + j] = mNew;
            }
            expHeads(sc, lane, hp, tn, s.m, s.l);
        }
    }

    /** {@code s.mNew[0..L) = max(s.m, the tile's scores)} for the head vector at {@code lane} (no vector leaves). */
    private static void newMax(Scratch s, float[] sc, int tn, int hp, int lane) {
        FloatVector tileMax = FloatVector.broadcast(SP, NEG_INF);
        for (int i = 0; i < tn; i++) {
            tileMax = tileMax.max(FloatVector.fromArray(SP, sc, i * hp + lane));
        }
        FloatVector.fromArray(SP, s.m, lane).max(tileMax).intoArray(s.mNew, 0);
    }

    /**
     * For the head vector at {@code lane}: {@code sc[i * hp + lane..] = exp(sc[..] - m)} (0 where {@code m} is -inf)
     * for every ordinal of the tile, and {@code l += p} in ordinal order.
     */
    static void expHeads(float[] sc, int lane, int hp, int tn, float[] m, float[] l) {
        FloatVector mNew = FloatVector.fromArray(SP, m, lane);
        VectorMask<Float> dead = mNew.eq(NEG_INF);
        FloatVector sum = FloatVector.fromArray(SP, l, lane);
        for (int i = 0; i < tn; i++) {
            int at = i * hp + lane;
            FloatVector x = FloatVector.fromArray(SP, sc, at).sub(mNew);
            // LaneMath.exp, lane for lane (kept in this loop on purpose: see softmaxHeads).
            FloatVector t = x.mul(LaneMath.LOG2E).add(LaneMath.ROUND);
            FloatVector n = t.sub(LaneMath.ROUND);
            FloatVector r = n.fma(MINUS_LN2_HI, x);
            r = n.fma(MINUS_LN2_LO, r);
            FloatVector y = P0.fma(r, P1);
            y = y.fma(r, P2);
            y = y.fma(r, P3);
            y = y.fma(r, P4);
            y = y.fma(r, P5);
            y = y.fma(r.mul(r), r);
            y = y.add(1f);
            // 2^n: t holds rint(x log2 e) in its low mantissa bits (t = ROUND + n), so its bits minus ROUND's are n.
            IntVector e = t.reinterpretAsInts().sub(ROUND_BITS).add(127).lanewise(VectorOperators.LSHL, 23);
            FloatVector p = y.mul(e.reinterpretAsFloats()).blend(0f, x.lt(LaneMath.EXP_LO).or(dead));
            p.intoArray(sc, at);
            sum = sum.add(p);
        }
        sum.intoArray(l, lane);
    }

    /**
     * The unfused form of {@link #softmaxHeads} over the row's one tile, lanes over heads: {@code m = max(sink,
     * max_i s_i)}, {@code l = e^(sink - m)} then {@code l + p_i} in ordinal order, and {@code p_i / l} left in
     * {@code s.s} (0 where {@code m} is -inf); {@code alpha} is 1 (0 for a dead lane), so PV accumulates the
     * normalised weights onto zeros.
     */
    private static void softmaxHeadsTwoPass(Scratch s, int tn, int hp, int nv) {
        float[] sc = s.s;
        for (int v = 0; v < nv; v++) {
            int lane = v * L;
            newMax(s, sc, tn, hp, lane);
            for (int j = 0; j < L; j++) {
                float mNew = s.mNew[j];
                boolean dead = mNew == NEG_INF;
                s.alpha[lane + j] = dead ? 0f : 1f;
                s.l[lane + j] = dead ? 0f : LaneMath.exp(s.m[lane + j] - mNew);
                s.m[lane + j] = mNew;
            }
            expHeads(sc, lane, hp, tn, s.m, s.l);
            FloatVector mv = FloatVector.fromArray(SP, s.m, lane);
            FloatVector l = FloatVector.fromArray(SP, s.l, lane).blend(1f, mv.eq(NEG_INF));
            for (int i = 0; i < tn; i++) {
                int at = i * hp + lane;
                FloatVector.fromArray(SP, sc, at).div(l).intoArray(sc, at);
            }
        }
    }

    /** {@code sc[at + i] = exp(sc[at + i] - m)} for {@code i < tn} rounded up to whole vectors; {@code m} finite. */
    static void expRow(float[] sc, int at, int tn, float m) {
        FloatVector mv = FloatVector.broadcast(SP, m);
        for (int i = 0; i < tn; i += L) {
            FloatVector x = FloatVector.fromArray(SP, sc, at + i).sub(mv);
            // LaneMath.exp, lane for lane (the same code as expHeads).
            FloatVector t = x.mul(LaneMath.LOG2E).add(LaneMath.ROUND);
            FloatVector n = t.sub(LaneMath.ROUND);
            FloatVector r = n.fma(MINUS_LN2_HI, x);
            r = n.fma(MINUS_LN2_LO, r);
            FloatVector y = P0.fma(r, P1);
            y = y.fma(r, P2);
            y = y.fma(r, P3);
            y = y.fma(r, P4);
            y = y.fma(r, P5);
            y = y.fma(r.mul(r), r);
            y = y.add(1f);
            IntVector e = t.reinterpretAsInts().sub(ROUND_BITS).add(127).lanewise(VectorOperators.LSHL, 23);
            y.mul(e.reinterpretAsFloats()).blend(0f, x.lt(LaneMath.EXP_LO)).intoArray(sc, at + i);
        }
    }

    // ---- keys in lanes --------------------------------------------------------------------------------------------

    /**
     * Packs columns {@code [from, to)} of batch entry {@code b} once per call (GEMM-style packing, read by every query
     * row of the entry): {@code kt[kb + e * nP + c] = K[b, column c, e]} and {@code vp[vb + c * vStride(D) + e] =
     * V[b, column c, e]}. Columns {@code [n, nP)} of kt are never admitted: a vector load may read them, but no lane
     * of theirs is kept.
     */
    private static void pack(UnionCall c, int b, float[] kt, int kb, int nP, float[] vp, int vb, int from, int to,
            Scratch s) {
        int d = c.headDim();
        int vs = vStride(d);
        s.qs = grow(s.qs, d);
        float[] k = s.qs;
        for (int col = from; col < to; col++) {
            MemorySegment.copy(c.keys().data(col), F, c.keys().byteOffset(b, col), k, 0, d);
            for (int e = 0; e < d; e++) {
                kt[kb + e * nP + col] = k[e];
            }
            MemorySegment.copy(c.values().data(col), F, c.values().byteOffset(b, col), vp, vb + col * vs, d);
        }
    }

    /**
     * Query rows {@code [r0, r1)} of batch entry {@code b}, heads {@code [h0, h1)}, tile by tile across the rows: the
     * first tile of every row, then the second, and so on. Consecutive rows of a sliding window admit nearly the same
     * keys, so the K and V of a tile are still in L1 when the next row reads them (row by row, each row's whole
     * window would pass through L1 between two reads). Each row's arithmetic is unchanged.
     */
    private static void keysInLanes(UnionCall c, int b, int r0, int r1, int h0, int h1, float[] kt, int kb, int nP,
            float[] vp, int vb, Scratch s) {
        int nr = r1 - r0;
        int hc = h1 - h0;
        int d = c.headDim();
        int vs = vStride(d);
        boolean twoPass = c.form().twoPass();
        s.rows(nr);
        int tiles = 0;
        int maxTile = 1;
        for (int k = 0; k < nr; k++) {
            Admission.Row row = s.rows[k];
            c.admission().fill(b, h0, r0 + k, row);
            // The unfused form takes every admitted key as one tile.
            int tile = twoPass ? Math.max(1, row.count) : TILE;
            maxTile = Math.max(maxTile, tile);
            tiles = Math.max(tiles, (row.count + tile - 1) / tile);
        }
        int stride = maxTile + L4; // a block that starts in the tile stays in its row (see block())
        s.s = grow(s.s, hc * stride);
        s.tile(maxTile);
        s.lanes(nr * hc);
        s.qr = grow(s.qr, nr * hc * d);
        for (int k = 0; k < nr; k++) {
            for (int j = 0; j < hc; j++) {
                s.m[k * hc + j] = c.sink(b, h0 + j);
                s.l[k * hc + j] = 0f;
                MemorySegment.copy(c.q(), F, c.qByteOffset(b, h0 + j, r0 + k), s.qr, (k * hc + j) * d, d);
            }
        }
        float scale = c.scale();
        for (int t = 0; t < tiles; t++) {
            for (int k = 0; k < nr; k++) {
                Admission.Row row = s.rows[k];
                int tile = twoPass ? Math.max(1, row.count) : TILE;
                int t0 = t * tile;
                if (t0 >= row.count) {
                    continue;
                }
                int tn = Math.min(tile, row.count - t0);
                // Whole vectors: vRow and the row's columns have room past tn.
                for (int i = 0; i < tn; i += L) {
                    IntVector.fromArray(ISP, row.cols, t0 + i).mul(vs).add(vb).intoArray(s.vRow, i);
                }
                // D in chunks, every head over one chunk before the next: the chunk of K stays in L1 across heads.
                // The last chunk also scales the scores, adds the biases and takes each head row's max over the tile.
                int qk = k * hc * d;
                int j4 = 0;
                if (d <= KDC && !row.biased) {
                    for (; j4 + 4 <= hc; j4 += 4) {
                        scoresKeys4Whole(s.qr, qk + j4 * d, d, row, t0, tn, kt, kb, nP, s.s, j4 * stride, stride,
                                scale, s.tileMax, j4, s.mx, s.mxJunk);
                    }
                }
                for (int j = j4; j < hc; j++) {
                    Arrays.fill(s.s, j * stride, j * stride + tn, 0f); // every chain starts at 0
                }
                for (int e0 = 0; e0 < d; e0 += KDC) {
                    int e1 = Math.min(d, e0 + KDC);
                    int j = j4;
                    for (; j + 4 <= hc; j += 4) {
                        scoresKeys4(s.qr, qk + j * d, d, row, t0, tn, kt, kb, nP, s.s, j * stride, stride, e0, e1,
                                scale, s.tileMax, j);
                    }
                    for (; j < hc; j++) {
                        scoresKeys1(d, s.qr, qk + j * d, row, t0, tn, kt, kb, nP, s.s, j * stride, e0, e1, scale,
                                s.tileMax, j);
                    }
                }
                softmaxKeys(s, k * hc, hc, stride, tn, twoPass);
                pv(c, b, r0 + k, h0, hc, s.s, stride, 1, tn, s.alpha, vp, s.vRow);
            }
        }
        for (int k = 0; k < nr; k++) {
            finish(c, b, r0 + k, h0, hc, s.m, s.l, k * hc);
        }
    }

    /**
     * Whether a 4-vector block starts at ordinal {@code i}: the next 64 ordinals of the tile are one run of columns, or
     * the tile's last ordinals from i (more than one vector) are, and the block's lanes past {@code tn} are scratch
     * (the head rows have room for a whole block past the tile, the packed K for 64 columns past the last).
     */
    private static boolean block(Admission.Row row, int t0, int i, int tn) {
        int n = Math.min(L4, tn - i);
        return n > L && row.cols[t0 + i + n - 1] == row.cols[t0 + i] + n - 1;
    }

    /** Length of the run of consecutive columns at ordinal {@code i}, capped at {@code max}. */
    private static int run(Admission.Row row, int i, int max) {
        int col = row.cols[i];
        int n = 1;
        while (n < max && row.cols[i + n] == col + n) {
            n++;
        }
        return n;
    }

    /**
     * Scores of 4 heads over one tile, D in {@code [e0, e1)} added to the partial sums in {@code out} (stored and
     * reloaded exactly, so the chain over D is unbroken): 4 heads x 4 key vectors per register block where 64
     * columns run on; elsewhere one vector, of which only the run's lanes are stored (the rest belong to other
     * columns). After the last chunk ({@code e1 == d}) each head row holds its logits and its max over the tile is
     * in {@code tileMax[j..j+3]} ({@link #logitsRow}). The blocks are methods of their own so that their loops keep
     * every index in a register.
     */
    private static void scoresKeys4(float[] q, int q0, int d, Admission.Row row, int t0, int tn, float[] kt, int kb,
            int nP, float[] out, int at, int stride, int e0, int e1, float scale, float[] tileMax, int j) {
        int i = 0;
        while (i < tn) {
            int col = row.cols[t0 + i];
            int ko = kb + e0 * nP + col;
            if (block(row, t0, i, tn)) {
                qk4x4Keys(q, q0, d, kt, ko, nP, e0, e1, out, at + i, stride);
                i += L4;
            } else {
                int n = run(row, t0 + i, Math.min(L, tn - i));
                qk4x1Keys(q, q0, d, kt, ko, nP, e0, e1, out, at + i, stride, n);
                i += n;
            }
        }
        if (e1 == d) {
            for (int h = 0; h < 4; h++) {
                tileMax[j + h] = logitsRow(out, at + h * stride, tn, scale, row, t0);
            }
        }
    }

    /**
     * One register block of {@link #scoresKeys4}: 4 heads (q rows {@code q0 + h * d}) x 4 key vectors (K from
     * {@code kt[ko]}, rows {@code nP} apart), D in {@code [e0, e1)}, onto the partial sums at {@code out[o]} (rows
     * {@code stride} apart).
     */
    private static void qk4x4Keys(float[] q, int q0, int d, float[] kt, int ko, int nP, int e0, int e1, float[] out,
            int o, int stride) {
        FloatVector a00 = FloatVector.fromArray(SP, out, o);
        FloatVector a01 = FloatVector.fromArray(SP, out, o + L);
        FloatVector a02 = FloatVector.fromArray(SP, out, o + 2 * L);
        FloatVector a03 = FloatVector.fromArray(SP, out, o + 3 * L);
        FloatVector a10 = FloatVector.fromArray(SP, out, o + stride);
        FloatVector a11 = FloatVector.fromArray(SP, out, o + stride + L);
        FloatVector a12 = FloatVector.fromArray(SP, out, o + stride + 2 * L);
        FloatVector a13 = FloatVector.fromArray(SP, out, o + stride + 3 * L);
        FloatVector a20 = FloatVector.fromArray(SP, out, o + 2 * stride);
        FloatVector a21 = FloatVector.fromArray(SP, out, o + 2 * stride + L);
        FloatVector a22 = FloatVector.fromArray(SP, out, o + 2 * stride + 2 * L);
        FloatVector a23 = FloatVector.fromArray(SP, out, o + 2 * stride + 3 * L);
        FloatVector a30 = FloatVector.fromArray(SP, out, o + 3 * stride);
        FloatVector a31 = FloatVector.fromArray(SP, out, o + 3 * stride + L);
        FloatVector a32 = FloatVector.fromArray(SP, out, o + 3 * stride + 2 * L);
        FloatVector a33 = FloatVector.fromArray(SP, out, o + 3 * stride + 3 * L);
        int q1 = q0 + d;
        int q2 = q1 + d;
        int q3 = q2 + d;
        for (int e = e0; e < e1; e++, ko += nP) {
            FloatVector k0 = FloatVector.fromArray(SP, kt, ko);
            FloatVector k1 = FloatVector.fromArray(SP, kt, ko + L);
            FloatVector k2 = FloatVector.fromArray(SP, kt, ko + 2 * L);
            FloatVector k3 = FloatVector.fromArray(SP, kt, ko + 3 * L);
            FloatVector x0 = FloatVector.broadcast(SP, q[q0 + e]);
            FloatVector x1 = FloatVector.broadcast(SP, q[q1 + e]);
            FloatVector x2 = FloatVector.broadcast(SP, q[q2 + e]);
            FloatVector x3 = FloatVector.broadcast(SP, q[q3 + e]);
            a00 = x0.fma(k0, a00);
            a01 = x0.fma(k1, a01);
            a02 = x0.fma(k2, a02);
            a03 = x0.fma(k3, a03);
            a10 = x1.fma(k0, a10);
            a11 = x1.fma(k1, a11);
            a12 = x1.fma(k2, a12);
            a13 = x1.fma(k3, a13);
            a20 = x2.fma(k0, a20);
            a21 = x2.fma(k1, a21);
            a22 = x2.fma(k2, a22);
            a23 = x2.fma(k3, a23);
            a30 = x3.fma(k0, a30);
            a31 = x3.fma(k1, a31);
            a32 = x3.fma(k2, a32);
            a33 = x3.fma(k3, a33);
        }
        a00.intoArray(out, o);
        a01.intoArray(out, o + L);
        a02.intoArray(out, o + 2 * L);
        a03.intoArray(out, o + 3 * L);
        a10.intoArray(out, o + stride);
        a11.intoArray(out, o + stride + L);
        a12.intoArray(out, o + stride + 2 * L);
        a13.intoArray(out, o + stride + 3 * L);
        a20.intoArray(out, o + 2 * stride);
        a21.intoArray(out, o + 2 * stride + L);
        a22.intoArray(out, o + 2 * stride + 2 * L);
        a23.intoArray(out, o + 2 * stride + 3 * L);
        a30.intoArray(out, o + 3 * stride);
        a31.intoArray(out, o + 3 * stride + L);
        a32.intoArray(out, o + 3 * stride + 2 * L);
        a33.intoArray(out, o + 3 * stride + 3 * L);
    }

    /** {@link #qk4x4Keys} for one key vector of which the first {@code n} lanes are admitted (and stored). */
    private static void qk4x1Keys(float[] q, int q0, int d, float[] kt, int ko, int nP, int e0, int e1, float[] out,
            int o, int stride, int n) {
        FloatVector a0 = FloatVector.fromArray(SP, out, o);
        FloatVector a1 = FloatVector.fromArray(SP, out, o + stride);
        FloatVector a2 = FloatVector.fromArray(SP, out, o + 2 * stride);
        FloatVector a3 = FloatVector.fromArray(SP, out, o + 3 * stride);
        int q1 = q0 + d;
        int q2 = q1 + d;
        int q3 = q2 + d;
        for (int e = e0; e < e1; e++, ko += nP) {
            FloatVector k0 = FloatVector.fromArray(SP, kt, ko);
            a0 = FloatVector.broadcast(SP, q[q0 + e]).fma(k0, a0);
            a1 = FloatVector.broadcast(SP, q[q1 + e]).fma(k0, a1);
            a2 = FloatVector.broadcast(SP, q[q2 + e]).fma(k0, a2);
            a3 = FloatVector.broadcast(SP, q[q3 + e]).fma(k0, a3);
        }
        VectorMask<Float> keep = SP.indexInRange(0, n);
        a0.intoArray(out, o, keep);
        a1.intoArray(out, o + stride, keep);
        a2.intoArray(out, o + 2 * stride, keep);
        a3.intoArray(out, o + 3 * stride, keep);
    }

    /**
     * {@link #scoresKeys4} when D is one chunk and the row has no biases: each block starts at 0, stores logits and
     * folds its max into {@code mx} (no partial sums to store and reload, no second pass).
     */
    private static void scoresKeys4Whole(float[] q, int q0, int d, Admission.Row row, int t0, int tn, float[] kt,
            int kb, int nP, float[] out, int at, int stride, float scale, float[] tileMax, int j, float[] mx,
            float[] junk) {
        FloatVector none = FloatVector.broadcast(SP, NEG_INF);
        none.intoArray(mx, 0);
        none.intoArray(mx, L);
        none.intoArray(mx, 2 * L);
        none.intoArray(mx, 3 * L);
        int i = 0;
        while (i < tn) {
            int col = row.cols[t0 + i];
            int ko = kb + col;
            if (block(row, t0, i, tn)) {
                // A tail block (lanes past tn are scratch): its max goes to junk, the admitted lanes' comes from out.
                boolean tail = i + L4 > tn;
                qk4x4Whole(q, q0, d, kt, ko, nP, out, at + i, stride, scale, tail ? junk : mx);
                if (tail) {
                    foldMax(out, at + i, stride, tn - i, mx);
                }
                i += L4;
            } else {
                int n = run(row, t0 + i, Math.min(L, tn - i));
                qk4x1Whole(q, q0, d, kt, ko, nP, out, at + i, stride, scale, n, mx);
                i += n;
            }
        }
        for (int h = 0; h < 4; h++) {
            tileMax[j + h] = FloatVector.fromArray(SP, mx, h * L).reduceLanes(VectorOperators.MAX);
        }
    }

    /** {@code mx[h * L..] = max(mx[h * L..], out[o + h * stride + i])} for 4 head rows and {@code i < n}. */
    private static void foldMax(float[] out, int o, int stride, int n, float[] mx) {
        for (int h = 0; h < 4; h++) {
            int at = o + h * stride;
            FloatVector m = FloatVector.fromArray(SP, mx, h * L);
            for (int i = 0; i < n; i += L) {
                m = m.max(FloatVector.fromArray(SP, out, at + i).blend(NEG_INF, SP.indexInRange(i, n).not()));
            }
            m.intoArray(mx, h * L);
        }
    }

    /** {@link #qk4x4Keys} over all of D from 0, storing {@code acc * scale} and folding each head's max into mx. */
    private static void qk4x4Whole(float[] q, int q0, int d, float[] kt, int ko, int nP, float[] out, int o,
            int stride, float scale, float[] mx) {
        FloatVector a00 = FloatVector.zero(SP);
        FloatVector a01 = FloatVector.zero(SP);
        FloatVector a02 = FloatVector.zero(SP);
        FloatVector a03 = FloatVector.zero(SP);
        FloatVector a10 = FloatVector.zero(SP);
        FloatVector a11 = FloatVector.zero(SP);
        FloatVector a12 = FloatVector.zero(SP);
        FloatVector a13 = FloatVector.zero(SP);
        FloatVector a20 = FloatVector.zero(SP);
        FloatVector a21 = FloatVector.zero(SP);
        FloatVector a22 = FloatVector.zero(SP);
        FloatVector a23 = FloatVector.zero(SP);
        FloatVector a30 = FloatVector.zero(SP);
        FloatVector a31 = FloatVector.zero(SP);
        FloatVector a32 = FloatVector.zero(SP);
        FloatVector a33 = FloatVector.zero(SP);
        int q1 = q0 + d;
        int q2 = q1 + d;
        int q3 = q2 + d;
        for (int e = 0; e < d; e++, ko += nP) {
            FloatVector k0 = FloatVector.fromArray(SP, kt, ko);
            FloatVector k1 = FloatVector.fromArray(SP, kt, ko + L);
            FloatVector k2 = FloatVector.fromArray(SP, kt, ko + 2 * L);
            FloatVector k3 = FloatVector.fromArray(SP, kt, ko + 3 * L);
            FloatVector x0 = FloatVector.broadcast(SP, q[q0 + e]);
            FloatVector x1 = FloatVector.broadcast(SP, q[q1 + e]);
            FloatVector x2 = FloatVector.broadcast(SP, q[q2 + e]);
            FloatVector x3 = FloatVector.broadcast(SP, q[q3 + e]);
            a00 = x0.fma(k0, a00);
            a01 = x0.fma(k1, a01);
            a02 = x0.fma(k2, a02);
            a03 = x0.fma(k3, a03);
            a10 = x1.fma(k0, a10);
            a11 = x1.fma(k1, a11);
            a12 = x1.fma(k2, a12);
            a13 = x1.fma(k3, a13);
            a20 = x2.fma(k0, a20);
            a21 = x2.fma(k1, a21);
            a22 = x2.fma(k2, a22);
            a23 = x2.fma(k3, a23);
            a30 = x3.fma(k0, a30);
            a31 = x3.fma(k1, a31);
            a32 = x3.fma(k2, a32);
            a33 = x3.fma(k3, a33);
        }
        FloatVector sv = FloatVector.broadcast(SP, scale);
        a00 = a00.mul(sv);
        a01 = a01.mul(sv);
        a02 = a02.mul(sv);
        a03 = a03.mul(sv);
        a10 = a10.mul(sv);
        a11 = a11.mul(sv);
        a12 = a12.mul(sv);
        a13 = a13.mul(sv);
        a20 = a20.mul(sv);
        a21 = a21.mul(sv);
        a22 = a22.mul(sv);
        a23 = a23.mul(sv);
        a30 = a30.mul(sv);
        a31 = a31.mul(sv);
        a32 = a32.mul(sv);
        a33 = a33.mul(sv);
        a00.intoArray(out, o);
        a01.intoArray(out, o + L);
        a02.intoArray(out, o + 2 * L);
        a03.intoArray(out, o + 3 * L);
        a10.intoArray(out, o + stride);
        a11.intoArray(out, o + stride + L);
        a12.intoArray(out, o + stride + 2 * L);
        a13.intoArray(out, o + stride + 3 * L);
        a20.intoArray(out, o + 2 * stride);
        a21.intoArray(out, o + 2 * stride + L);
        a22.intoArray(out, o + 2 * stride + 2 * L);
        a23.intoArray(out, o + 2 * stride + 3 * L);
        a30.intoArray(out, o + 3 * stride);
        a31.intoArray(out, o + 3 * stride + L);
        a32.intoArray(out, o + 3 * stride + 2 * L);
        a33.intoArray(out, o + 3 * stride + 3 * L);
        FloatVector.fromArray(SP, mx, 0).max(a00).max(a01).max(a02).max(a03).intoArray(mx, 0);
        FloatVector.fromArray(SP, mx, L).max(a10).max(a11).max(a12).max(a13).intoArray(mx, L);
        FloatVector.fromArray(SP, mx, 2 * L).max(a20).max(a21).max(a22).max(a23).intoArray(mx, 2 * L);
        FloatVector.fromArray(SP, mx, 3 * L).max(a30).max(a31).max(a32).max(a33).intoArray(mx, 3 * L);
    }

    /** {@link #qk4x4Whole} for one key vector of which the first {@code n} lanes are admitted (and stored). */
    private static void qk4x1Whole(float[] q, int q0, int d, float[] kt, int ko, int nP, float[] out, int o,
            int stride, float scale, int n, float[] mx) {
        FloatVector a0 = FloatVector.zero(SP);
        FloatVector a1 = a0;
        FloatVector a2 = a0;
        FloatVector a3 = a0;
        int q1 = q0 + d;
        int q2 = q1 + d;
        int q3 = q2 + d;
        for (int e = 0; e < d; e++, ko += nP) {
            FloatVector k0 = FloatVector.fromArray(SP, kt, ko);
            a0 = FloatVector.broadcast(SP, q[q0 + e]).fma(k0, a0);
            a1 = FloatVector.broadcast(SP, q[q1 + e]).fma(k0, a1);
            a2 = FloatVector.broadcast(SP, q[q2 + e]).fma(k0, a2);
            a3 = FloatVector.broadcast(SP, q[q3 + e]).fma(k0, a3);
        }
        FloatVector sv = FloatVector.broadcast(SP, scale);
        a0 = a0.mul(sv);
        a1 = a1.mul(sv);
        a2 = a2.mul(sv);
        a3 = a3.mul(sv);
        VectorMask<Float> keep = SP.indexInRange(0, n);
        a0.intoArray(out, o, keep);
        a1.intoArray(out, o + stride, keep);
        a2.intoArray(out, o + 2 * stride, keep);
        a3.intoArray(out, o + 3 * stride, keep);
        VectorMask<Float> drop = keep.not();
        FloatVector.fromArray(SP, mx, 0).max(a0.blend(NEG_INF, drop)).intoArray(mx, 0);
        FloatVector.fromArray(SP, mx, L).max(a1.blend(NEG_INF, drop)).intoArray(mx, L);
        FloatVector.fromArray(SP, mx, 2 * L).max(a2.blend(NEG_INF, drop)).intoArray(mx, 2 * L);
        FloatVector.fromArray(SP, mx, 3 * L).max(a3.blend(NEG_INF, drop)).intoArray(mx, 3 * L);
    }

    /** {@link #scoresKeys4} for one head. */
    private static void scoresKeys1(int d, float[] q, int q0, Admission.Row row, int t0, int tn, float[] kt, int kb,
            int nP, float[] out, int at, int e0, int e1, float scale, float[] tileMax, int j) {
        int i = 0;
        while (i < tn) {
            int col = row.cols[t0 + i];
            if (block(row, t0, i, tn)) {
                FloatVector a0 = FloatVector.fromArray(SP, out, at + i);
                FloatVector a1 = FloatVector.fromArray(SP, out, at + i + L);
                FloatVector a2 = FloatVector.fromArray(SP, out, at + i + 2 * L);
                FloatVector a3 = FloatVector.fromArray(SP, out, at + i + 3 * L);
                for (int e = e0; e < e1; e++) {
                    int ko = kb + e * nP + col;
                    FloatVector x = FloatVector.broadcast(SP, q[q0 + e]);
                    a0 = x.fma(FloatVector.fromArray(SP, kt, ko), a0);
                    a1 = x.fma(FloatVector.fromArray(SP, kt, ko + L), a1);
                    a2 = x.fma(FloatVector.fromArray(SP, kt, ko + 2 * L), a2);
                    a3 = x.fma(FloatVector.fromArray(SP, kt, ko + 3 * L), a3);
                }
                a0.intoArray(out, at + i);
                a1.intoArray(out, at + i + L);
                a2.intoArray(out, at + i + 2 * L);
                a3.intoArray(out, at + i + 3 * L);
                i += L4;
            } else {
                int n = run(row, t0 + i, Math.min(L, tn - i));
                FloatVector a0 = FloatVector.fromArray(SP, out, at + i);
                for (int e = e0; e < e1; e++) {
                    a0 = FloatVector.broadcast(SP, q[q0 + e]).fma(FloatVector.fromArray(SP, kt, kb + e * nP + col),
                            a0);
                }
                a0.intoArray(out, at + i, SP.indexInRange(0, n));
                i += n;
            }
        }
        if (e1 == d) {
            tileMax[j] = logitsRow(out, at, tn, scale, row, t0);
        }
    }

    /**
     * {@code out[at + i] = out[at + i] * scale (+ bias_i)} for {@code i < tn} (whole vectors: the lanes past tn are
     * scratch); returns the max over {@code i < tn}. The two forms are separate loops: a vector that is one of two
     * values at a merge point is boxed.
     */
    private static float logitsRow(float[] out, int at, int tn, float scale, Admission.Row row, int t0) {
        FloatVector sv = FloatVector.broadcast(SP, scale);
        FloatVector mx = FloatVector.broadcast(SP, NEG_INF);
        int full = tn / L * L;
        if (row.biased) {
            for (int i = 0; i < tn; i += L) {
                FloatVector x = FloatVector.fromArray(SP, out, at + i).mul(sv)
                        .add(FloatVector.fromArray(SP, row.bias, t0 + i));
                x.intoArray(out, at + i);
                mx = mx.max(x.blend(NEG_INF, SP.indexInRange(i, tn).not()));
            }
        } else {
            for (int i = 0; i < full; i += L) {
                FloatVector x = FloatVector.fromArray(SP, out, at + i).mul(sv);
                x.intoArray(out, at + i);
                mx = mx.max(x);
            }
            if (full < tn) {
                FloatVector x = FloatVector.fromArray(SP, out, at + full).mul(sv);
                x.intoArray(out, at + full);
                mx = mx.max(x.blend(NEG_INF, SP.indexInRange(full, tn).not()));
            }
        }
        return mx.reduceLanes(VectorOperators.MAX);
    }

    /**
     * Online softmax of one tile of every head row {@code j < hc} (row j's logits at {@code j * stride}, its max over
     * the tile in {@code s.tileMax[j]}), lanes over keys: the rows' {@code e^(m - mNew)} together in one exponential
     * pass, the tile's exponentials by {@link #expRow}, and each row's sum in ordinal order, eight rows' chains
     * interleaved. With {@code twoPass} (the unfused form, one tile: {@code s.m[j]} still holds the sink) the sum
     * starts at {@code e^(sink - m)} and the weights are divided by it; all zeros where {@code m} is -inf.
     */
    private static void softmaxKeys(Scratch s, int mo, int hc, int stride, int tn, boolean twoPass) {
        float[] sc = s.s;
        float[] m = s.m;
        float[] l = s.l;
        // alpha[j] = m - mNew (0 for a dead row), then e^alpha[j] for every row at once.
        for (int j = 0; j < hc; j++) {
            float mNew = Math.max(m[mo + j], s.tileMax[j]);
            s.alpha[j] = mNew == NEG_INF ? 0f : m[mo + j] - mNew;
            m[mo + j] = mNew;
        }
        expRow(s.alpha, 0, hc, 0f);
        for (int j = 0; j < hc; j++) {
            int at = j * stride;
            float mNew = m[mo + j];
            if (mNew == NEG_INF) {
                s.alpha[j] = 0f;
                l[mo + j] = twoPass ? 0f : l[mo + j] * 0f;
                Arrays.fill(sc, at, at + tn, 0f);
            } else {
                float decay = s.alpha[j];
                // twoPass: the old m is the sink (the row's only tile), so the sum starts at the sink's term.
                l[mo + j] = twoPass ? decay : l[mo + j] * decay;
                s.alpha[j] = twoPass ? 1f : decay;
                expRow(sc, at, tn, mNew);
            }
        }
        // l = l + p_i in ordinal order per row (a dead row adds its zeros: l stays 0); eight rows' chains
        // interleaved cover the add latency.
        int j = 0;
        for (; j + 8 <= hc; j += 8) {
            int a0 = j * stride;
            float l0 = l[mo + j];
            float l1 = l[mo + j + 1];
            float l2 = l[mo + j + 2];
            float l3 = l[mo + j + 3];
            float l4 = l[mo + j + 4];
            float l5 = l[mo + j + 5];
            float l6 = l[mo + j + 6];
            float l7 = l[mo + j + 7];
            for (int i = 0; i < tn; i++) {
                int a = a0 + i;
                l0 = l0 + sc[a];
                l1 = l1 + sc[a + stride];
                l2 = l2 + sc[a + 2 * stride];
                l3 = l3 + sc[a + 3 * stride];
                l4 = l4 + sc[a + 4 * stride];
                l5 = l5 + sc[a + 5 * stride];
                l6 = l6 + sc[a + 6 * stride];
                l7 = l7 + sc[a + 7 * stride];
            }
            l[mo + j] = l0;
            l[mo + j + 1] = l1;
            l[mo + j + 2] = l2;
            l[mo + j + 3] = l3;
            l[mo + j + 4] = l4;
            l[mo + j + 5] = l5;
            l[mo + j + 6] = l6;
            l[mo + j + 7] = l7;
        }
        for (; j < hc; j++) {
            int a0 = j * stride;
            float l0 = l[mo + j];
            for (int i = 0; i < tn; i++) {
                l0 = l0 + sc[a0 + i];
            }
            l[mo + j] = l0;
        }
        if (twoPass) {
            for (j = 0; j < hc; j++) {
                if (m[mo + j] == NEG_INF) {
                    continue;
                }
                FloatVector lv = FloatVector.broadcast(SP, l[mo + j]);
                int at = j * stride;
                for (int i = 0; i < tn; i += L) {
                    FloatVector.fromArray(SP, sc, at + i).div(lv).intoArray(sc, at + i);
                }
            }
        }
    }

    // ---- shared: PV, the final division, exp ------------------------------------------------------------------------

    /**
     * {@code out[row h] = out[row h] * alpha_h}, then {@code += p(h, i) * v_i} for every ordinal of the tile in order,
     * lanes over D, {@code p(h0 + j, i) = p[j * pH + i * pI]}, {@code v_i[e] = vt[vRow[i] + e]}. Register blocks of
     * 6 or 4 heads x 4 vectors; the D blocks are the outer loop, so a block's slice of the tile's V rows stays in L1
     * while every head block passes over it.
     */
    private static void pv(UnionCall c, int b, int r, int h0, int hc, float[] p, int pH, int pI, int tn,
            float[] alpha, float[] vt, int[] vRow) {
        int d = c.headDim();
        float[] out = c.out();
        // 6-head blocks where a key's weights for consecutive heads are adjacent (heads in lanes): 6 broadcasts from
        // one cache line. With keys in lanes each head's weights are a row of their own, and there 6 x 4 blocks
        // are slower than 4 x 4 at the V4 prefill (the benchmark report has the ratio).
        int six = pH == 1 ? sixBlocks(hc) : 0;
        int e = 0;
        for (; e + L4 <= d; e += L4) {
            int j = 0;
            for (int k6 = six; k6 > 0; k6--, j += 6) {
                pv6x4(out, c.outOffset(b, h0 + j, r), c.tq() * d, e, alpha, j, p, j * pH, pH, pI, tn, vt, vRow);
            }
            for (; j + 4 <= hc; j += 4) {
                int o0 = c.outOffset(b, h0 + j, r);
                int o1 = c.outOffset(b, h0 + j + 1, r);
                int o2 = c.outOffset(b, h0 + j + 2, r);
                int o3 = c.outOffset(b, h0 + j + 3, r);
                pv4x4(out, o0, o1, o2, o3, e, alpha, j, p, j * pH, pH, pI, tn, vt, vRow);
            }
            for (; j < hc; j++) {
                pv1x4(out, c.outOffset(b, h0 + j, r), e, alpha[j], p, j * pH, pI, tn, vt, vRow);
            }
        }
        for (; e + L <= d; e += L) {
            for (int j = 0; j < hc; j++) {
                pv1x1(out, c.outOffset(b, h0 + j, r), e, alpha[j], p, j * pH, pI, tn, vt, vRow);
            }
        }
        for (; e < d; e++) {
            for (int j = 0; j < hc; j++) {
                int at = c.outOffset(b, h0 + j, r) + e;
                float a = out[at] * alpha[j];
                for (int i = 0; i < tn; i++) {
                    a = Math.fma(p[j * pH + i * pI], vt[vRow[i] + e], a);
                }
                out[at] = a;
            }
        }
    }

    private static void pv4x4(float[] out, int o0, int o1, int o2, int o3, int e, float[] alpha, int j, float[] p,
            int p0, int pH, int pI, int tn, float[] vt, int[] vRow) {
        float al0 = alpha[j];
        float al1 = alpha[j + 1];
        float al2 = alpha[j + 2];
        float al3 = alpha[j + 3];
        int p1 = p0 + pH;
        int p2 = p1 + pH;
        int p3 = p2 + pH;
        FloatVector a00 = FloatVector.fromArray(SP, out, o0 + e).mul(al0);
        FloatVector a01 = FloatVector.fromArray(SP, out, o0 + e + L).mul(al0);
        FloatVector a02 = FloatVector.fromArray(SP, out, o0 + e + 2 * L).mul(al0);
        FloatVector a03 = FloatVector.fromArray(SP, out, o0 + e + 3 * L).mul(al0);
        FloatVector a10 = FloatVector.fromArray(SP, out, o1 + e).mul(al1);
        FloatVector a11 = FloatVector.fromArray(SP, out, o1 + e + L).mul(al1);
        FloatVector a12 = FloatVector.fromArray(SP, out, o1 + e + 2 * L).mul(al1);
        FloatVector a13 = FloatVector.fromArray(SP, out, o1 + e + 3 * L).mul(al1);
        FloatVector a20 = FloatVector.fromArray(SP, out, o2 + e).mul(al2);
        FloatVector a21 = FloatVector.fromArray(SP, out, o2 + e + L).mul(al2);
        FloatVector a22 = FloatVector.fromArray(SP, out, o2 + e + 2 * L).mul(al2);
        FloatVector a23 = FloatVector.fromArray(SP, out, o2 + e + 3 * L).mul(al2);
        FloatVector a30 = FloatVector.fromArray(SP, out, o3 + e).mul(al3);
        FloatVector a31 = FloatVector.fromArray(SP, out, o3 + e + L).mul(al3);
        FloatVector a32 = FloatVector.fromArray(SP, out, o3 + e + 2 * L).mul(al3);
        FloatVector a33 = FloatVector.fromArray(SP, out, o3 + e + 3 * L).mul(al3);
        for (int i = 0, pi = 0; i < tn; i++, pi += pI) {
            int vo = vRow[i] + e;
            FloatVector v0 = FloatVector.fromArray(SP, vt, vo);
            FloatVector v1 = FloatVector.fromArray(SP, vt, vo + L);
            FloatVector v2 = FloatVector.fromArray(SP, vt, vo + 2 * L);
            FloatVector v3 = FloatVector.fromArray(SP, vt, vo + 3 * L);
            FloatVector x0 = FloatVector.broadcast(SP, p[p0 + pi]);
            FloatVector x1 = FloatVector.broadcast(SP, p[p1 + pi]);
            FloatVector x2 = FloatVector.broadcast(SP, p[p2 + pi]);
            FloatVector x3 = FloatVector.broadcast(SP, p[p3 + pi]);
            a00 = x0.fma(v0, a00);
            a01 = x0.fma(v1, a01);
            a02 = x0.fma(v2, a02);
            a03 = x0.fma(v3, a03);
            a10 = x1.fma(v0, a10);
            a11 = x1.fma(v1, a11);
            a12 = x1.fma(v2, a12);
            a13 = x1.fma(v3, a13);
            a20 = x2.fma(v0, a20);
            a21 = x2.fma(v1, a21);
            a22 = x2.fma(v2, a22);
            a23 = x2.fma(v3, a23);
            a30 = x3.fma(v0, a30);
            a31 = x3.fma(v1, a31);
            a32 = x3.fma(v2, a32);
            a33 = x3.fma(v3, a33);
        }
        a00.intoArray(out, o0 + e);
        a01.intoArray(out, o0 + e + L);
        a02.intoArray(out, o0 + e + 2 * L);
        a03.intoArray(out, o0 + e + 3 * L);
        a10.intoArray(out, o1 + e);
        a11.intoArray(out, o1 + e + L);
        a12.intoArray(out, o1 + e + 2 * L);
        a13.intoArray(out, o1 + e + 3 * L);
        a20.intoArray(out, o2 + e);
        a21.intoArray(out, o2 + e + L);
        a22.intoArray(out, o2 + e + 2 * L);
        a23.intoArray(out, o2 + e + 3 * L);
        a30.intoArray(out, o3 + e);
        a31.intoArray(out, o3 + e + L);
        a32.intoArray(out, o3 + e + 2 * L);
        a33.intoArray(out, o3 + e + 3 * L);
    }

    /** {@link #pv4x4} for 6 heads, rows {@code oH} apart in out. */
    private static void pv6x4(float[] out, int o0, int oH, int e, float[] alpha, int j, float[] p, int p0, int pH,
            int pI, int tn, float[] vt, int[] vRow) {
        int o1 = o0 + oH;
        int o2 = o1 + oH;
        int o3 = o2 + oH;
        int o4 = o3 + oH;
        int o5 = o4 + oH;
        float al0 = alpha[j];
        float al1 = alpha[j + 1];
        float al2 = alpha[j + 2];
        float al3 = alpha[j + 3];
        float al4 = alpha[j + 4];
        float al5 = alpha[j + 5];
        int p1 = p0 + pH;
        int p2 = p1 + pH;
        int p3 = p2 + pH;
        int p4 = p3 + pH;
        int p5 = p4 + pH;
        FloatVector a00 = FloatVector.fromArray(SP, out, o0 + e).mul(al0);
        FloatVector a01 = FloatVector.fromArray(SP, out, o0 + e + L).mul(al0);
        FloatVector a02 = FloatVector.fromArray(SP, out, o0 + e + 2 * L).mul(al0);
        FloatVector a03 = FloatVector.fromArray(SP, out, o0 + e + 3 * L).mul(al0);
        FloatVector a10 = FloatVector.fromArray(SP, out, o1 + e).mul(al1);
        FloatVector a11 = FloatVector.fromArray(SP, out, o1 + e + L).mul(al1);
        FloatVector a12 = FloatVector.fromArray(SP, out, o1 + e + 2 * L).mul(al1);
        FloatVector a13 = FloatVector.fromArray(SP, out, o1 + e + 3 * L).mul(al1);
        FloatVector a20 = FloatVector.fromArray(SP, out, o2 + e).mul(al2);
        FloatVector a21 = FloatVector.fromArray(SP, out, o2 + e + L).mul(al2);
        FloatVector a22 = FloatVector.fromArray(SP, out, o2 + e + 2 * L).mul(al2);
        FloatVector a23 = FloatVector.fromArray(SP, out, o2 + e + 3 * L).mul(al2);
        FloatVector a30 = FloatVector.fromArray(SP, out, o3 + e).mul(al3);
        FloatVector a31 = FloatVector.fromArray(SP, out, o3 + e + L).mul(al3);
        FloatVector a32 = FloatVector.fromArray(SP, out, o3 + e + 2 * L).mul(al3);
        FloatVector a33 = FloatVector.fromArray(SP, out, o3 + e + 3 * L).mul(al3);
        FloatVector a40 = FloatVector.fromArray(SP, out, o4 + e).mul(al4);
        FloatVector a41 = FloatVector.fromArray(SP, out, o4 + e + L).mul(al4);
        FloatVector a42 = FloatVector.fromArray(SP, out, o4 + e + 2 * L).mul(al4);
        FloatVector a43 = FloatVector.fromArray(SP, out, o4 + e + 3 * L).mul(al4);
        FloatVector a50 = FloatVector.fromArray(SP, out, o5 + e).mul(al5);
        FloatVector a51 = FloatVector.fromArray(SP, out, o5 + e + L).mul(al5);
        FloatVector a52 = FloatVector.fromArray(SP, out, o5 + e + 2 * L).mul(al5);
        FloatVector a53 = FloatVector.fromArray(SP, out, o5 + e + 3 * L).mul(al5);
        for (int i = 0, pi = 0; i < tn; i++, pi += pI) {
            int vo = vRow[i] + e;
            FloatVector v0 = FloatVector.fromArray(SP, vt, vo);
            FloatVector v1 = FloatVector.fromArray(SP, vt, vo + L);
            FloatVector v2 = FloatVector.fromArray(SP, vt, vo + 2 * L);
            FloatVector v3 = FloatVector.fromArray(SP, vt, vo + 3 * L);
            FloatVector x0 = FloatVector.broadcast(SP, p[p0 + pi]);
            a00 = x0.fma(v0, a00);
            a01 = x0.fma(v1, a01);
            a02 = x0.fma(v2, a02);
            a03 = x0.fma(v3, a03);
            FloatVector x1 = FloatVector.broadcast(SP, p[p1 + pi]);
            a10 = x1.fma(v0, a10);
            a11 = x1.fma(v1, a11);
            a12 = x1.fma(v2, a12);
            a13 = x1.fma(v3, a13);
            FloatVector x2 = FloatVector.broadcast(SP, p[p2 + pi]);
            a20 = x2.fma(v0, a20);
            a21 = x2.fma(v1, a21);
            a22 = x2.fma(v2, a22);
            a23 = x2.fma(v3, a23);
            FloatVector x3 = FloatVector.broadcast(SP, p[p3 + pi]);
            a30 = x3.fma(v0, a30);
            a31 = x3.fma(v1, a31);
            a32 = x3.fma(v2, a32);
            a33 = x3.fma(v3, a33);
            FloatVector x4 = FloatVector.broadcast(SP, p[p4 + pi]);
            a40 = x4.fma(v0, a40);
            a41 = x4.fma(v1, a41);
            a42 = x4.fma(v2, a42);
            a43 = x4.fma(v3, a43);
            FloatVector x5 = FloatVector.broadcast(SP, p[p5 + pi]);
            a50 = x5.fma(v0, a50);
            a51 = x5.fma(v1, a51);
            a52 = x5.fma(v2, a52);
            a53 = x5.fma(v3, a53);
        }
        a00.intoArray(out, o0 + e);
        a01.intoArray(out, o0 + e + L);
        a02.intoArray(out, o0 + e + 2 * L);
        a03.intoArray(out, o0 + e + 3 * L);
        a10.intoArray(out, o1 + e);
        a11.intoArray(out, o1 + e + L);
        a12.intoArray(out, o1 + e + 2 * L);
        a13.intoArray(out, o1 + e + 3 * L);
        a20.intoArray(out, o2 + e);
        a21.intoArray(out, o2 + e + L);
        a22.intoArray(out, o2 + e + 2 * L);
        a23.intoArray(out, o2 + e + 3 * L);
        a30.intoArray(out, o3 + e);
        a31.intoArray(out, o3 + e + L);
        a32.intoArray(out, o3 + e + 2 * L);
        a33.intoArray(out, o3 + e + 3 * L);
        a40.intoArray(out, o4 + e);
        a41.intoArray(out, o4 + e + L);
        a42.intoArray(out, o4 + e + 2 * L);
        a43.intoArray(out, o4 + e + 3 * L);
        a50.intoArray(out, o5 + e);
        a51.intoArray(out, o5 + e + L);
        a52.intoArray(out, o5 + e + 2 * L);
        a53.intoArray(out, o5 + e + 3 * L);
    }

    private static void pv1x4(float[] out, int o0, int e, float al0, float[] p, int p0, int pI, int tn, float[] vt,
            int[] vRow) {
        FloatVector a0 = FloatVector.fromArray(SP, out, o0 + e).mul(al0);
        FloatVector a1 = FloatVector.fromArray(SP, out, o0 + e + L).mul(al0);
        FloatVector a2 = FloatVector.fromArray(SP, out, o0 + e + 2 * L).mul(al0);
        FloatVector a3 = FloatVector.fromArray(SP, out, o0 + e + 3 * L).mul(al0);
        for (int i = 0; i < tn; i++) {
            int vo = vRow[i] + e;
            FloatVector x = FloatVector.broadcast(SP, p[p0 + i * pI]);
            a0 = x.fma(FloatVector.fromArray(SP, vt, vo), a0);
            a1 = x.fma(FloatVector.fromArray(SP, vt, vo + L), a1);
            a2 = x.fma(FloatVector.fromArray(SP, vt, vo + 2 * L), a2);
            a3 = x.fma(FloatVector.fromArray(SP, vt, vo + 3 * L), a3);
        }
        a0.intoArray(out, o0 + e);
        a1.intoArray(out, o0 + e + L);
        a2.intoArray(out, o0 + e + 2 * L);
        a3.intoArray(out, o0 + e + 3 * L);
    }

    private static void pv1x1(float[] out, int o0, int e, float al0, float[] p, int p0, int pI, int tn, float[] vt,
            int[] vRow) {
        FloatVector a0 = FloatVector.fromArray(SP, out, o0 + e).mul(al0);
        for (int i = 0; i < tn; i++) {
            a0 = FloatVector.broadcast(SP, p[p0 + i * pI]).fma(FloatVector.fromArray(SP, vt, vRow[i] + e), a0);
        }
        a0.intoArray(out, o0 + e);
    }

    /**
     * {@code out[row] /= (l + exp(sink - m))}, or zeros where {@code m} is -inf; the unfused form's rows are already
     * normalised.
     */
    private static void finish(UnionCall c, int b, int r, int h0, int hc, float[] m, float[] l, int mo) {
        int d = c.headDim();
        float[] out = c.out();
        for (int j = 0; j < hc; j++) {
            int o = c.outOffset(b, h0 + j, r);
            if (m[mo + j] == NEG_INF) {
                Arrays.fill(out, o, o + d, 0f);
                continue;
            }
            if (c.form().twoPass()) {
                continue;
            }
            float denom = l[mo + j] + LaneMath.exp(c.sink(b, h0 + j) - m[mo + j]);
            int e = 0;
            for (; e + L <= d; e += L) {
                FloatVector.fromArray(SP, out, o + e).div(denom).intoArray(out, o + e);
            }
            for (; e < d; e++) {
                out[o + e] = out[o + e] / denom;
            }
        }
    }

    private static final FloatVector MINUS_LN2_HI = FloatVector.broadcast(SP, -LaneMath.LN2_HI);
    private static final FloatVector MINUS_LN2_LO = FloatVector.broadcast(SP, -LaneMath.LN2_LO);
    private static final FloatVector P0 = FloatVector.broadcast(SP, LaneMath.P0);
    private static final FloatVector P1 = FloatVector.broadcast(SP, LaneMath.P1);
    private static final FloatVector P2 = FloatVector.broadcast(SP, LaneMath.P2);
    private static final FloatVector P3 = FloatVector.broadcast(SP, LaneMath.P3);
    private static final FloatVector P4 = FloatVector.broadcast(SP, LaneMath.P4);
    private static final FloatVector P5 = FloatVector.broadcast(SP, LaneMath.P5);
    private static final int ROUND_BITS = Float.floatToRawIntBits(LaneMath.ROUND);

    /** {@link LaneMath#exp} of every element as the kernel computes it (for the engine test). */
    static void exp(float[] x, float[] out) {
        float[] row = Arrays.copyOf(x, x.length + L);
        expRow(row, 0, x.length, 0f);
        System.arraycopy(row, 0, out, 0, x.length);
        // And through the heads-in-lanes loop: one lane group, running max 0, every element one ordinal.
        int n = vectors(x.length) * L;
        float[] heads = Arrays.copyOf(x, n);
        float[] m = new float[n];
        float[] l = new float[n];
        for (int at = 0; at < n; at += L) {
            expHeads(heads, at, 0, 1, m, l);
        }
        for (int i = 0; i < x.length; i++) {
            if (Float.floatToIntBits(heads[i]) != Float.floatToIntBits(out[i])) {
                out[i] = Float.NaN; // the two loops disagree: the test reports it
            }
        }
    }
}
