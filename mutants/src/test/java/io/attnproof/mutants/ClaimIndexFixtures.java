package io.attnproof.mutants;

import io.attnproof.fixtures.claim.Claim;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/** Claim tests a lane inherits from an abstract class, for ClaimTestsRunTest's index (never run: gated off). */
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
abstract class LaneClaimsFixture {
    @Test
    @Claim("R3")
    void inherited() {
    }
}

/** A lane's concrete class: it runs the inherited R3 test. */
class CudaLaneFixture extends LaneClaimsFixture {
}

/** A class-level claim over a class without a test method: no claim test. */
@Claim("R4")
class HelperOnlyFixture {
    void helper() {
    }
}

/** An R5 claim test that passes (a mutant only R5 attacks survives it). */
@Claim("R5")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class PassingFixture {
    @Test
    void passes() {
    }
}

/** An R6 claim test whose check fails by 3 / 2 = 1.5x (its evidence line goes to the mutant's own folder). */
@Claim("R6")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class MarginFixture {
    @Test
    void overByHalf(io.attnproof.fixtures.evidence.Evidence evidence) {
        evidence.check("err", 3, 2, null);
    }
}

/** An R7 claim test whose check fails by 8 / 2 = 4x. */
@Claim("R7")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class WideMarginFixture {
    @Test
    void overFourfold(io.attnproof.fixtures.evidence.Evidence evidence) {
        evidence.check("err", 8, 2, null);
    }
}

/** An R8 class whose set-up fails: the class itself is the killer, no test of it runs. */
@Claim("R8")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class BrokenSetupFixture {
    @org.junit.jupiter.api.BeforeAll
    static void setUp() {
        throw new IllegalStateException("no setup");
    }

    @Test
    void never() {
    }
}

/** An R9 claim test inside a nested class: indexed under its top-level class. */
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class NestedHolderFixture {
    @org.junit.jupiter.api.Nested
    class Inner {
        @Test
        @Claim("R9")
        void nested() {
        }
    }
}
