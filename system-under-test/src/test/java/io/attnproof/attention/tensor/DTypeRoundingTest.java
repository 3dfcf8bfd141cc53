package io.attnproof.attention.tensor;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.oracles.Precision;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The system's F16 and BF16 rounding on write ({@link DType#round}: bit manipulation and the JDK's float16
 * conversion) held bit for bit against the oracle's independent formulation ({@link Precision#round}: significand
 * bits, smallest normal exponent, largest finite value, {@link Math#rint}) on every boundary class: every 16-bit
 * value, every exact midpoint between neighbours (ties to even) and one float ulp either side, subnormals, the
 * overflow threshold, infinities, NaN, and random floats.
 */
@Claim("U5")
class DTypeRoundingTest {
    static final long SEED = 1616;

    /** The 16-bit pattern {@code h} as a float, from the format's encoding. */
    private static float decode(DType dtype, int h) {
        return dtype == DType.BF16 ? Float.intBitsToFloat(h << 16) : Float.float16ToFloat((short) h);
    }

    /** The format's largest finite value and the power of two past it (the "next value" overflow rounds to). */
    private static double[] top(DType dtype) {
        return dtype == DType.BF16 ? new double[] {0x1.FEp127, 0x1p128} : new double[] {65504.0, 65536.0};
    }

    /** Every 16-bit value, each midpoint to its neighbour of larger magnitude, one float ulp either side, random floats. */
    private static List<Float> inputs(DType dtype) {
        List<Float> out = new ArrayList<>();
        for (int h = 0; h < 0x10000; h++) {
            float v = decode(dtype, h);
            out.add(v);
            if (!Float.isFinite(v)) {
                continue;
            }
            boolean lastOfSign = (h & 0x7FFF) == 0x7FFF;
            double next = lastOfSign ? Double.NaN : decode(dtype, h + 1);
            if (Double.isInfinite(next)) {
                next = Math.copySign(top(dtype)[1], v); // the midpoint to infinity is the overflow threshold
            }
            if (Double.isNaN(next)) {
                continue;
            }
            float mid = (float) ((v + next) / 2.0); // exact: one significand bit more than the 16-bit format
            out.add(mid);
            out.add(Math.nextUp(mid));
            out.add(Math.nextDown(mid));
        }
        SplittableRandom rng = new SplittableRandom(SEED);
        for (int i = 0; i < 200_000; i++) {
            out.add(Float.intBitsToFloat(rng.nextInt()));
        }
        return out;
    }

    @Test
    void f16AndBf16RoundingMatchAnIndependentFormulationBitForBit(Evidence ev) {
        ev.seed(SEED);
        for (DType dtype : new DType[] {DType.F16, DType.BF16}) {
            Precision p = dtype == DType.F16 ? Precision.F16 : Precision.BF16;
            String tag = dtype.name().toLowerCase(Locale.ROOT);
            double minNormal = dtype == DType.BF16 ? 0x1p-126 : 0x1p-14;
            List<Float> in = inputs(dtype);
            long differing = 0;
            long ties = 0;
            long subnormal = 0;
            long overflow = 0;
            long nan = 0;
            long tiesAwayDisagree = 0;
            for (float x : in) {
                float system = dtype.round(x);
                double reference = p.round(x);
                boolean same = Float.isNaN(system) ? Double.isNaN(reference)
                        : Float.floatToRawIntBits(system) == Float.floatToRawIntBits((float) reference);
                if (!same && ++differing <= 3) {
                    System.err.printf(Locale.ROOT, "%s: round(%s = 0x%08x): system %s, independent %s%n", dtype, x,
                            Float.floatToRawIntBits(x), system, reference);
                }
                if (Float.isNaN(x)) {
                    nan++;
                    continue;
                }
                if (Float.isInfinite(x)) {
                    continue;
                }
                double lo = p.round(Math.nextDown((double) x));
                double hi = p.round(Math.nextUp((double) x));
                if (lo != hi && (lo + hi) / 2.0 == x) { // an exact midpoint: a tie
                    ties++;
                    double away = Math.abs(lo) > Math.abs(hi) ? lo : hi;
                    tiesAwayDisagree += away != reference ? 1 : 0; // negative control: ties away from zero
                }
                subnormal += x != 0 && Math.abs(x) < minNormal ? 1 : 0;
                overflow += Double.isInfinite(reference) ? 1 : 0;
            }
            ev.degeneracy(tag + "_ties_checked", ties, Comparison.GE, 1000, "exact midpoints must be exercised");
            ev.degeneracy(tag + "_subnormals_checked", subnormal, Comparison.GE, 100, "subnormal inputs");
            ev.degeneracy(tag + "_overflows_to_infinity_checked", overflow, Comparison.GE, 1, "the overflow threshold");
            ev.degeneracy(tag + "_nans_checked", nan, Comparison.GE, 1, "NaN inputs");
            ev.info(tag + "_inputs_checked", in.size());
            ev.checkBitIdentical(tag + "_rounding_bits_differing_from_the_independent_form", differing);
            ev.controlAtLeast(tag + "_ties_where_ties_away_from_zero_disagrees", tiesAwayDisagree, 1);
        }
    }
}
