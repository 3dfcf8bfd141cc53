package io.attnproof.attention.backend;

import io.attnproof.attention.tensor.Device;

/**
 * The CUDA kernel source on an NVIDIA GPU: PTX (nvcc-built, or the checked-in fallback) loaded through the JCuda
 * driver API. Its probe checks cuInit, the device count and cuDriverGetVersion once.
 */
public final class Cuda extends NativeBackend {
    static final Cuda INSTANCE = new Cuda();

    private Cuda() {
        super(new NativeLane("cuda", Device.cuda(0), NativeSinks.Dialect.CUDA, JCudaRunner::probe));
    }
}
