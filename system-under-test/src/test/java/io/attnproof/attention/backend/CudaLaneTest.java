package io.attnproof.attention.backend;

import org.junit.jupiter.api.Tag;

/**
 * The claims on the cuda lane (an NVIDIA GPU through JCuda): skipped with the probe's reason where no device is
 * present, failed instead under -Pcuda.
 */
@Tag("cuda")
class CudaLaneTest extends LaneClaims {
    @Override
    Backend lane() {
        return Backend.cuda();
    }
}
