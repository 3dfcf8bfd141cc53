package io.attnproof.attention.backend;

/**
 * The claims on the metal-emu lane: native/metal/sinks_attn.metal built as host C++, on every build.
 */
class MetalEmuLaneTest extends LaneClaims {
    @Override
    Backend lane() {
        return Backend.metalEmu();
    }
}
