package io.attnproof.conformance.cli;

import io.attnproof.fixtures.evidence.EvidenceLine;
import io.attnproof.ledger.Ledger;
import io.attnproof.ledger.LedgerWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code attnproof ledger [MAVEN_ARGS...]}: the main job, verify then write the ledger. */
@Command(name = "ledger", mixinStandardHelpOptions = true,
        description = {"The main job: runs `bin/verify MAVEN_ARGS...` (./mvnw -B verify with a Java 25 JDK from"
            + " bin/java25.sh), then"
            + " writes the ledger (index.html, ledger.md, ledger.json, pictures/) from every */target/evidence/*.jsonl,"
            + " mutants/target/mutants/results.json and system-under-test/target/pit-reports/mutations.xml, and prints"
            + " its location and the summary. Engines judged by `attnproof corpus check` (conformance/target/evidence-engines/"
            + "NAME) are read too, each one more column of the claim matrix.",
            "Exit code: 0 every evidence line passed, 1 one failed (or is unreadable), 2 no evidence; when the"
            + " evidence passes but Maven failed, Maven's status."})
final class LedgerCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--no-build", description = "Do not run Maven; render the ledger from the evidence already there.")
    boolean noBuild;

    @Option(names = "--root", paramLabel = "DIR", defaultValue = ".",
            description = "The repository root (default: the current directory).")
    Path root;

    @Option(names = "--evidence", paramLabel = "DIR", description = "An extra evidence directory (repeatable).")
    List<Path> evidence = new ArrayList<>();

    @Option(names = "--out", paramLabel = "DIR", description = "Where to write the ledger (default: ROOT/ledger/target/ledger).")
    Path out;

    @Parameters(paramLabel = "MAVEN_ARGS", description = "Passed to `mvn -B verify` (e.g. -o, -pl ...).")
    List<String> mavenArgs = new ArrayList<>();

    /**
     * The extra evidence directories plus every engine folder {@code attnproof corpus check} wrote under
     * {@code ROOT/conformance/target/evidence-engines/} (each its own run, shown as one more column).
     */
    static List<Path> withEngines(Path root, List<Path> extra) throws IOException {
        List<Path> out = new ArrayList<>(extra);
        Path engines = root.resolve("conformance").resolve("target").resolve("evidence-engines");
        if (java.nio.file.Files.isDirectory(engines)) {
            try (var s = java.nio.file.Files.list(engines)) {
                s.filter(java.nio.file.Files::isDirectory).sorted().filter(p -> !out.contains(p)).forEach(out::add);
            }
        }
        return out;
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int mvn = 0;
        if (noBuild) {
            if (!mavenArgs.isEmpty()) {
                err.println("attnproof ledger: Maven arguments " + mavenArgs + " given with --no-build");
                return 2;
            }
        } else {
            o.println("attnproof ledger: mvn -B verify " + String.join(" ", mavenArgs));
            o.flush();
            mvn = Maven.verify(root, mavenArgs);
        }
        Ledger ledger = Ledger.build(root, withEngines(root, evidence));
        Path dir = out != null ? out : root.resolve("ledger").resolve("target").resolve("ledger");
        LedgerWriter.Written written = LedgerWriter.write(ledger, dir);
        o.println();
        o.println("== ledger ==");
        o.println("ledger: " + written.html().toAbsolutePath().normalize() + " (also ledger.md, ledger.json, "
                + written.pictures().size() + " pictures)");
        o.println(ledger.summaryLine());
        o.println(ledger.mutantsNote());
        o.println(ledger.pitNote());
        List<EvidenceLine> failing = ledger.lines().stream().filter(l -> !l.passed()).toList();
        for (EvidenceLine l : failing.stream().limit(20).toList()) {
            o.println("  FAIL " + l.claim() + " " + l.backend() + " " + l.test() + ": " + io.attnproof.ledger.Fmt.describe(l)
                    + (l.seed() == null ? "" : " seed " + l.seed()) + (l.worst() == null ? "" : " at " + l.worst()));
        }
        if (failing.size() > 20) {
            o.println("  ... " + (failing.size() - 20) + " more failing lines in the ledger");
        }
        for (String p : ledger.problems()) {
            o.println("  unreadable: " + p);
        }
        o.flush();
        int status = ledger.exitStatus();
        if (status == 0 && mvn != 0) {
            err.println("attnproof: every evidence line passed, but mvn verify failed (exit " + mvn + ")");
            return mvn;
        }
        return status;
    }
}
