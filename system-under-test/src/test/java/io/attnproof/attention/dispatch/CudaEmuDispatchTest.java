package io.attnproof.attention.dispatch;

import io.attnproof.attention.backend.Backend;

/** Claims B1 to B7 on the cudaEmu lane. */
class CudaEmuDispatchTest extends DispatchClaims {
    @Override
    Backend lane() {
        return Backend.cudaEmu();
    }
}
