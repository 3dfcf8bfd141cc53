package io.attnproof.oracles;

/** Argument checks that throw {@link IllegalArgumentException} naming the parameter, its value and the rule. */
final class Require {
    private Require() {}

    /** Passes iff {@code value >= min}. */
    static void atLeast(String name, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " = " + value + " must be >= " + min);
        }
    }

    /** Passes iff {@code condition}; otherwise the message says what was wrong. */
    static void that(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Passes iff {@code x} is finite or -inf (an additive mask value or a logit); NaN and +inf are refused. */
    static void logit(String name, double x) {
        that(!Double.isNaN(x) && x != Double.POSITIVE_INFINITY, name + " = " + x + " must be finite or -inf");
    }
}
