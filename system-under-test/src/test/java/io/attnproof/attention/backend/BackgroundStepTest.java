package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/background.sh, which runs the native build steps (the emulated lanes, the PTX) beside javac: a waited step's
 * failure is the build's failure with the step's own log, a wait never passes over a step that never started, and
 * two steps of one state folder never run at once.
 */
class BackgroundStepTest {
    static final Path SCRIPT = FrontEnd.REPO.resolve("bin/background.sh");

    static FrontEnd.Result step(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(List.of(args));
        return FrontEnd.run(command, null);
    }

    @Test
    void aFailedStepFailsTheWaitWithItsOwnStatusAndLog(@TempDir Path dir) throws IOException {
        String state = dir.resolve("ptx").toString();
        assertEquals(0, step("start", state, "bash", "-c", "echo ptxas: fatal; exit 3").code());
        FrontEnd.Result judged = step("wait", state, "--status");
        assertEquals(3, judged.code(), judged.output());
        assertTrue(judged.output().contains("[ptx] ptxas: fatal"), judged.output());
        assertTrue(judged.output().contains("failed (exit 3)"), judged.output());
        // Without --status (a step that a synchronous one repeats and judges) the same wait passes, log printed.
        FrontEnd.Result repeated = step("wait", state);
        assertEquals(0, repeated.code(), repeated.output());
        assertTrue(repeated.output().contains("[ptx] ptxas: fatal"), repeated.output());
        // Control: a step that succeeds passes the judged wait.
        assertEquals(0, step("start", state, "true").code());
        assertEquals(0, step("wait", state, "--status").code());
    }

    @Test
    void aWaitForAStepNeverStartedIsAnErrorNamingTheFolder(@TempDir Path dir) throws IOException {
        String state = dir.resolve("never").toString();
        FrontEnd.Result r = step("wait", state, "--status");
        assertEquals(2, r.code(), r.output());
        assertTrue(r.output().contains(state + ": no step was started there"), r.output());
        FrontEnd.Result none = step("start", state);
        assertEquals(2, none.code(), none.output());
        assertTrue(none.output().contains("no command given"), none.output());
    }

    @Test
    void aStartWaitsForTheRunningStepOfItsFolder(@TempDir Path dir) throws IOException {
        String state = dir.resolve("lanes").toString();
        Path order = dir.resolve("order.txt");
        assertEquals(0, step("start", state, "bash", "-c", "sleep 1; echo first >> " + order).code());
        assertEquals(0, step("start", state, "bash", "-c", "echo second >> " + order).code());
        assertEquals(0, step("wait", state, "--status").code());
        assertEquals(List.of("first", "second"), Files.readAllLines(order));
    }
}
