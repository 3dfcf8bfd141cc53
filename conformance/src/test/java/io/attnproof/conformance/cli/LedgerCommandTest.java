package io.attnproof.conformance.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.ledger.LedgerFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code attnproof ledger}, without the Maven run (which the script's users get): output, files, exit codes. */
class LedgerCommandTest {
    @TempDir
    Path dir;

    @Test
    void printsTheLocationAndTheSummaryAndExitsOneOnAFailingRow() {
        Path root = LedgerFixture.root(dir.resolve("repo"), true, false);
        Path out = dir.resolve("ledger");
        Cli cli = Cli.run("ledger", "--no-build", "--root", root.toString(), "--out", out.toString());
        assertEquals(1, cli.exit(), cli.toString());
        assertTrue(cli.out().contains("ledger: " + out.resolve("index.html").toAbsolutePath().normalize()
                + " (also ledger.md, ledger.json, 6 pictures)"), cli.toString());
        assertTrue(cli.out().contains("\n8 claims × backends: 1 FAIL (R1 cpu), 6 PASS, 1 SKIP;"), cli.toString());
        assertTrue(cli.out().contains("\nmutants: 3 of 6 killed"), cli.toString());
        assertTrue(cli.out().contains("\nPIT: not run"), cli.toString());
        assertTrue(cli.out().contains("  FAIL R1 cpu RaggedCohortTest#eachRowEqualsItselfAlone: max_abs_err 3.00e-05"
                + " not <= 1.89e-06 seed 1001 at (b=2, h=3, r=1, c=9)"), cli.toString());
        assertTrue(Files.isRegularFile(out.resolve("index.html")));
        assertTrue(Files.isRegularFile(out.resolve("ledger.md")));
        assertTrue(Files.isRegularFile(out.resolve("ledger.json")));
    }

    @Test
    void writesUnderReportsTargetLedgerByDefaultAndTakesExtraEvidence() throws Exception {
        Path root = Files.createDirectories(dir.resolve("repo"));
        Path extra = Files.createDirectories(dir.resolve("elsewhere"));
        Files.writeString(extra.resolve("X.jsonl"),
                "{\"claim\":\"X1\",\"backend\":\"cuda\",\"kind\":\"check\",\"metric\":\"max_abs_err\",\"value\":1e-7,"
                        + "\"cmp\":\"<=\",\"limit\":1e-6,\"passed\":true,\"test\":\"X#x\",\"run\":\"1\"}\n");
        Cli cli = Cli.run("ledger", "--no-build", "--root", root.toString(), "--evidence", extra.toString());
        assertEquals(0, cli.exit(), cli.toString());
        assertTrue(cli.out().contains("1 claims × backends: all pass; 1 evidence lines; no evidence yet: U1"),
                cli.toString());
        assertTrue(Files.isRegularFile(root.resolve("ledger/target/ledger/index.html")));
    }

    @Test
    void noEvidenceIsExitTwoAndMavenArgumentsNeedABuild() {
        Cli none = Cli.run("ledger", "--no-build", "--root", dir.toString(), "--out", dir.resolve("l").toString());
        assertEquals(2, none.exit(), none.toString());
        assertTrue(none.out().contains("no evidence found"), none.toString());
        Cli args = Cli.run("ledger", "--no-build", "-o", "--root", dir.toString());
        assertEquals(2, args.exit(), args.toString());
        assertTrue(args.err().contains("Maven arguments [-o] given with --no-build"), args.toString());
    }

    /**
     * Issue 13 item 6: the README's test command names no machine path: bin/verify finds a JDK 25 through
     * bin/java25.sh (as ./attnproof does) and runs Maven pinned by the wrapper; .ci/run calls exactly it.
     */
    @Test
    void theTestCommandIsBinVerifyWithThePinnedWrapper() throws java.io.IOException {
        Path root = Path.of("..");
        String verify = java.nio.file.Files.readString(root.resolve("bin/verify"));
        assertTrue(verify.contains(". bin/java25.sh") && verify.contains("pick_java_home")
                && verify.contains("exec ./mvnw -B verify \"$@\""), verify);
        assertTrue(java.nio.file.Files.isExecutable(root.resolve("bin/verify")));
        assertTrue(java.nio.file.Files.isExecutable(root.resolve("mvnw")));
        String wrapper = java.nio.file.Files.readString(root.resolve(".mvn/wrapper/maven-wrapper.properties"));
        assertTrue(wrapper.contains("apache-maven/3.8.7/apache-maven-3.8.7-bin.zip")
                && wrapper.contains("distributionSha256Sum="), wrapper);
        // The README's test command, run by .ci/run exactly as written: Maven through the wrapper, JDK from java25.sh.
        String command = "JAVA_HOME=\"$(bin/java25.sh)\" ./mvnw -B verify";
        String ci = java.nio.file.Files.readString(root.resolve(".ci/run"));
        assertTrue(ci.lines().anyMatch(l -> l.equals(command)), ci);
        assertTrue(ci.lines().noneMatch(l -> l.strip().startsWith("mvn ")), ci);
        assertTrue(java.nio.file.Files.isExecutable(root.resolve("bin/java25.sh")));
        String readme = java.nio.file.Files.readString(root.resolve("README.md"));
        String commands = readme.substring(readme.indexOf("## The two commands"), readme.indexOf("## The ledger"));
        assertTrue(commands.contains(command) && !commands.contains("/usr/lib/jvm"), commands);
    }

    @Test
    void mavenRunsVerifyThroughTheSharedJdkChoice() {
        assertEquals(List.of("bash", "-c", Maven.SCRIPT, "attnproof-mvn", "-o", "-pl", "oracles"),
                Maven.command(List.of("-o", "-pl", "oracles")));
        assertEquals("exec bin/verify \"$@\"", Maven.SCRIPT);
        // Unknown options are Maven's: they reach the positional list in order.
        var cl = Attnproof.commandLine();
        cl.parseArgs("ledger", "-o", "-pl", "oracles,fixtures", "-DskipTests");
        LedgerCommand ledger = cl.getSubcommands().get("ledger").getCommand();
        assertEquals(List.of("-o", "-pl", "oracles,fixtures", "-DskipTests"), ledger.mavenArgs);
    }
}
