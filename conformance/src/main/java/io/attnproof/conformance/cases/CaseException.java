package io.attnproof.conformance.cases;

import java.nio.file.Path;

/**
 * Bad input to {@code attnproof run} / {@code check}: a case file, one of its {@code .npy} inputs, or an output file
 * that cannot be used. The message is one line naming the file and the field:
 * {@code <file>: "<field>": <what is wrong>} (or {@code <file>: <what is wrong>} when no single field is at fault).
 */
public final class CaseException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final String field;

    public CaseException(Path file, String field, String detail) {
        super(file + ": " + (field == null ? "" : "\"" + field + "\": ") + oneLine(detail));
        this.file = file;
        this.field = field;
    }

    /** The file at fault (the case file for its fields, else the named .npy file). */
    public Path file() {
        return file;
    }

    /** The case field at fault (e.g. {@code "k"}, {@code "config.rowQ0"}), or null. */
    public String field() {
        return field;
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace("\r", " ").replace('\n', ' ');
    }
}
