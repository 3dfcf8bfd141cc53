package io.attnproof.attention.backend;

import io.attnproof.attention.tensor.Device;

/**
 * The CUDA kernel source (native/cuda/sinks_attn.cu, standard CUDA C++) rewritten by the emulator's front end
 * (native/emu/frontend/cuda2emu.py), built as host C++ and run with
 * emulated blocks and threads, through the Foreign Function \&amp; Memory API. Runs wherever gcc does. Two builds:
 * {@code cuda-emu} with FMA contraction off (every {@code a * b + c} rounded twice), and {@code cuda-emu-fma} with
 * {@code -ffp-contract=fast} (fused multiply-adds, as nvcc compiles by default), built where the CPU has FMA.
 */
public final class CudaEmu extends NativeBackend {
    static final CudaEmu INSTANCE = new CudaEmu("cuda-emu", NativeFiles.CUDA_EMU_LIBRARY);
    static final CudaEmu FMA = new CudaEmu("cuda-emu-fma", NativeFiles.CUDA_EMU_FMA_LIBRARY);

    private CudaEmu(String lane, String library) {
        super(new NativeLane(lane, Device.cuda(0), NativeSinks.Dialect.CUDA,
                () -> EmuRunner.load(lane, NativeFiles.library(library))));
    }

    /** Whether this is the FMA-contraction build. */
    public boolean contracted() {
        return this == FMA;
    }
}
