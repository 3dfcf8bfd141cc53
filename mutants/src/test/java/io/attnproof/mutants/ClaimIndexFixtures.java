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
