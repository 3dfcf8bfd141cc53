package io.attnproof.attention.dispatch;

import io.attnproof.attention.backend.Backend;
import org.junit.jupiter.api.Tag;

/** Claims B1 to B7 on the metal lane. */
@Tag("metal")
class MetalDispatchTest extends DispatchClaims {
    @Override
    Backend lane() {
        return Backend.metal();
    }
}
