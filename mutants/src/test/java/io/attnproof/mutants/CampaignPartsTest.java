package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.LineKind;
import io.attnproof.fixtures.json.JsonTrees;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The campaign's small parts that its fast tests would otherwise reach only through a real campaign (RunnerTest,
 * left out of PIT): the mutants.* properties, the not-killed list, the per-mutant system properties, a native
 * mutant's lane, the margin at a zero or negative reading, the pairing key of an evidence line, the tie between two
 * checks, and the merge's integral-number rule at its 1e15 edge. Each assertion is a documented rule with a value
 * on both sides of its edge; properties set here are restored.
 */
class CampaignPartsTest {
    @TempDir
    Path dir;

    private static final List<String> KEYS = List.of("mutants.threads", "mutants.only", "mutants.tier");

    @Test
    void theMutantsPropertiesAreReadByTheirRules() {
        Map<String, String> saved = new java.util.HashMap<>();
        KEYS.forEach(k -> saved.put(k, System.getProperty(k)));
        try {
            System.setProperty("mutants.threads", "1");
            System.setProperty("mutants.only", " 01-a, ,02-b ");
            System.setProperty("mutants.tier", "all");
            Campaign.Config c = Campaign.Config.fromSystemProperties();
            assertEquals(1, c.threads(), "an explicit thread count is kept");
            assertEquals(Set.of("01-a", "02-b"), c.only(), "blank entries dropped, ids stripped");
            assertTrue(c.allTiers());
            System.setProperty("mutants.threads", "0");
            System.setProperty("mutants.tier", "default");
            c = Campaign.Config.fromSystemProperties();
            assertEquals(Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors())), c.threads(),
                    "0: one per core, at most 2");
            assertEquals(false, c.allTiers());
            System.setProperty("mutants.tier", "nightly");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    Campaign.Config::fromSystemProperties);
            assertEquals("mutants.tier = nightly: must be default (the mutants without '# tier: sweep') or all (the"
                    + " whole catalog)", e.getMessage());
        } finally {
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    @Test
    void notKilledListsEveryOtherStatusInOrder() {
        MutantResult killed = ShardTest.result("01-a", MutantResult.Status.KILLED);
        MutantResult survived = ShardTest.result("02-b", MutantResult.Status.SURVIVED);
        MutantResult stale = ShardTest.result("03-c", MutantResult.Status.STALE);
        assertEquals(List.of(survived, stale), new Campaign.Result(List.of(killed, survived, stale), 1, 1, Shard.ALL,
                dir.resolve("r.json")).notKilled());
        assertEquals("2/4", new Shard(2, 4).toString());
    }

    @Test
    void aMutantRunSeesItsOwnPropertiesAndEveryoneElseTheJvms() {
        ScopedProperties.install();
        Properties installed = System.getProperties();
        ScopedProperties.install();
        assertSame(installed, System.getProperties(), "installed once");
        assertTrue(installed instanceof ScopedProperties);
        assertEquals(System.getProperty("java.specification.version"), installed.getProperty("java.specification.version"));
        assertTrue(System.getProperty("java.specification.version") != null, "the JVM's properties carried over");
        String key = "attnproof.scoped.test";
        MutantClassLoader mutant = new MutantClassLoader("m", Map.of(), getClass().getClassLoader(), Map.of(key, "in"));
        assertEquals("in", mutant.property(key));
        assertNull(mutant.property("other"));
        Thread t = Thread.currentThread();
        ClassLoader previous = t.getContextClassLoader();
        try (URLClassLoader child = new URLClassLoader(new URL[0], mutant)) {
            t.setContextClassLoader(child);
            assertEquals("in", System.getProperty(key), "a loader below the mutant's sees its override");
            assertEquals("in", System.getProperty(key, "d"));
            assertEquals("d", System.getProperty(key + ".unset", "d"));
            assertNull(System.getProperty(key + ".unset"));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            t.setContextClassLoader(previous);
        }
        assertNull(System.getProperty(key), "outside the mutant's loader: the JVM's (unset)");
        assertEquals("d", System.getProperty(key, "d"));
    }

    @Test
    void aNativeMutantNamesItsLane() throws Exception {
        String cu = "native/cuda/sinks_attn.cu";
        Mutant m = PatchParser.parse(Path.of("07-x.patch"), "# id: 07-x\n# claims: N1\n# breaks: b\n# origin: o\n"
                + "--- a/" + cu + "\n+++ b/" + cu + "\n@@ -1,1 +1,1 @@\n-a\n+b\n");
        assertEquals("cuda-emu", m.nativeLane());
    }

    @Test
    void aZeroOrNegativeReadingHasAnInfiniteMargin() {
        double inf = Double.POSITIVE_INFINITY;
        assertEquals(inf, EvidenceValues.margin(new EvidenceValues.Reading(0, 0, false, Comparison.GE)));
        assertEquals(inf, EvidenceValues.margin(new EvidenceValues.Reading(0, -6, false, Comparison.GT)));
        assertEquals(inf, EvidenceValues.margin(new EvidenceValues.Reading(0, 0, false, Comparison.LE)));
        assertEquals(inf, EvidenceValues.margin(new EvidenceValues.Reading(-3, 0, false, Comparison.LE)));
    }

    private static EvidenceValues.Line line(String metric, double value, boolean passed) {
        return new EvidenceValues.Line("U1", LineKind.CHECK, metric, "T#m", 7L,
                new EvidenceValues.Reading(value, 1, passed, Comparison.LE));
    }

    @Test
    void aFailingLineIsPairedByItsOwnMetricNotByPosition() {
        List<EvidenceValues.Value> out = EvidenceValues.failing(List.of(line("other", 1, true), line("m", 0.5, true)),
                List.of(line("m", 4, false)));
        assertEquals(0.5, out.getFirst().fix().value(), "m pairs with m, not with the first line of the fix run");
    }

    @Test
    void ofTwoChecksWithTheSameMarginTheFirstStaysDecisive() {
        EvidenceValues.Reading r = new EvidenceValues.Reading(2, 1, false, Comparison.LE);
        EvidenceValues.Value first = new EvidenceValues.Value("N2", LineKind.CHECK, "a", "T#m", 1L, r, r, 2);
        EvidenceValues.Value second = new EvidenceValues.Value("N2", LineKind.CHECK, "b", "T#m", 1L, r, r, 2);
        assertEquals("a", EvidenceValues.decisive(List.of(first, second), List.of("N2")).metric());
        EvidenceValues.Value control = new EvidenceValues.Value("N2", LineKind.CONTROL, "c", "T#m", 1L, r, r, 5);
        EvidenceValues.Value weakerCheck = new EvidenceValues.Value("N2", LineKind.CHECK, "w", "T#m", 1L, r, r, 3);
        assertEquals("c", EvidenceValues.decisive(List.of(control, weakerCheck), List.of("N2")).metric(),
                "a check wins a tie only: a smaller margin never replaces a larger one");
    }

    @Test
    void numbersCompareAsIntegersOnlyBelow1e15() throws Exception {
        assertEquals("3", MergeResults.toJson(3.0));
        assertEquals("999999999999999", MergeResults.toJson(999_999_999_999_999.0));
        assertEquals(JsonTrees.write(1e15), MergeResults.toJson(1e15), "1e15 stays a double");
        Path merged = dir.resolve("merged");
        ResultsFiles.writeJson(merged.resolve("results-1-of-1.json"),
                List.of(ShardTest.result("01-a", MutantResult.Status.KILLED)));
        Path catalog = Files.createDirectories(dir.resolve("catalog"));
        Files.writeString(catalog.resolve("01-a.patch"), "");
        assertEquals(0, MergeResults.run(new String[] {merged.toString(), catalog.toString()},
                new java.io.PrintStream(java.io.OutputStream.nullOutputStream()), new java.io.PrintStream(java.io.OutputStream.nullOutputStream())),
                "a results folder and a catalog: two arguments");
    }

    @Test
    void aMutantThatDoesNotCompileIsStaleWithJavacsErrorsByFileAndLine() {
        String path = PatchParser.SOURCE_ROOT + "io/attnproof/attention/Broken.java";
        StaleException e = assertThrows(StaleException.class, () -> new MutantCompiler(List.of()).compile(
                Map.of(path, "package io.attnproof.attention;\nclass Broken {\n")));
        assertTrue(e.getMessage().startsWith("the mutated sources do not compile:\n" + path + ":2: error: "),
                e.getMessage());
        assertTrue(!e.getMessage().contains("javac reported no error"), e.getMessage());
    }

    @Test
    void aNativeMutantRunsItsLanesClassesAndTheLaneNeutralOnesOfItsClaims() {
        Set<String> classes = Set.of("a.CudaEmuLaneTest", "a.MetalEmuLaneTest", "a.CrossLaneTest", "a.KernelSourcesTest");
        assertEquals(Set.of("a.CudaEmuLaneTest", "a.CrossLaneTest"), NativeBuild.laneClasses("cuda-emu", classes,
                List.of("X1")), "X1's lane-neutral class joins; N3's does not without N3");
        assertEquals(Set.of("a.CudaEmuLaneTest"), NativeBuild.laneClasses("cuda-emu", classes, List.of("S1")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NativeBuild.laneClasses("vulkan", classes, List.of("S1")));
        assertEquals("lane = vulkan: no emulated lane of that name", e.getMessage());
    }
}
