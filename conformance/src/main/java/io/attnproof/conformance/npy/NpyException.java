package io.attnproof.conformance.npy;

import java.nio.file.Path;

/** A .npy file that cannot be read or written; the message is {@code "<file>: <what is wrong>"}. */
public final class NpyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final String detail;

    public NpyException(Path file, String detail) {
        super(file + ": " + detail);
        this.file = file;
        this.detail = detail;
    }

    /** The file concerned. */
    public Path file() {
        return file;
    }

    /** What is wrong, without the file name. */
    public String detail() {
        return detail;
    }
}
