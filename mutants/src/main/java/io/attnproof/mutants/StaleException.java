package io.attnproof.mutants;

/**
 * A mutant that no longer fits the code: a hunk that does not apply, or mutated sources that do not compile. A
 * stale mutant is an error of the catalog, never a kill.
 */
public final class StaleException extends Exception {
    private static final long serialVersionUID = 1L;

    public StaleException(String message) {
        super(message);
    }
}
