package io.attnproof.attention.dispatch;

import io.attnproof.attention.backend.Backend;
import org.junit.jupiter.api.Tag;

/** Claims B1 to B7 on the cuda lane. */
@Tag("cuda")
class CudaDispatchTest extends DispatchClaims {
    @Override
    Backend lane() {
        return Backend.cuda();
    }
}
