package io.attnproof.attention.dispatch;

import io.attnproof.attention.backend.Backend;

/** Claims B1 to B7 on the cpu lane. */
class CpuDispatchTest extends DispatchClaims {
    @Override
    Backend lane() {
        return Backend.cpu();
    }
}
