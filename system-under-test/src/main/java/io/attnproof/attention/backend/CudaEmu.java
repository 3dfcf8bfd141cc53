package io.attnproof.attention.backend;

import io.attnproof.attention.tensor.Device;

/**
 * The CUDA kernel source (native/cuda/sinks_attn.cu) built as host C++ through native/emu/cuda_emu.h and run with
 * emulated blocks and threads, through the Foreign Function \&amp; Memory API. Runs wherever gcc does.
 */
public final class CudaEmu extends NativeBackend {
    static final CudaEmu INSTANCE = new CudaEmu();

    private CudaEmu() {
        super(new NativeLane("cuda-emu", Device.cuda(0), NativeSinks.Dialect.CUDA, () -> EmuRunner.load("cuda-emu", NativeFiles.library(NativeFiles.CUDA_EMU_LIBRARY))));
    }
}
