package io.attnproof.attention.engine;

/**
 * The scalar arithmetic the union kernel is defined by, lane for lane: {@link VectorLanes} performs exactly these
 * IEEE operations (fused multiply-adds, single-rounding adds and multiplies, the same exponential) on each vector
 * lane, so the vector and the scalar engines agree bit for bit.
 */
final class LaneMath {
    /** Admitted keys per online-softmax tile: ordinals {@code [t * TILE, (t + 1) * TILE)} of a row's admitted keys. */
    static final int TILE = io.attnproof.attention.dispatch.DispatchRegistry.UNION_TILE;

    // exp(x) = 2^n * e^r, n = rint(x log2 e), r = x - n ln 2 (two-part ln 2), e^r by a degree-7 polynomial (Cephes).
    static final float LOG2E = 1.44269504088896341f;
    static final float ROUND = 12582912f; // 1.5 * 2^23: (t + ROUND) - ROUND is rint(t) for |t| < 2^22
    static final float LN2_HI = 0.693359375f;
    static final float LN2_LO = -2.12194440e-4f;
    static final float P0 = 1.9875691500e-4f;
    static final float P1 = 1.3981999507e-3f;
    static final float P2 = 8.3334519073e-3f;
    static final float P3 = 4.1665795894e-2f;
    static final float P4 = 1.6666665459e-1f;
    static final float P5 = 5.0000001201e-1f;
    /** Below this the result would leave the normal range: the kernel flushes it to 0 (the -inf of a masked key too). */
    static final float EXP_LO = -87.33654f;

    private LaneMath() {
    }

    /**
     * {@code e^x} in f32 for {@code x <= 0} (every argument the kernel forms is a logit minus a running max at
     * least as large): within about 1 ulp; 0 below {@link #EXP_LO} and for -inf; NaN for NaN; exactly 1 at 0.
     */
    static float exp(float x) {
        if (!(x >= EXP_LO)) {
            return x != x ? x : 0f;
        }
        float n = (x * LOG2E + ROUND) - ROUND;
        float r = Math.fma(n, -LN2_HI, x);
        r = Math.fma(n, -LN2_LO, r);
        float y = Math.fma(P0, r, P1);
        y = Math.fma(y, r, P2);
        y = Math.fma(y, r, P3);
        y = Math.fma(y, r, P4);
        y = Math.fma(y, r, P5);
        y = Math.fma(y, r * r, r);
        y = y + 1f;
        return y * Float.intBitsToFloat(((int) n + 127) << 23);
    }
}
