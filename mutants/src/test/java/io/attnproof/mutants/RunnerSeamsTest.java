package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Small parts of the runner that only a whole campaign otherwise reaches: the surefire times that order the mutants
 * (which files count, which are skipped, and that the map is the caller's to extend), the scoped system properties
 * a new Campaign installs even in a JVM where nothing installed them yet, and the compiler's source path (none: a
 * stray source on the class path is never compiled in) and a source outside the Java roots.
 */
class RunnerSeamsTest {
    @TempDir
    Path dir;

    private static void suite(Path folder, String file, String head) throws Exception {
        Files.writeString(folder.resolve(file), "<?xml version=\"1.0\"?>\n" + head + "\n</testsuite>\n");
    }

    @Test
    void suiteTimesReadTheNameAndTimeOfEachSurefireReport() throws Exception {
        Map<String, Double> absent = Campaign.suiteTimes(dir.resolve("absent"));
        assertEquals(Map.of(), absent);
        absent.put("a.Later", 1.0); // the caller merges the conformance kit's times into it
        Path reports = Files.createDirectories(dir.resolve("reports"));
        suite(reports, "TEST-a.One.xml", "<testsuite xmlns:xsi=\"x\" name=\"a.One\" time=\"1.25\" tests=\"3\">");
        suite(reports, "TEST-a.Two.xml", "<testsuite name=\"a.Two\" tests=\"1\" time=\"0.5\">");
        suite(reports, "TEST-a.NoTime.xml", "<testsuite name=\"a.NoTime\" tests=\"1\">");
        suite(reports, "TEST-a.NoName.xml", "<testsuite time=\"9.0\" tests=\"1\">");
        suite(reports, "a.Other.xml", "<testsuite name=\"a.Other\" time=\"7.0\">");
        suite(reports, "TEST-a.Txt.txt", "<testsuite name=\"a.Txt\" time=\"7.0\">");
        Map<String, Double> times = Campaign.suiteTimes(reports);
        assertEquals(Map.of("a.One", 1.25, "a.Two", 0.5), times,
                "only TEST-*.xml files with both a name and a time count");
        times.put("a.Later", 1.0);
        assertEquals(1.0, times.get("a.Later"));
    }

    @Test
    void anUnreadableTimeLeavesAnEstimateTheCallerCanStillExtend() throws Exception {
        Path reports = Files.createDirectories(dir.resolve("bad"));
        suite(reports, "TEST-a.Bad.xml", "<testsuite name=\"a.Bad\" time=\"1.2.3\">");
        Map<String, Double> times = Campaign.suiteTimes(reports);
        assertFalse(times.containsKey("a.Bad"), "1.2.3 is no number");
        times.put("a.Later", 2.0); // an estimate only: the conformance kit's times still merge in
        assertEquals(2.0, times.get("a.Later"));
    }

    @Test
    void aCampaignInstallsTheScopedPropertiesOverTheJvmsOwn() throws Exception {
        Files.createDirectories(dir.resolve("classes"));
        Files.createDirectories(dir.resolve("test-classes"));
        Properties saved = System.getProperties();
        Properties plain = new Properties();
        plain.putAll(saved);
        plain.setProperty("attnproof.seams.base", "base");
        System.setProperties(plain);
        try {
            assertFalse(System.getProperties() instanceof ScopedProperties, "a JVM where nothing installed them");
            new Campaign(new Campaign.Config(dir, dir.resolve("catalog"), dir.resolve("classes"),
                    dir.resolve("test-classes"), dir.resolve("e"), dir.resolve("o"), Shard.ALL, Set.of(), 1,
                    Duration.ofSeconds(1)));
            assertTrue(System.getProperties() instanceof ScopedProperties, "installed by the campaign");
            assertEquals("base", System.getProperty("attnproof.seams.base"), "the JVM's properties carried over");
            assertEquals(saved.getProperty("java.version"), System.getProperty("java.version"));
        } finally {
            System.setProperties(saved);
        }
    }

    @Test
    void theCompilerNeverCompilesAStraySourceFromItsClassPath() throws Exception {
        Path cp = Files.createDirectories(dir.resolve("cp/io/attnproof/attention"));
        Files.writeString(cp.resolve("Dep.java"), "package io.attnproof.attention;\n\npublic class Dep {\n}\n");
        String user = PatchParser.SOURCE_ROOT + "io/attnproof/attention/User.java";
        String text = "package io.attnproof.attention;\n\nclass User {\n    Object d = new Dep();\n}\n";
        StaleException e = assertThrows(StaleException.class,
                () -> new MutantCompiler(List.of(dir.resolve("cp"))).compile(Map.of(user, text)));
        assertTrue(e.getMessage().startsWith("the mutated sources do not compile:\n" + user + ":4: error: "),
                e.getMessage());
        // A source outside the Java roots compiles under its own path.
        Map<String, byte[]> loose = new MutantCompiler(List.of()).compile(Map.of("Loose.java", "class Loose {\n}\n"));
        assertEquals(Set.of("Loose"), loose.keySet());
    }
}
