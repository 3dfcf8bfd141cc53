package io.attnproof.conformance.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code attnproof}: the harness's command line, launched by the script of the same name at the repository root.
 * {@code ledger} (the main job: verify, then the ledger), {@code run} (the system under test on a case) and
 * {@code check} (any implementation's output against the fp64 oracle).
 */
@Command(name = "attnproof", mixinStandardHelpOptions = true, version = "attnproof 0.1.0",
        description = "Proves claims about a DeepSeek V4-style attention stack.",
        subcommands = {LedgerCommand.class, RunCommand.class, CheckCommand.class, CorpusCommand.class, KernelCommand.class,
            CommandLine.HelpCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success (ledger: every evidence line passed; check: PASS)",
            "1:failure (ledger: an evidence line failed; check: FAIL)",
            "2:bad input, or no evidence found"})
public final class Attnproof implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** What {@link #main} does, minus the exit. */
    public static int execute(String... args) {
        return commandLine().execute(args);
    }

    /** The configured command line (tests set its output streams). */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Attnproof());
        cl.getSubcommands().get("ledger").setUnmatchedOptionsArePositionalParams(true);
        return cl;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a command: ledger, run, check, corpus or kernel");
    }
}
