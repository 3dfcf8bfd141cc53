package io.attnproof.mutants;

import io.attnproof.fixtures.claim.Claim;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Claim tests for CampaignRunPathsTest (gated like ClaimRunFixture; classes of this package come from the runner's
 * own loader, so their static fields are what the test reads back). Not *Test: surefire ignores them.
 */
@Claim("K1")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class CudaEmuObserverFixture {
    /** One line per run: the mutant (its evidence folder's name), daemon or not, the native directory it sees. */
    static final List<String> SEEN = new CopyOnWriteArrayList<>();

    @Test
    void observes() {
        String evidence = System.getProperty("attnproof.evidence.dir");
        SEEN.add(Path.of(evidence).getFileName() + " daemon=" + Thread.currentThread().isDaemon() + " native="
                + System.getProperty(NativeBuild.DIR_PROPERTY));
    }
}

/** An K2 claim with exactly one failing test. */
@Claim("K2")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class OneKillerFixture {
    @Test
    void fails() {
        throw new AssertionError("the one failure");
    }
}

/**
 * An B1 claim test that sleeps far past any test's limit; interrupted, it takes {@link #UNWIND_MS} to unwind and
 * then says so.
 */
@Claim("B1")
@EnabledIfSystemProperty(named = ClaimRunFixture.GATE, matches = "on")
class SleeperFixture {
    static final long UNWIND_MS = 300;
    static volatile CountDownLatch started = new CountDownLatch(1);
    static volatile boolean unwound;

    static void reset() {
        started = new CountDownLatch(1);
        unwound = false;
    }

    @Test
    void sleeps() throws Exception {
        started.countDown();
        try {
            Thread.sleep(60_000);
        } catch (InterruptedException e) {
            Thread.sleep(UNWIND_MS);
            unwound = true;
            throw e;
        }
    }
}
