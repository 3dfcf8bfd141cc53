package io.attnproof.conformance.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs the attnproof command line in-process, capturing what it prints. */
public record Cli(int exit, String out, String err) {
    public static Cli run(String... args) {
        CommandLine cl = Attnproof.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Cli(exit, out.toString(), err.toString());
    }

    /**
     * The same, but standard output is a buffered writer that flushes only when told (as a caller's buffered stream
     * would): what a command prints reaches {@link #out()} only if the command flushes it before it returns.
     */
    public static Cli runBuffered(String... args) {
        CommandLine cl = Attnproof.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(new java.io.BufferedWriter(out, 1 << 16), false));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Cli(exit, out.toString(), err.toString());
    }

    @Override
    public String toString() {
        return "exit " + exit + "\n--- out\n" + out + "--- err\n" + err;
    }
}
