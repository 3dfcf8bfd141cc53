package io.attnproof.attention.dispatch;

import io.attnproof.attention.backend.Backend;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import org.junit.jupiter.api.Test;

/**
 * Claims B1 to B7 on the cpu lane. The tests are declared here again (delegating to {@link DispatchClaims}) so that
 * the mutant campaign, which indexes the claim tests a class declares, runs the cpu lane's B tests for the curated
 * mutants of the B claims.
 */
class CpuDispatchTest extends DispatchClaims {
    @Override
    Backend lane() {
        return Backend.cpu();
    }

    @Test
    @Claim("B1")
    @Override
    void everyRegisteredThresholdAtMinusOneZeroPlusOne(Evidence ev) {
        super.everyRegisteredThresholdAtMinusOneZeroPlusOne(ev);
    }

    @Test
    @Claim("B2")
    @Override
    void oneQueryAgreesWithNQueriesAndPrefillRowWithDecodeStep(Evidence ev) {
        super.oneQueryAgreesWithNQueriesAndPrefillRowWithDecodeStep(ev);
    }

    @Test
    @Claim("B3")
    @Override
    void aMaskedCallNeverReachesAMasklessFusedKernel(Evidence ev) {
        super.aMaskedCallNeverReachesAMasklessFusedKernel(ev);
    }

    @Test
    @Claim("B4")
    @Override
    void singleQueryCallsRouteToExistingKernelsAndHonourTheWindow(Evidence ev) {
        super.singleQueryCallsRouteToExistingKernelsAndHonourTheWindow(ev);
    }

    @Test
    @Claim("B5")
    @Override
    void splitKDecodeAgreesWithTheOracleAtTheSwitchAndEveryChunkEdge(Evidence ev) {
        super.splitKDecodeAgreesWithTheOracleAtTheSwitchAndEveryChunkEdge(ev);
    }

    @Test
    @Claim("B6")
    @Override
    void degenerateRowsAreZerosWithTheSameBitsOnEveryLane(Evidence ev) {
        super.degenerateRowsAreZerosWithTheSameBitsOnEveryLane(ev);
    }

    @Test
    @Claim("B7")
    @Override
    void repeatedCallsGiveTheSameBitsAlsoUnderConcurrency(Evidence ev) throws InterruptedException {
        super.repeatedCallsGiveTheSameBitsAlsoUnderConcurrency(ev);
    }
}
