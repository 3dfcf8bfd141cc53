package io.attnproof.attention.backend;

import org.junit.jupiter.api.Tag;

/**
 * The claims on the metal lane (an Apple GPU through Metal.framework): skipped with the probe's reason elsewhere,
 * failed instead under -Pmetal.
 */
@Tag("metal")
class MetalLaneTest extends LaneClaims {
    @Override
    Backend lane() {
        return Backend.metal();
    }
}
