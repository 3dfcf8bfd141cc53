package io.attnproof.oracles;

/** A floating-point format the oracle can round to; {@link #round} is idempotent and F64 is the identity. */
public enum Precision {
    F64(0x1p-53),
    F32(0x1p-24),
    F16(0x1p-11),
    BF16(0x1p-8);

    private final double unitRoundoff;

    Precision(double unitRoundoff) {
        this.unitRoundoff = unitRoundoff;
    }

    /** Half a unit in the last place at 1.0: the relative error of one rounding to nearest. */
    public double unitRoundoff() {
        return unitRoundoff;
    }

    /**
     * The value nearest to {@code x} in this format (ties to even); infinities and NaN pass through, values past the
     * largest finite one by half a unit or more become infinities. F16 and BF16 are formulated from their definition
     * (p significand bits, smallest normal exponent, largest finite value) with {@link Math#rint}, not from bit
     * patterns, so that the system's bit-level rounding is held against an independent form.
     */
    public double round(double x) {
        return switch (this) {
            case F64 -> x;
            case F32 -> (float) x;
            case F16 -> roundTo(x, 11, -14, 65504.0);
            case BF16 -> roundTo(x, 8, -126, 0x1.FEp127);
        };
    }

    /** Rounds to a binary format with {@code p} significand bits, normal exponents from {@code emin}, largest finite {@code max}. */
    private static double roundTo(double x, int p, int emin, double max) {
        if (Double.isNaN(x) || Double.isInfinite(x) || x == 0) {
            return x;
        }
        int e = Math.max(Math.getExponent(x), emin); // below emin the spacing stays that of the subnormals
        double quantum = Math.scalb(1.0, e - (p - 1));
        double r = Math.rint(x / quantum) * quantum;  // exact: scaling by a power of two; rint ties to even
        if (Math.abs(r) > max) {
            return Math.copySign(Double.POSITIVE_INFINITY, x);
        }
        return r == 0 ? Math.copySign(0.0, x) : r;
    }
}
