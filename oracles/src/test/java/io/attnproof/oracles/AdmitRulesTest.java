package io.attnproof.oracles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AdmitRulesTest {

    private static List<Long> visibleRaw(long p, int window) {
        List<Long> keys = new ArrayList<>();
        for (long j = 0; j <= p + window + 2; j++) {
            if (AdmitRules.rawAdmits(p, j, window)) {
                keys.add(j);
            }
        }
        return keys;
    }

    private static List<Long> range(long from, long toInclusive) {
        List<Long> keys = new ArrayList<>();
        for (long j = from; j <= toInclusive; j++) {
            keys.add(j);
        }
        return keys;
    }

    @Test
    void windowOneIsTheDiagonalOnly() {
        for (long p = 0; p < 10; p++) {
            assertEquals(List.of(p), visibleRaw(p, 1));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 8, 128})
    void windowBoundaries(int w) {
        assertEquals(range(0, w - 1), visibleRaw(w - 1, w), "p = W-1 sees exactly keys 0..W-1");
        assertEquals(range(w + 1, 2L * w), visibleRaw(2L * w, w), "p = 2W sees exactly keys W+1..2W");
        assertEquals(range(1, w), visibleRaw(w, w), "p = W drops key 0 (not W+1 keys, the make_swa_mask bug)");
        assertFalse(AdmitRules.rawAdmits(5, 6, w), "a future key is never visible");
    }

    @ParameterizedTest
    @CsvSource({"2,4,0", "3,4,1", "6,4,1", "7,4,2", "0,4,0", "126,128,0", "127,128,1", "255,128,2", "10,0,0"})
    void compressedThresholds(long p, int ratio, long expected) {
        assertEquals(expected, AdmitRules.compressedThreshold(p, ratio));
        for (long b = 0; b < expected + 3; b++) {
            assertEquals(b < expected, AdmitRules.compressedAdmits(p, b, ratio), "p=" + p + " b=" + b);
        }
    }

    @Test
    void ratioZeroAdmitsNoBlock() {
        for (long p = 0; p < 300; p++) {
            assertFalse(AdmitRules.compressedAdmits(p, 0, 0));
        }
        assertTrue(AdmitRules.compressedAdmits(3, 0, 4));
    }

    @Test
    void badInputIsRefusedByName() {
        assertMessage(assertThrows(IllegalArgumentException.class, () -> AdmitRules.rawAdmits(3, 1, 0)), "window = 0");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> AdmitRules.compressedAdmits(3, 0, -1)), "ratio = -1");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> AdmitRules.compressedThreshold(-2, 4)), "p = -2");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> AdmitRules.rawAdmits(3, -1, 2)), "j = -1");
    }

    static void assertMessage(IllegalArgumentException e, String fragment) {
        assertTrue(e.getMessage().contains(fragment), () -> "message '" + e.getMessage() + "' lacks '" + fragment + "'");
    }
}
