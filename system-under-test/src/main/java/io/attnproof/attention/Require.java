package io.attnproof.attention;

/** Argument checks whose failures name the parameter, the value and the rule that was broken. */
public final class Require {
    private Require() {
    }

    /** Throws unless {@code holds}: "{@code param} = {@code value}: must {@code rule}". */
    public static void that(boolean holds, String param, Object value, String rule) {
        if (!holds) {
            throw new IllegalArgumentException(param + " = " + render(value) + ": must " + rule);
        }
    }

    /** Throws unless {@code value >= 0}. */
    public static int nonNegative(String param, int value) {
        that(value >= 0, param, value, "be >= 0");
        return value;
    }

    /** The longest array a JVM allocates: {@code 2^31 - 9} elements. */
    public static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    /** Throws unless {@code n <= }{@link #MAX_ARRAY} (one array can hold {@code n} elements); returns {@code n}. */
    public static int arrayLength(String param, long n, String rule) {
        that(n <= MAX_ARRAY, param, n, rule);
        return (int) n;
    }

    /** Throws when {@code value} is null. */
    public static <T> T present(String param, T value) {
        that(value != null, param, "null", "be present");
        return value;
    }

    private static String render(Object value) {
        if (value instanceof int[] a) {
            return java.util.Arrays.toString(a);
        }
        if (value instanceof long[] a) {
            return java.util.Arrays.toString(a);
        }
        return String.valueOf(value);
    }
}
