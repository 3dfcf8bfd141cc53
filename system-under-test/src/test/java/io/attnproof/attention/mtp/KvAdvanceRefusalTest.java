package io.attnproof.attention.mtp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.mtp.Capabilities.Check;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** R6: PER_SEQUENCE is refused until all three checks pass; the refusal names the first failing check only. */
@Claim("R6")
class KvAdvanceRefusalTest {
    static final Check CACHE_OK = Check.pass(Capabilities.CACHE);
    static final Check CACHE_BAD = Check.fail(Capabilities.CACHE, "XsRolling cannot carry a per-row length");
    static final Check TARGET_OK = Check.pass(Capabilities.TARGET);
    static final Check TARGET_BAD = Check.fail(Capabilities.TARGET, "the target collapses row_q0 to one scalar q0");
    static final Check STEP_OK = Check.pass(Capabilities.STEP);
    static final Check STEP_BAD = Check.fail(Capabilities.STEP,
            "step_full keys the fused step on one shared cache_len = max_j L_j");

    @Test
    void theRefusalNamesTheFirstFailingCheckAndNeverAClearedOne(Evidence ev) {
        record Case(Capabilities caps, String first) {
        }
        List<Case> cases = List.of(
                new Case(new Capabilities(CACHE_BAD, TARGET_BAD, STEP_BAD), Capabilities.CACHE),
                new Case(new Capabilities(CACHE_BAD, TARGET_OK, STEP_OK), Capabilities.CACHE),
                new Case(new Capabilities(CACHE_OK, TARGET_BAD, STEP_BAD), Capabilities.TARGET),
                new Case(new Capabilities(CACHE_OK, TARGET_BAD, STEP_OK), Capabilities.TARGET),
                new Case(new Capabilities(CACHE_OK, TARGET_OK, STEP_BAD), Capabilities.STEP));
        long wrong = 0;
        for (Case c : cases) {
            KvAdvanceLatch.Decision d = new KvAdvanceLatch().latch(KvAdvance.PER_SEQUENCE, c.caps());
            String text = d.refusal().orElse("");
            wrong += d.mode() == KvAdvance.COHORT ? 0 : 1;
            wrong += text.contains(c.first()) ? 0 : 1;
            for (String other : List.of(Capabilities.CACHE, Capabilities.TARGET, Capabilities.STEP)) {
                if (!other.equals(c.first()) && text.contains(other)) {
                    wrong++; // a cleared check, or a later one, named in the refusal
                }
            }
        }
        ev.checkBitIdentical("refusals_naming_the_wrong_check", wrong);
        // The third check's refusal names the shared cache_len and no longer XsRolling.
        String step = new Capabilities(CACHE_OK, TARGET_OK, STEP_BAD).refusal().orElseThrow();
        assertEquals(true, step.contains("cache_len") && !step.contains("XsRolling"), step);
        KvAdvanceLatch.Decision granted = new KvAdvanceLatch().latch(KvAdvance.PER_SEQUENCE,
                new Capabilities(CACHE_OK, TARGET_OK, STEP_OK));
        ev.controlAtLeast("all_three_pass_grants_per_sequence", granted.mode() == KvAdvance.PER_SEQUENCE ? 1 : 0, 1);
        assertEquals(Optional.empty(), granted.refusal());
    }

    @Test
    void theModeIsLatchedOnce() {
        KvAdvanceLatch latch = new KvAdvanceLatch();
        latch.latch(KvAdvance.COHORT, new Capabilities(CACHE_OK, TARGET_OK, STEP_OK));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> latch.latch(KvAdvance.PER_SEQUENCE, new Capabilities(CACHE_OK, TARGET_OK, STEP_OK)));
        assertEquals("KvAdvance already latched to COHORT; it is decided once per pipeline (requested now: PER_SEQUENCE)",
                e.getMessage());
    }

    @Test
    void cohortKeepsTheMinimumAndPerSequenceEachRowsOwn() {
        int[] c = {2, 1, 2};
        assertEquals(1, KvAdvance.COHORT.committed(c, 0));
        assertEquals(2, KvAdvance.PER_SEQUENCE.committed(c, 0));
        assertEquals(1, KvAdvance.PER_SEQUENCE.committed(c, 1));
    }
}
