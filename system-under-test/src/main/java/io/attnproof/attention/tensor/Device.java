package io.attnproof.attention.tensor;

import io.attnproof.attention.Require;

/** Where a tensor lives: the CPU, or ordinal {@code n} of a CUDA or Metal device. */
public record Device(Kind kind, int ordinal) {
    /** Device families the engine serves on. */
    public enum Kind { CPU, CUDA, METAL }

    public static final Device CPU = new Device(Kind.CPU, 0);

    public Device {
        Require.present("kind", kind);
        Require.nonNegative("ordinal", ordinal);
        Require.that(kind != Kind.CPU || ordinal == 0, "ordinal", ordinal, "be 0 for the CPU");
    }

    public static Device cuda(int ordinal) {
        return new Device(Kind.CUDA, ordinal);
    }

    public static Device metal(int ordinal) {
        return new Device(Kind.METAL, ordinal);
    }

    @Override
    public String toString() {
        return kind == Kind.CPU ? "cpu" : kind.name().toLowerCase(java.util.Locale.ROOT) + ":" + ordinal;
    }
}
