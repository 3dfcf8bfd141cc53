package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

/**
 * How far an evidence line is from its limit, as a factor: above 1 passes with room, below 1 fails. The rule:
 * <ul>
 *   <li>upper-bound checks ({@code value <= limit}, e.g. {@code max_abs_err}): {@code limit ÷ value}
 *       (∞ when the value is 0);</li>
 *   <li>lower-bound checks (negative controls {@code control_gap:*}, which must exceed their limit, and any other
 *       line whose value passed above its limit, e.g. a required minimum count): {@code value ÷ limit};</li>
 *   <li>exact checks (limit 0, or a passing value equal to its limit: bit counts, required counts, recorded
 *       values): {@link Kind#EXACT}, no factor; a failing one has factor 0;</li>
 *   <li>degeneracy lines and skips: {@link Kind#NONE}.</li>
 * </ul>
 * A failing line's direction follows from the value being above or below its limit; NaN values give a NaN factor.
 */
public record Margin(Kind kind, double factor) implements Comparable<Margin> {
    /** What sort of margin a line has. */
    public enum Kind {
        /** A factor: limit ÷ value or value ÷ limit. */
        FACTOR,
        /** An exact check that holds (bit-identity, an exact count). */
        EXACT,
        /** No margin: a degeneracy condition or a skip. */
        NONE
    }

    public static final Margin NONE = new Margin(Kind.NONE, Double.NaN);
    public static final Margin EXACT = new Margin(Kind.EXACT, Double.NaN);

    /** The margin of {@code line} by the rule above, read from its comparison. */
    public static Margin of(EvidenceLine line) {
        if (line.isSkip() || line.isDegeneracy() || line.isInfo()) {
            return NONE;
        }
        double value = line.value();
        double limit = line.limit();
        if (Double.isNaN(value) || Double.isNaN(limit)) {
            return factor(Double.NaN);
        }
        if (line.cmp() == io.attnproof.fixtures.evidence.Comparison.EQ || limit == 0) {
            return line.passed() ? EXACT : factor(0.0);
        }
        if (limit < 0 || value < 0 || Double.isInfinite(limit) || Double.isInfinite(value)) {
            return line.passed() ? EXACT : factor(0.0);
        }
        boolean upper = line.cmp() == io.attnproof.fixtures.evidence.Comparison.LE;
        if (upper) {
            return factor(value == 0 ? Double.POSITIVE_INFINITY : limit / value);
        }
        return factor(value / limit);
    }

    private static Margin factor(double f) {
        return new Margin(Kind.FACTOR, f);
    }

    /**
     * Which margin is nearer to failing: NaN and finite factors by size first, then exact checks (the claim's own
     * pass/fail checks), then infinite factors (a control with no limit to speak of), then no margin.
     */
    @Override
    public int compareTo(Margin other) {
        int tier = Integer.compare(tier(), other.tier());
        if (tier != 0 || tier() != 0) {
            return tier;
        }
        double a = Double.isNaN(factor) ? Double.NEGATIVE_INFINITY : factor;
        double b = Double.isNaN(other.factor) ? Double.NEGATIVE_INFINITY : other.factor;
        return Double.compare(a, b);
    }

    private int tier() {
        return switch (kind) {
            case FACTOR -> Double.isInfinite(factor) && factor > 0 ? 2 : 0;
            case EXACT -> 1;
            case NONE -> 3;
        };
    }

    /** {@code 3.2×}, {@code ∞}, {@code exact}, or an empty string. */
    public String text() {
        return switch (kind) {
            case FACTOR -> Fmt.times(factor);
            case EXACT -> "exact";
            case NONE -> "";
        };
    }
}
