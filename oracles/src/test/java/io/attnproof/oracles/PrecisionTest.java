package io.attnproof.oracles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class PrecisionTest {

    @ParameterizedTest
    @EnumSource(Precision.class)
    void roundingIsIdempotentAndWithinUnitRoundoff(Precision precision) {
        SplittableRandom rnd = new SplittableRandom(5L);
        for (int t = 0; t < 10_000; t++) {
            // normal range of every format (F16's smallest normal is 2^-14)
            double x = (rnd.nextBoolean() ? 1 : -1) * rnd.nextDouble(1, 2) * Math.pow(2, rnd.nextInt(-10, 10));
            double y = precision.round(x);
            assertEquals(y, precision.round(y), 0.0);
            assertTrue(Math.abs(y - x) <= precision.unitRoundoff() * Math.abs(x), precision + " x=" + x + " y=" + y);
        }
        assertEquals(Double.NEGATIVE_INFINITY, precision.round(Double.NEGATIVE_INFINITY));
        assertTrue(Double.isNaN(precision.round(Double.NaN)));
    }

    @ParameterizedTest
    @EnumSource(value = Precision.class, names = {"F32", "F16", "BF16"})
    void tiesGoToEven(Precision precision) {
        double u = precision.unitRoundoff();
        assertEquals(1.0, precision.round(1 + u), 0.0, "1 + u is a tie between 1 and 1 + 2u; 1 is even");
        assertEquals(1 + 4 * u, precision.round(1 + 3 * u), 0.0, "1 + 3u ties between 1 + 2u and 1 + 4u; 1 + 4u is even");
        assertEquals(1 + 2 * u, precision.round(1 + 1.5 * u), 0.0);
    }
}
