package io.attnproof.attention.backend;

/**
 * The claims on the cpu lane through the {@link Backend} abstraction (the Java kernels).
 */
class CpuLaneTest extends LaneClaims {
    @Override
    Backend lane() {
        return Backend.cpu();
    }
}
