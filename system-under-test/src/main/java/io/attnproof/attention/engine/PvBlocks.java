package io.attnproof.attention.engine;

import static io.attnproof.attention.engine.VectorLanes.*;
import static io.attnproof.attention.engine.KeysInLanes.*;
import static io.attnproof.attention.engine.VectorExp.*;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;

/**
 * PV and the final division, shared by both layouts: register blocks of heads x vectors over D.
 */
final class PvBlocks {
    private PvBlocks() {
    }


    /**
     * {@code out[row h] = out[row h] * alpha_h}, then {@code += p(h, i) * v_i} for every ordinal of the tile in order,
     * lanes over D, {@code p(h0 + j, i) = p[j * pH + i * pI]}, {@code v_i[e] = vt[vRow[i] + e]}. Register blocks of
     * 6 or 4 heads x 4 vectors; the D blocks are the outer loop, so a block's slice of the tile's V rows stays in L1
     * while every head block passes over it.
     */
    static void pv(UnionCall c, int b, int r, int h0, int hc, float[] p, int pH, int pI, int tn,
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

    static void pv4x4(float[] out, int o0, int o1, int o2, int o3, int e, float[] alpha, int j, float[] p,
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
    static void pv6x4(float[] out, int o0, int oH, int e, float[] alpha, int j, float[] p, int p0, int pH,
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

    static void pv1x4(float[] out, int o0, int e, float al0, float[] p, int p0, int pI, int tn, float[] vt,
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

    static void pv1x1(float[] out, int o0, int e, float al0, float[] p, int p0, int pI, int tn, float[] vt,
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
    static void finish(UnionCall c, int b, int r, int h0, int hc, float[] m, float[] l, int mo) {
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

}
