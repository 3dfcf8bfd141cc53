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

    /** The value nearest to {@code x} in this format (ties to even); infinities and NaN pass through. */
    public double round(double x) {
        return switch (this) {
            case F64 -> x;
            case F32 -> (float) x;
            case F16 -> Float.float16ToFloat(Float.floatToFloat16((float) x));
            case BF16 -> bf16((float) x);
        };
    }

    // Round-to-nearest-even on the top 16 bits of the binary32 pattern.
    private static double bf16(float f) {
        if (Float.isNaN(f)) {
            return f;
        }
        int bits = Float.floatToRawIntBits(f);
        int lsb = (bits >>> 16) & 1;
        int rounded = (bits + 0x7FFF + lsb) & 0xFFFF0000;
        return Float.intBitsToFloat(rounded);
    }
}
