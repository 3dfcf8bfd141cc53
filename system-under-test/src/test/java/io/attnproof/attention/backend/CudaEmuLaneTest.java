package io.attnproof.attention.backend;

/**
 * The claims on the cuda-emu lane: native/cuda/sinks_attn.cu built as host C++, on every build.
 */
class CudaEmuLaneTest extends LaneClaims {
    @Override
    Backend lane() {
        return Backend.cudaEmu();
    }
}
