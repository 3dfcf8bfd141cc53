package io.attnproof.attention.dispatch;

/** The arm {@code sinks_attn} sends a call to; only the two fused arms apply causality inside a kernel. */
public enum SinksArm {
    /** {@code sinks_attn_cpu_varlen}: packed rows with {@code cu_seqlens}, the fused rule built as a mask per row. */
    VARLEN,
    /** {@code flash_attn_sinks}, the CUDA fused kernel (the Java fused kernel on this lane). */
    CUDA_FUSED,
    /** {@code flash_attn_sinks_metal}, the Metal fused kernel (the Java fused kernel on this lane). */
    METAL_FUSED,
    /** {@code sinks_attn_cpu}: scores + additive masks + softmax with sinks + PV, on any device. */
    UNFUSED;

    /** Whether this arm is a fused kernel, which refuses every caller mask. */
    public boolean fused() {
        return this == CUDA_FUSED || this == METAL_FUSED;
    }
}
