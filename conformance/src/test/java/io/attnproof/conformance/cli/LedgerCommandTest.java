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

    /** One evidence line of claim X1 on {@code backend}, passing or failing, in the format the ledger reads. */
    private static String line(String backend, String test, boolean passed) {
        return "{\"claim\":\"X1\",\"backend\":\"" + backend + "\",\"kind\":\"check\",\"metric\":\"max_abs_err\","
                + "\"value\":" + (passed ? "1e-7" : "1e-5") + ",\"cmp\":\"<=\",\"limit\":1e-6,\"passed\":" + passed
                + ",\"test\":\"" + test + "\",\"run\":\"1\"}\n";
    }

    private static int evidenceLines(Cli cli) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("; (\\d+) evidence lines").matcher(cli.out());
        assertTrue(m.find(), cli.toString());
        return Integer.parseInt(m.group(1));
    }

    /**
     * Every folder under ROOT/conformance/target/evidence-engines is read as one more engine, once even when also
     * named by --evidence, and a plain file there is no engine.
     */
    @Test
    void engineFoldersAreReadOnceAndOnlyFolders() throws Exception {
        Path root = Files.createDirectories(dir.resolve("repo"));
        Path engines = Files.createDirectories(root.resolve("conformance/target/evidence-engines"));
        for (String engine : List.of("eng-a", "eng-b")) {
            Files.writeString(Files.createDirectories(engines.resolve(engine)).resolve("CorpusChecker.jsonl"),
                    line(engine, "CorpusChecker#x", true));
        }
        Files.writeString(engines.resolve("notes.jsonl"), line("eng-c", "CorpusChecker#x", true));
        assertEquals(List.of(engines.resolve("eng-a"), engines.resolve("eng-b")),
                LedgerCommand.withEngines(root, List.of(engines.resolve("eng-a"))), "the extra folder, then each engine"
                + " folder not already named, in name order");
        Cli cli = Cli.run("ledger", "--no-build", "--root", root.toString(), "--evidence",
                engines.resolve("eng-a").toString());
        assertEquals(0, cli.exit(), cli.toString());
        assertEquals(2, evidenceLines(cli), "one line per engine folder, eng-a read once: " + cli);
        assertTrue(cli.out().contains("2 claims × backends"), cli.toString());
        assertTrue(!cli.out().contains("unreadable"), cli.toString());
    }

    /**
     * After a blank line and "== ledger ==", the failing lines are listed (20 at most, then how many more), passing
     * lines never, and an unreadable evidence line is named; all of it flushed before the command returns.
     */
    @Test
    void failingLinesAreListedUpToTwentyAndUnreadableLinesNamed() throws Exception {
        Path root = Files.createDirectories(dir.resolve("repo"));
        for (int failing : List.of(21, 20)) {
            Path extra = Files.createDirectories(dir.resolve("ev" + failing));
            StringBuilder lines = new StringBuilder(line("cuda", "X#passes", true));
            for (int i = 0; i < failing; i++) {
                lines.append(line("cuda", "X#fails" + i, false));
            }
            Files.writeString(extra.resolve("X.jsonl"), lines.toString());
            Cli cli = Cli.runBuffered("ledger", "--no-build", "--root", root.toString(), "--evidence", extra.toString(),
                    "--out", dir.resolve("out" + failing).toString());
            assertEquals(1, cli.exit(), cli.toString());
            assertTrue(cli.out().startsWith(System.lineSeparator() + "== ledger ==" + System.lineSeparator()),
                    cli.toString());
            List<String> listed = cli.out().lines().filter(l -> l.startsWith("  FAIL ")).toList();
            assertEquals(Math.min(failing, 20), listed.size(), cli.toString());
            assertTrue(listed.stream().allMatch(l -> l.startsWith("  FAIL X1 cuda X#fails")), cli.toString());
            String more = "  ... " + (failing - 20) + " more failing lines in the ledger";
            assertEquals(failing > 20, cli.out().contains(more), cli.toString());
        }
        Path bad = Files.createDirectories(dir.resolve("bad"));
        Files.writeString(bad.resolve("B.jsonl"), line("cuda", "X#passes", true) + "not json\n");
        Cli cli = Cli.run("ledger", "--no-build", "--root", root.toString(), "--evidence", bad.toString(), "--out",
                dir.resolve("outbad").toString());
        assertTrue(cli.out().lines().anyMatch(l -> l.startsWith("  unreadable: ") && l.contains("B.jsonl")),
                cli.toString());
    }

    /**
     * Without --no-build the command runs bin/verify with the Maven arguments (here a stand-in script in the root):
     * when every evidence line passes, the exit is Maven's status, named on stderr; when Maven passes, the ledger's.
     */
    @Test
    void aFailedBuildIsTheExitStatusWhenEveryLinePasses() throws Exception {
        Path root = Files.createDirectories(dir.resolve("repo"));
        Path extra = Files.createDirectories(dir.resolve("ev"));
        Files.writeString(extra.resolve("X.jsonl"), line("cuda", "X#passes", true));
        Path verify = Files.createDirectories(root.resolve("bin")).resolve("verify");
        for (int status : List.of(3, 0)) {
            Files.writeString(verify, "#!/bin/sh\nprintf '%s\\n' \"$@\" > args.txt\nexit " + status + "\n");
            assertTrue(verify.toFile().setExecutable(true));
            Cli cli = Cli.runBuffered("ledger", "--root", root.toString(), "--evidence", extra.toString(), "-o", "-q");
            assertEquals(status, cli.exit(), cli.toString());
            assertTrue(cli.out().startsWith("attnproof ledger: mvn -B verify -o -q" + System.lineSeparator()),
                    cli.toString());
            assertEquals(List.of("-o", "-q"), Files.readAllLines(root.resolve("args.txt")));
            assertEquals(status == 0 ? "" : "attnproof: every evidence line passed, but mvn verify failed (exit "
                    + status + ")", cli.err().strip(), cli.toString());
        }
    }
}
