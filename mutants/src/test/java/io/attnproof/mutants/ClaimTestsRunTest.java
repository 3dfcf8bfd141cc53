package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * What a mutant's run of its claim tests reports (ClaimTests.run): only the tests of the attacked claim run, in the
 * given loader; passes, failures, crashes, aborts and disabled tests are counted apart, and every failure is a killer
 * named Class#method (a parameterised case with its index and arguments) with its message, cut at 2000 characters.
 * Degenerate if every test passed or failed alike: the fixture has each outcome once, and a test of another claim
 * that would fail if it ran.
 */
class ClaimTestsRunTest {

    @Test
    void aRunCountsEveryOutcomeAndNamesEveryKiller() {
        ScopedProperties.install();
        MutantClassLoader loader = new MutantClassLoader("claim-run", Map.of(), getClass().getClassLoader(),
                Map.of(ClaimRunFixture.GATE, "on"));
        ClassLoader before = Thread.currentThread().getContextClassLoader();
        ClaimTests.Outcome o = ClaimTests.run(loader, List.of("R1"), List.of(ClaimRunFixture.class.getName()));
        assertSame(before, Thread.currentThread().getContextClassLoader(), "the caller's context loader restored");
        assertEquals(List.of(8, 2, 5, 2), List.of(o.run(), o.passed(), o.failed(), o.skipped()),
                "run (aborted included), passed, failed, skipped (aborted and disabled)");
        Map<String, String> killers = new TreeMap<>();
        o.killers().forEach(k -> killers.put(k.test(), k.message()));
        String p = "[claim R1, no seeds] ";
        Map<String, String> expected = new TreeMap<>(Map.of(
                "ClaimRunFixture#fails", p + "boom",
                "ClaimRunFixture#crashes", p + "java.lang.IllegalStateException: bad state",
                "ClaimRunFixture#param[2] 2", p + "two",
                "ClaimRunFixture#longMessage", (p + "x".repeat(2100)).substring(0, 2000) + " ...",
                "ClaimRunFixture#exactly2000", p + "y".repeat(1979)));
        assertEquals(expected, killers);
    }

    @Test
    void theIndexMapsEachClaimToItsTopLevelAndItsConcreteClasses() throws Exception {
        java.nio.file.Path root = java.nio.file.Path.of(ClaimRunFixture.class.getProtectionDomain().getCodeSource()
                .getLocation().toURI());
        ClaimTests index = ClaimTests.index(root, new MutantClassLoader("index", Map.of(), getClass().getClassLoader(),
                Map.of()));
        String pkg = "io.attnproof.mutants.";
        // B1, K1 and K2: CampaignRunPathsTest's fixtures (RunPathFixtures).
        assertEquals(java.util.Set.of("R1", "R2", "R3", "R5", "R6", "R7", "R8", "R9", "B1", "K1", "K2"), index.claims(),
                "R4's class has no test method");
        assertEquals(java.util.Set.of(pkg + "ClaimRunFixture"), index.classesFor(List.of("R1", "R2")));
        assertEquals(java.util.Set.of(pkg + "LaneClaimsFixture"), index.classesFor(List.of("R3")), "where it is declared");
        assertEquals(java.util.Set.of(pkg + "CudaLaneFixture"), index.concreteClassesFor(List.of("R3")),
                "who runs it: the concrete subclass, not the abstract one");
        assertEquals(java.util.Set.of(pkg + "ClaimRunFixture"), index.concreteClassesFor(List.of("R1")));
        assertEquals(java.util.Set.of(pkg + "NestedHolderFixture"), index.classesFor(List.of("R9")),
                "a nested class's test is found under its top-level class");
        assertEquals(java.util.Set.of(), index.classesFor(List.of("R4")));
    }

    @Test
    void aClassWhoseSetUpFailsIsItselfTheKiller() {
        ScopedProperties.install();
        MutantClassLoader loader = new MutantClassLoader("claim-run", Map.of(), getClass().getClassLoader(),
                Map.of(ClaimRunFixture.GATE, "on"));
        ClaimTests.Outcome o = ClaimTests.run(loader, List.of("R8"), List.of(BrokenSetupFixture.class.getName()));
        assertEquals(List.of(0, 0, 0, 0), List.of(o.run(), o.passed(), o.failed(), o.skipped()), "no test ran");
        assertEquals(List.of(new ClaimTests.Killer("BrokenSetupFixture (class)",
                "java.lang.IllegalStateException: no setup")), o.killers());
    }
}
