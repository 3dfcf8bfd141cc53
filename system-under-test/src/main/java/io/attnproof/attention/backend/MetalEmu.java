package io.attnproof.attention.backend;

import io.attnproof.attention.tensor.Device;

/**
 * The Metal kernel source (native/metal/sinks_attn.metal) built as host C++ through the stub
 * native/emu/metal/metal_stdlib and run with emulated threadgroups, through the Foreign Function \&amp; Memory API.
 */
public final class MetalEmu extends NativeBackend {
    static final MetalEmu INSTANCE = new MetalEmu();

    private MetalEmu() {
        super(new NativeLane("metal-emu", Device.metal(0), NativeSinks.Dialect.METAL, () -> EmuRunner.load("metal-emu", NativeFiles.library(NativeFiles.METAL_EMU_LIBRARY))));
    }
}
