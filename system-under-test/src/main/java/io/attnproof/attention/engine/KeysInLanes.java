package io.attnproof.attention.engine;

import static io.attnproof.attention.engine.VectorLanes.*;
import static io.attnproof.attention.engine.PvBlocks.*;
import static io.attnproof.attention.engine.VectorExp.*;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/**
 * Keys in lanes (prefill: many positions share the keys): the union keys of a batch entry packed once per call to
 * {@code [D][n]}, each head's q element broadcast against 16 consecutive columns.
 */
final class KeysInLanes {
    private KeysInLanes() {
    }


    /**
     * Packs columns {@code [from, to)} of batch entry {@code b} once per call (GEMM-style packing, read by every query
     * row of the entry): {@code kt[kb + e * nP + c] = K[b, column c, e]} and {@code vp[vb + c * vStride(D) + e] =
     * V[b, column c, e]}. Columns {@code [n, nP)} of kt are never admitted: a vector load may read them, but no lane
     * of theirs is kept.
     */
    static void pack(UnionCall c, int b, float[] kt, int kb, int nP, float[] vp, int vb, int from, int to,
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
    static void keysInLanes(UnionCall c, int b, int r0, int r1, int h0, int h1, float[] kt, int kb, int nP,
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
    static boolean block(Admission.Row row, int t0, int i, int tn) {
        int n = Math.min(L4, tn - i);
        return n > L && row.cols[t0 + i + n - 1] == row.cols[t0 + i] + n - 1;
    }

    /** Length of the run of consecutive columns at ordinal {@code i}, capped at {@code max}. */
    static int run(Admission.Row row, int i, int max) {
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
    static void scoresKeys4(float[] q, int q0, int d, Admission.Row row, int t0, int tn, float[] kt, int kb,
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
    static void qk4x4Keys(float[] q, int q0, int d, float[] kt, int ko, int nP, int e0, int e1, float[] out,
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
    static void qk4x1Keys(float[] q, int q0, int d, float[] kt, int ko, int nP, int e0, int e1, float[] out,
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
    static void scoresKeys4Whole(float[] q, int q0, int d, Admission.Row row, int t0, int tn, float[] kt,
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
    static void foldMax(float[] out, int o, int stride, int n, float[] mx) {
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
    static void qk4x4Whole(float[] q, int q0, int d, float[] kt, int ko, int nP, float[] out, int o,
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
    static void qk4x1Whole(float[] q, int q0, int d, float[] kt, int ko, int nP, float[] out, int o,
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
    static void scoresKeys1(int d, float[] q, int q0, Admission.Row row, int t0, int tn, float[] kt, int kb,
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
    static float logitsRow(float[] out, int at, int tn, float scale, Admission.Row row, int t0) {
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
    static void softmaxKeys(Scratch s, int mo, int hc, int stride, int tn, boolean twoPass) {
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

}
