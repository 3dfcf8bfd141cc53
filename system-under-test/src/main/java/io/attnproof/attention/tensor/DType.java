package io.attnproof.attention.tensor;

/** Element type; storage is float, and every write to a 16-bit type rounds to nearest-even. */
public enum DType {
    F32,
    F16,
    BF16;

    /** The value as stored by this type (identity for F32). */
    public float round(float x) {
        return switch (this) {
            case F32 -> x;
            case F16 -> Float.float16ToFloat(Float.floatToFloat16(x));
            case BF16 -> roundBf16(x);
        };
    }

    private static float roundBf16(float x) {
        if (Float.isNaN(x)) {
            return x;
        }
        int bits = Float.floatToRawIntBits(x);
        int halfUlp = 0x7FFF + ((bits >>> 16) & 1);
        return Float.intBitsToFloat((bits + halfUlp) & 0xFFFF0000);
    }
}
