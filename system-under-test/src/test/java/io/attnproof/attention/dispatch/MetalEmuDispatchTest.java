package io.attnproof.attention.dispatch;

import io.attnproof.attention.backend.Backend;

/** Claims B1 to B7 on the metalEmu lane. */
class MetalEmuDispatchTest extends DispatchClaims {
    @Override
    Backend lane() {
        return Backend.metalEmu();
    }
}
