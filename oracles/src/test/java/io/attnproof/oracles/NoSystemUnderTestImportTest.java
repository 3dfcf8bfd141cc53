package io.attnproof.oracles;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The oracles share no code with the system under test and depend on commons-math3 only. */
class NoSystemUnderTestImportTest {
    private static final String FORBIDDEN = "io.attnproof." + "attention";

    /**
     * The oracles' sources from the oracles module (surefire) or from a sibling module (PIT mutates the oracles from
     * system-under-test, whose directory its minions run in).
     */
    private static List<Path> mainSources() throws IOException {
        Path here = Path.of("src/main/java/io/attnproof/oracles");
        Path root = Files.isDirectory(here) ? Path.of("src/main/java") : Path.of("../oracles/src/main/java");
        assertTrue(Files.isDirectory(root.resolve("io/attnproof/oracles")), "the oracles' sources are neither under "
                + "src/main/java nor ../oracles/src/main/java of " + Path.of("").toAbsolutePath());
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(f -> f.toString().endsWith(".java")).toList();
        }
    }

    @Test
    void noOracleSourceMentionsTheSystemUnderTest() throws IOException {
        List<Path> sources = mainSources();
        assertTrue(sources.size() >= 7, "expected the oracle sources, found " + sources);
        for (Path source : sources) {
            assertTrue(!Files.readString(source).contains(FORBIDDEN), source + " mentions " + FORBIDDEN);
        }
    }

    @Test
    void importsAreJavaOrCommonsMathOnly() throws IOException {
        for (Path source : mainSources()) {
            for (String line : Files.readAllLines(source)) {
                String s = line.strip();
                if (s.startsWith("import ")) {
                    String target = s.replaceFirst("^import (static )?", "");
                    assertTrue(target.startsWith("java.") || target.startsWith("org.apache.commons.math3."),
                            source + ": " + s);
                }
            }
        }
    }
}
