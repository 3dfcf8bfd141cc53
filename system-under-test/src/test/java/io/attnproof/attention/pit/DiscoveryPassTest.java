package io.attnproof.attention.pit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The discovery pass is recognised by PIT's finder inside a mutation minion, and nothing else is. */
class DiscoveryPassTest {
    static final String JUPITER = "org.junit.jupiter.engine.execution.InvocationInterceptorChain";
    static final String LAUNCHER = "org.junit.platform.launcher.core.DefaultLauncher";

    @Test
    void onlyAMutationMinionsFinderPassIsSkipped() {
        assertTrue(DiscoveryPass.discovering(List.of(JUPITER, LAUNCHER, DiscoveryPass.FINDER,
                "org.pitest.testapi.execute.FindTestUnits", DiscoveryPass.MUTATION_MINION)));
        // The coverage minion's finder pass is where PIT's coverage comes from: it must run the tests.
        assertFalse(DiscoveryPass.discovering(List.of(JUPITER, LAUNCHER, DiscoveryPass.FINDER,
                "org.pitest.coverage.execute.CoverageMinion")));
        // A mutant is judged through JUnit5TestUnit.execute: the finder is not on the stack.
        assertFalse(DiscoveryPass.discovering(List.of(JUPITER, LAUNCHER, "org.pitest.junit5.JUnit5TestUnit",
                "org.pitest.mutationtest.execute.MutationTestWorker", DiscoveryPass.MUTATION_MINION)));
        assertFalse(DiscoveryPass.discovering(List.of(JUPITER, LAUNCHER,
                "org.apache.maven.surefire.booter.ForkedBooter")));
    }

    @Test
    void thisTestRunsItsBody() {
        // Under surefire, or with the property set anywhere outside a minion's finder pass, every body runs.
        String before = System.getProperty(DiscoveryPass.PROPERTY);
        System.setProperty(DiscoveryPass.PROPERTY, "skip");
        try {
            assertFalse(DiscoveryPass.active(), "not a mutation minion's discovery pass");
        } finally {
            if (before == null) {
                System.clearProperty(DiscoveryPass.PROPERTY);
            } else {
                System.setProperty(DiscoveryPass.PROPERTY, before);
            }
        }
    }
}
