package io.attnproof.attention.backend;

/** One kernel argument, in the kernel's parameter (CUDA) or binding (Metal {@code [[buffer(n)]]}) order. */
public sealed interface KernelArg {
    /** A device buffer. */
    record Buffer(DeviceBuffer buffer) implements KernelArg {
    }

    /** A null device pointer (CUDA only: the fused kernel's absent mask). */
    record Null() implements KernelArg {
    }

    /** An int by value. */
    record I32(int value) implements KernelArg {
    }

    /** A float by value. */
    record F32(float value) implements KernelArg {
    }

    /** A small constant block bound by value (Metal {@code setBytes}: the kernel's {@code AttnParams}). */
    record Params(int[] words) implements KernelArg {
    }

    static KernelArg of(DeviceBuffer b) {
        return new Buffer(b);
    }

    static KernelArg i32(int v) {
        return new I32(v);
    }

    static KernelArg f32(float v) {
        return new F32(v);
    }
}
