package io.attnproof.attention.engine;

import static io.attnproof.attention.engine.VectorLanes.*;
import static io.attnproof.attention.engine.KeysInLanes.*;
import static io.attnproof.attention.engine.PvBlocks.*;
import static io.attnproof.attention.engine.VectorExp.*;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;

/**
 * Heads in lanes (decode: few positions, many keys): the q of a row group transposed once to {@code [D][H]}, each
 * key row read once for all heads, the scores, softmax and PV vectorised over heads.
 */
final class HeadsInLanes {
    private HeadsInLanes() {
    }


    static void headsInLanes(UnionCall c, int b, int r, int h0, int h1, Scratch s) {
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
    static void scoresHeads(UnionCall c, Scratch s, Admission.Row row, int t0, int tn, int hp, int nv) {
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

    static void qk4x4(float[] qt, int hp, int qb, float[] kt, int o0, int d, int e0, int e1, float[] sc,
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

    static void qk2x4(float[] qt, int hp, int qb, float[] kt, int o0, int d, int e0, int e1, float[] sc,
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

    static void qk2x8(float[] qt, int hp, float[] kt, int o0, int d, int e0, int e1, float[] sc, int at) {
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

    static void qk1x1(float[] qt, int hp, int qb, float[] kt, int o0, int e0, int e1, float[] sc, int at) {
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
    static void softmaxHeads(Scratch s, int tn, int hp, int nv) {
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
    static void newMax(Scratch s, float[] sc, int tn, int hp, int lane) {
        FloatVector tileMax = FloatVector.broadcast(SP, NEG_INF);
        for (int i = 0; i < tn; i++) {
            tileMax = tileMax.max(FloatVector.fromArray(SP, sc, i * hp + lane));
        }
        FloatVector.fromArray(SP, s.m, lane).max(tileMax).intoArray(s.mNew, 0);
    }

    /**
     * The unfused form of {@link #softmaxHeads} over the row's one tile, lanes over heads: {@code m = max(sink,
     * max_i s_i)}, {@code l = e^(sink - m)} then {@code l + p_i} in ordinal order, and {@code p_i / l} left in
     * {@code s.s} (0 where {@code m} is -inf); {@code alpha} is 1 (0 for a dead lane), so PV accumulates the
     * normalised weights onto zeros.
     */
    static void softmaxHeadsTwoPass(Scratch s, int tn, int hp, int nv) {
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

}
