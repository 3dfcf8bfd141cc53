package io.attnproof.conformance.kernel;

/** A user's kernel source that the emulator's front end or the compiler refused (with its last lines). */
public final class KernelBuildException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KernelBuildException(String message) {
        super(message);
    }
}
