package io.attnproof.attention.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** The registered thresholds hold docs/system.md §8's values (a declare() that returned anything else changes them). */
class DispatchRegistryValuesTest {

    @Test
    void theThresholdsAreTheSpecifiedValues() {
        assertEquals(Set.of(64, 80, 96, 112, 128, 192, 256), DispatchRegistry.FUSED_HEAD_DIMS);
        assertEquals(Set.of(64, 80, 96, 128, 256), DispatchRegistry.METAL_DECODE_HEAD_DIMS);
        assertEquals(512, DispatchRegistry.FLASH_512_HEAD_DIM);
        assertEquals(2, DispatchRegistry.VARLEN_MIN_BATCH);   // varlen only when B > 1
        assertEquals(1, DispatchRegistry.DECODE_MAX_Q);       // a single-query call: q_len == 1
        assertEquals(1024, DispatchRegistry.SPLIT_K_MIN_KEYS); // split-K for kv_len >= 1024
        assertEquals(7, DispatchRegistry.declare(7));
    }
}
