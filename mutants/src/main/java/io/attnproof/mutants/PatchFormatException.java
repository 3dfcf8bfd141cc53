package io.attnproof.mutants;

import java.nio.file.Path;

/** A catalog patch that cannot be read: a header or diff line that breaks the format, named by file and line. */
public final class PatchFormatException extends Exception {
    private static final long serialVersionUID = 1L;

    public PatchFormatException(Path file, int line, String message) {
        super(file.getFileName() + (line > 0 ? ":" + line : "") + ": " + message);
    }
}
