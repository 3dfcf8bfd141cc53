package io.attnproof.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Require's four checks: what they return when the rule holds, and the "param = value: must rule" text. */
class RequireContractTest {

    @Test
    void checksReturnTheirValueAndNameParameterValueAndRule() {
        assertEquals(0, Require.nonNegative("n", 0));
        assertEquals(5, Require.nonNegative("n", 5));
        Object o = new Object();
        assertSame(o, Require.present("o", o));
        Require.that(true, "x", 1, "hold");
        assertEquals("n = -1: must be >= 0",
                assertThrows(IllegalArgumentException.class, () -> Require.nonNegative("n", -1)).getMessage());
        assertEquals("o = null: must be present",
                assertThrows(IllegalArgumentException.class, () -> Require.present("o", null)).getMessage());
        assertEquals("xs = [1, 2]: must be short",
                assertThrows(IllegalArgumentException.class, () -> Require.that(false, "xs", new int[] {1, 2}, "be short"))
                        .getMessage());
        // the longest array: 2^31 - 9 elements accepted (and returned as an int), one more refused by name
        assertEquals(Integer.MAX_VALUE - 8, Require.arrayLength("n", Integer.MAX_VALUE - 8L, "fit"));
        assertEquals(0, Require.arrayLength("n", 0, "fit"));
        assertEquals("n = 2147483640: must fit one array",
                assertThrows(IllegalArgumentException.class, () -> Require.arrayLength("n", Integer.MAX_VALUE - 7L,
                        "fit one array")).getMessage());
        assertEquals("ys = [3]: must be short",
                assertThrows(IllegalArgumentException.class, () -> Require.that(false, "ys", new long[] {3}, "be short"))
                        .getMessage());
    }
}
