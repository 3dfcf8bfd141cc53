package io.attnproof.attention.backend;

import io.attnproof.attention.tensor.Device;

/**
 * The Metal kernel source on an Apple GPU: Metal.framework through FFM (objc_msgSend), the MSL compiled at run
 * time, shared-storage buffers. Its probe reports "not macOS" elsewhere.
 */
public final class Metal extends NativeBackend {
    static final Metal INSTANCE = new Metal();

    private Metal() {
        super(new NativeLane("metal", Device.metal(0), NativeSinks.Dialect.METAL, MetalRunner::probe));
    }
}
