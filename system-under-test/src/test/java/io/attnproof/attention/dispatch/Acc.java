package io.attnproof.attention.dispatch;

import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.Worst;

/**
 * Many cases' errors (each under its own tolerance limit) or control gaps (each over its own limit) reduced to the
 * case nearest to failing: the largest error ÷ limit, or the smallest gap ÷ limit. The recorded line is that case's
 * own value and limit.
 */
final class Acc {
    private double value = Double.NaN;
    private double limit = Double.NaN;
    private Worst worst;
    private String label = "";
    private final boolean control;

    private Acc(boolean control) {
        this.control = control;
    }

    static Acc errors() {
        return new Acc(false);
    }

    static Acc gaps() {
        return new Acc(true);
    }

    void add(double v, double lim, Worst w, String where) {
        if (Double.isNaN(lim) || (!Double.isNaN(limit) && Double.isNaN(value))) {
            return; // no limit for this case, or a NaN already recorded (it fails whatever comes after)
        }
        boolean take = Double.isNaN(limit) || Double.isNaN(v)
                || (control ? v / lim < value / limit : v / lim > value / limit);
        if (take) {
            value = v;
            limit = lim;
            worst = w;
            label = where;
        }
    }

    /** Where the recorded case is (for messages). */
    String where() {
        return label;
    }

    boolean empty() {
        return Double.isNaN(limit);
    }

    /** Records the check ({@code value <= limit}) of the worst case. */
    void check(Evidence e, String metric) {
        e.check(metric, value, limit, worst);
    }

    /** Records the control ({@code gap > limit}) of the weakest case. */
    void control(Evidence e, String name) {
        e.controlGap(name, value, limit);
    }
}
