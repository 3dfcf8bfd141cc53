package io.attnproof.reports.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs {@code mvn -B verify ARGS} in a repository root with the JDK that {@code bin/java25.sh} picks. */
final class Maven {
    /** Sources bin/java25.sh, keeps or picks a Java 25 JAVA_HOME, then execs Maven with the arguments. */
    static final String SCRIPT = ". bin/java25.sh && pick_java_home && export JAVA_HOME && exec mvn -B verify \"$@\"";

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
