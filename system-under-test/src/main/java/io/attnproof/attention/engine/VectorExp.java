package io.attnproof.attention.engine;

import static io.attnproof.attention.engine.VectorLanes.*;
import static io.attnproof.attention.engine.HeadsInLanes.*;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/**
 * {@link LaneMath#exp} on vectors, lane for lane the scalar form: over a lane group of heads and along a row.
 */
final class VectorExp {
    private VectorExp() {
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

    static final FloatVector MINUS_LN2_HI = FloatVector.broadcast(SP, -LaneMath.LN2_HI);
    static final FloatVector MINUS_LN2_LO = FloatVector.broadcast(SP, -LaneMath.LN2_LO);
    static final FloatVector P0 = FloatVector.broadcast(SP, LaneMath.P0);
    static final FloatVector P1 = FloatVector.broadcast(SP, LaneMath.P1);
    static final FloatVector P2 = FloatVector.broadcast(SP, LaneMath.P2);
    static final FloatVector P3 = FloatVector.broadcast(SP, LaneMath.P3);
    static final FloatVector P4 = FloatVector.broadcast(SP, LaneMath.P4);
    static final FloatVector P5 = FloatVector.broadcast(SP, LaneMath.P5);
    static final int ROUND_BITS = Float.floatToRawIntBits(LaneMath.ROUND);

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
