package io.attnproof.conformance.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs {@code bin/verify ARGS} (the README's test command: the JDK bin/java25.sh picks, Maven pinned by ./mvnw). */
final class Maven {
    /** The test command: bin/verify picks a Java 25 JAVA_HOME (bin/java25.sh) and runs ./mvnw -B verify ARGS. */
    static final String SCRIPT = "exec bin/verify \"$@\"";

    private Maven() {
    }

    /** The command line that runs {@code mvn -B verify args}. */
    static List<String> command(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("bash", "-c", SCRIPT, "attnproof-mvn"));
        cmd.addAll(args);
        return cmd;
    }

    /** Runs Maven in {@code root}, its output on this process's terminal; returns its exit status. */
    static int verify(Path root, List<String> args) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command(args)).directory(root.toFile()).inheritIO().start();
        return p.waitFor();
    }
}
