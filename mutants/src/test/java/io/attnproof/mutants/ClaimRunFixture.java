package io.attnproof.mutants;

import io.attnproof.fixtures.claim.Claim;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Claim tests with every outcome, run only by ClaimTestsRunTest through ClaimTests.run (the gate's property is set
 * only in that run's class loader); everywhere else every test here is skipped. Not a *Test: surefire ignores it.
 */
@Claim("R1")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class ClaimRunFixture {
    static final String GATE = "attnproof.claimrun.fixture";

    @Test
    void passes() {
    }

    @Test
    void fails() {
        throw new AssertionError("boom");
    }

    @Test
    void crashes() {
        throw new IllegalStateException("bad state");
    }

    @Test
    @Claim("R2")
    void notAttacked() {
        throw new AssertionError("a test of another claim never runs");
    }

    @Test
    void aborted() {
        Assumptions.abort("not here");
    }

    @Test
    @Disabled("off")
    void disabled() {
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void param(int x) {
        if (x == 2) {
            throw new AssertionError("two");
        }
    }

    @Test
    void longMessage() {
        throw new AssertionError("x".repeat(2100));
    }

    @Test
    void exactly2000() {
        throw new AssertionError("y".repeat(1979));   // 21 + 1979 = 2000 with the claim prefix
    }
}
