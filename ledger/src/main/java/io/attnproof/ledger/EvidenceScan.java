package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.LineKind;
import java.util.ArrayList;
import java.util.List;

/**
 * Lines that cannot fail, found in a build's evidence: a control whose bar is 0 or less (a control one ulp away
 * proves nothing), a judged line with an infinite or NaN limit on its open side, a line whose recorded verdict
 * contradicts its numbers, and a non-exact comparison whose measured, non-integer value equals its limit exactly
 * (a value equal to its limit by construction).
 */
public final class EvidenceScan {
    /** The metric prefix of every negative control ({@code Evidence.controlGap}, {@code controlAtLeast}). */
    static final String CONTROL_PREFIX = "control_gap:";

    private EvidenceScan() {
    }

    /** Each offending line, named by its source, claim, test and metric with the reason. */
    public static List<String> findings(List<EvidenceLine> lines) {
        List<String> out = new ArrayList<>();
        for (EvidenceLine l : lines) {
            if (!l.kind().judged()) {
                continue;
            }
            String where = l.source() + " " + l.claim() + " " + l.test() + " " + l.metric() + ": ";
            double v = l.value();
            double lim = l.limit();
            if (l.kind() == LineKind.CONTROL && !(lim > 0)) {
                out.add(where + "a control's bar must be the claim's limit, not " + lim);
            }
            // Evidence.controlGap/controlAtLeast name every control control_gap:*; a control recorded as a check
            // (or a check named like one) would count toward the wrong side of the claim.
            if ((l.kind() == LineKind.CONTROL) != l.metric().startsWith(CONTROL_PREFIX)) {
                out.add(where + "kind " + l.kind().key() + " with metric " + l.metric() + ": a negative control is"
                        + " kind control and named " + CONTROL_PREFIX + "*, and only a control is");
            }
            if (Double.isNaN(lim) || (l.cmp() == Comparison.LE && lim == Double.POSITIVE_INFINITY)
                    || ((l.cmp() == Comparison.GE || l.cmp() == Comparison.GT) && lim == Double.NEGATIVE_INFINITY)) {
                out.add(where + "limit " + lim + " with " + l.cmp().symbol() + " cannot fail");
            }
            if (l.inconsistent()) {
                out.add(where + "recorded passed = " + l.recordedPassed() + " contradicts " + v + " "
                        + l.cmp().symbol() + " " + lim);
            }
            if (l.cmp() != Comparison.EQ && v == lim && v != Math.rint(v)) {
                out.add(where + "value equals its limit exactly (" + v + "): equal by construction?");
            }
        }
        return out;
    }
}
