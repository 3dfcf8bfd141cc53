package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The conformance kit as a second module the runner mutates: its claim tests are indexed beside the system under
 * test's, a patched conformance source compiles only against the conformance class path, and the mutated class is
 * the one a mutant's loader defines.
 */
class ConformanceRootTest {
    static final String SEAL = PatchParser.CONFORMANCE_ROOT + "io/attnproof/conformance/corpus/Seal.java";

    @Test
    void aClaimSelectsTheClaimTestsOfBothModules() {
        Campaign.Config config = Campaign.Config.fromSystemProperties();
        ClassLoader source = ConformanceRootTest.class.getClassLoader();
        ClaimTests both = ClaimTests.index(List.of(config.sutTestClasses(), config.conformanceTestClasses()),
                new MutantClassLoader("index-both", Map.of(), source, Map.of()));
        ClaimTests sutOnly = ClaimTests.index(config.sutTestClasses(),
                new MutantClassLoader("index-sut", Map.of(), source, Map.of()));
        assertEquals(Set.of("io.attnproof.conformance.corpus.SealTest"), both.classesFor(List.of("F2")));
        assertTrue(both.classesFor(List.of("F1")).containsAll(List.of("io.attnproof.conformance.kernel.KernelLaneTest",
                "io.attnproof.conformance.corpus.CheckRulesTest")), both.classesFor(List.of("F1")).toString());
        assertTrue(sutOnly.classesFor(List.of("F1", "F2")).isEmpty(), "F1 and F2 have no test in the system under test");
        // A system-under-test claim keeps exactly its classes: the second root adds none to it.
        assertFalse(sutOnly.classesFor(List.of("U1")).isEmpty());
        assertEquals(sutOnly.classesFor(List.of("U1")), both.classesFor(List.of("U1")));
    }

    @Test
    void aConformanceSourceCompilesAgainstTheConformanceClassPathAndLoadsChildFirst() throws Exception {
        Campaign.Config config = Campaign.Config.fromSystemProperties();
        String text = TestPatches.source(SEAL);
        // Against the system under test alone the conformance kit's own types (and Jackson) are missing: stale.
        StaleException stale = assertThrows(StaleException.class,
                () -> new MutantCompiler(List.of(config.sutClasses())).compile(Map.of(SEAL, text)));
        assertTrue(stale.getMessage().contains(SEAL + ":"), stale.getMessage());
        Map<String, byte[]> classes = new MutantCompiler(Campaign.conformanceClasspath(config))
                .compile(Map.of(SEAL, text));
        String name = "io.attnproof.conformance.corpus.Seal";
        assertNotNull(classes.get(name), classes.keySet().toString());
        MutantClassLoader loader = new MutantClassLoader("seal", classes, ConformanceRootTest.class.getClassLoader(),
                Map.of());
        Class<?> seal = Class.forName(name, false, loader);
        assertSame(loader, seal.getClassLoader(), "the mutated class is defined by the mutant's loader");
        Class<?> checker = Class.forName("io.attnproof.conformance.corpus.CorpusChecker", false, loader);
        assertSame(loader, checker.getClassLoader(), "the rest of the kit is defined afresh, child-first");
    }

    @Test
    void theConfigDefaultsPointAtTheConformanceBuild() {
        Path root = Path.of("/r");
        Campaign.Config c = new Campaign.Config(root, root.resolve("cat"), root.resolve("c"), root.resolve("t"),
                root.resolve("e"), root.resolve("o"), Shard.ALL, Set.of(), 1, java.time.Duration.ofSeconds(1));
        assertEquals(root.resolve("conformance/target/classes"), c.conformanceClasses());
        assertEquals(root.resolve("conformance/target/test-classes"), c.conformanceTestClasses());
        assertEquals(root.resolve("conformance/target/evidence"), c.conformanceEvidence());
        assertEquals(c.conformanceEvidence(), c.with(root.resolve("o2"), Set.of("x")).conformanceEvidence());
    }
}
