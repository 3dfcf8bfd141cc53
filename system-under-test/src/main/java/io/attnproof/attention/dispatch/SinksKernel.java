package io.attnproof.attention.dispatch;

/** The fused kernels a fused arm of {@code sinks_attn} can run (docs/system.md §8: decode and prefill kernels differ). */
public enum SinksKernel {
    /** {@code flash_attn_sinks}: CUDA, every phase, head dims {@link SinksDispatch#FUSED_HEAD_DIMS} (+ 512). */
    CUDA_FLASH("flash_attn_sinks"),
    /** {@code flash_attn_sinks_metal}: the Metal prefill kernel, head dims {@link SinksDispatch#FUSED_HEAD_DIMS}. */
    METAL_PREFILL("flash_attn_sinks_metal"),
    /** {@code flash_attn_sinks_metal_decode}: the Metal single-query kernel, {@link SinksDispatch#METAL_DECODE_HEAD_DIMS}. */
    METAL_DECODE("flash_attn_sinks_metal_decode");

    private final String kernelName;

    SinksKernel(String kernelName) {
        this.kernelName = kernelName;
    }

    /** The kernel's name in the sources. */
    public String kernelName() {
        return kernelName;
    }
}
