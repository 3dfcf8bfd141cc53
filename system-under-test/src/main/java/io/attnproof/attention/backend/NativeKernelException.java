package io.attnproof.attention.backend;

/**
 * A kernel launch, a module load or a device allocation failed: the message names the lane, the kernel or call,
 * and the device API's own error name (e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}, {@code MTLCommandBufferStatusError},
 * or an emulated lane's out-of-bounds fault).
 */
public final class NativeKernelException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String errorName;

    public NativeKernelException(String lane, String what, String errorName, String detail) {
        super(lane + ": " + what + " failed: " + errorName + (detail == null || detail.isBlank() ? "" : ": " + detail));
        this.errorName = errorName;
    }

    /** The device API's error name, e.g. {@code CUDA_ERROR_INVALID_PTX} or {@code EMU_OUT_OF_BOUNDS}. */
    public String errorName() {
        return errorName;
    }
}
