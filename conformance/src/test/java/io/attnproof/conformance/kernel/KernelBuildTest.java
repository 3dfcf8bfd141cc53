package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The build step of the kernel lanes ({@link KernelLibrary#buildWith}, {@link KernelLibrary#upToDate}) with a stand-in
 * front-end script in a throw-away repository root, so nothing is built and no build is shared with another run (the
 * lanes' real builds under conformance/target/kernel-build are reused across runs, so only a fresh root shows whether
 * a build happens): the script gets the source, the output folder and the stem (plus -DATTNPROOF_EMU_PLAIN for the
 * plain lane) at -O0; a library newer than every input is not rebuilt, one older than the source or any file of
 * native/emu, native/emu/frontend or native/emu/metal is; a failing build names its exit status and its log's last 15
 * lines; a build interrupted while waiting is a build error and leaves the thread interrupted.
 */
class KernelBuildTest {
    /** A stand-in front end: appends "args | ATTNPROOF_FRONTEND_OPT" to calls.log, writes lib<stem>.so, exits $EXIT. */
    static Path root(Path tmp, int exit) throws IOException {
        Path root = tmp.resolve("root");
        for (String d : List.of("native/emu/frontend", "native/emu/metal")) {
            Files.createDirectories(root.resolve(d));
        }
        Files.writeString(root.resolve("native/emu/frontend/fake.sh"), String.join("\n",
                "echo \"$* | ${ATTNPROOF_FRONTEND_OPT:-unset}\" >> \"" + tmp.resolve("calls.log") + "\"",
                "for i in $(seq 1 20); do echo \"log line $i\"; done",
                "[ " + exit + " -eq 0 ] || exit " + exit,
                "echo built > \"$2/lib$3.so\"", ""));
        return root;
    }

    static List<String> calls(Path tmp) throws IOException {
        Path log = tmp.resolve("calls.log");
        return Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
    }

    static void age(Path p, long secondsAgo) throws IOException {
        Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - secondsAgo * 1000));
    }

    @Test
    void eachLaneIsBuiltOnceWithItsFlagsAndRebuiltWhenAnInputIsNewer(@TempDir Path tmp) throws IOException {
        Path root = root(tmp, 0);
        Path source = Files.writeString(tmp.resolve("k.cu"), "// kernel\n");
        Path out = tmp.resolve("out");
        Path lib = KernelLibrary.buildWith(root, "fake.sh", source, out, "k", false, "k checked");
        assertEquals(out.resolve("libk.so").toAbsolutePath(), lib, "the library path is OUT/lib<stem>.so, absolute");
        assertTrue(Files.isRegularFile(lib), "the script wrote " + lib);
        assertEquals(List.of(source + " " + out.toAbsolutePath() + " k | 0"), calls(tmp),
                "the checked build: source, output folder and stem, at ATTNPROOF_FRONTEND_OPT 0");

        Path plain = KernelLibrary.buildWith(root, "fake.sh", source, out, "k_plain", true, "k plain");
        assertEquals(out.resolve("libk_plain.so").toAbsolutePath(), plain);
        assertEquals(source + " " + out.toAbsolutePath() + " k_plain -DATTNPROOF_EMU_PLAIN | 0", calls(tmp).get(1),
                "the plain build adds -DATTNPROOF_EMU_PLAIN");

        // Every input older than the library: no build.
        age(source, 100);
        for (String d : List.of("native/emu/frontend/fake.sh")) {
            age(root.resolve(d), 100);
        }
        KernelLibrary.buildWith(root, "fake.sh", source, out, "k", false, "k checked");
        assertEquals(2, calls(tmp).size(), "an up-to-date library is not rebuilt: " + calls(tmp));

        // The source newer than the library: rebuilt.
        age(lib, 50);
        age(source, 10);
        KernelLibrary.buildWith(root, "fake.sh", source, out, "k", false, "k checked");
        assertEquals(3, calls(tmp).size(), "a source newer than its library is rebuilt: " + calls(tmp));
    }

    @Test
    void aLibraryOlderThanAnyEmulatorFileIsStale(@TempDir Path tmp) throws IOException {
        Path root = root(tmp, 0);
        Path source = Files.writeString(tmp.resolve("k.cu"), "// kernel\n");
        Path lib = Files.writeString(tmp.resolve("libk.so"), "built\n");
        // The library 50 s old: a file written now is strictly newer even where the file system's clock is coarse
        // (written in the same tick, it would be as old as the library, which is up to date).
        age(lib, 50);
        age(source, 100);
        age(root.resolve("native/emu/frontend/fake.sh"), 100);
        assertTrue(KernelLibrary.upToDate(lib, source, root), "every input older than the library");
        assertFalse(KernelLibrary.upToDate(tmp.resolve("libnone.so"), source, root), "no library is never up to date");
        for (String dir : List.of("native/emu", "native/emu/frontend", "native/emu/metal")) {
            Path f = Files.writeString(root.resolve(dir).resolve("new.h"), "//\n");
            assertFalse(KernelLibrary.upToDate(lib, source, root), "a file of " + dir + " newer than the library");
            age(f, 100);
            assertTrue(KernelLibrary.upToDate(lib, source, root), "that file of " + dir + " aged again");
        }
        age(lib, 200);
        assertFalse(KernelLibrary.upToDate(lib, source, root), "a source newer than the library");
        // Rebuilt only when an input is newer: an input as old as the library (same modification time) is not.
        age(lib, 50);
        Files.setLastModifiedTime(source, Files.getLastModifiedTime(lib));
        assertTrue(KernelLibrary.upToDate(lib, source, root), "a source exactly as old as the library");
    }

    @Test
    void aBuildInterruptedWhileWaitingIsABuildErrorAndTheInterruptIsKept(@TempDir Path tmp) throws IOException {
        Path root = root(tmp, 0);
        Files.writeString(root.resolve("native/emu/frontend/slow.sh"), "sleep 5\n");
        Path source = Files.writeString(tmp.resolve("k.cu"), "// kernel\n");
        Thread.currentThread().interrupt();
        KernelBuildException e;
        try {
            e = assertThrows(KernelBuildException.class,
                    () -> KernelLibrary.buildWith(root, "slow.sh", source, tmp.resolve("out"), "k", false, "k"));
        } finally {
            // The build keeps the thread's interrupt for its caller; clear it here so the next test runs clean.
            assertTrue(Thread.interrupted(), "the interrupt is set again for the caller");
        }
        assertEquals("interrupted while building " + tmp.resolve("out/libk.so").toAbsolutePath(), e.getMessage());
    }

    @Test
    void aFailingBuildNamesItsExitAndItsLastFifteenLines(@TempDir Path tmp) throws IOException {
        Path root = root(tmp, 3);
        Path source = Files.writeString(tmp.resolve("k.cu"), "// kernel\n");
        KernelBuildException e = assertThrows(KernelBuildException.class,
                () -> KernelLibrary.buildWith(root, "fake.sh", source, tmp.resolve("out"), "k", false, "k.cu: checked"));
        StringBuilder want = new StringBuilder("k.cu: checked failed (exit 3):");
        for (int i = 6; i <= 20; i++) {   // the script's 20 log lines, the last 15 of them
            want.append("\nlog line ").append(i);
        }
        assertEquals(want.toString(), e.getMessage());
    }

    @Test
    void theBuildFolderIsNamedByTheSourceText(@TempDir Path tmp) throws IOException {
        Path a = Files.writeString(tmp.resolve("a.cu"), "x");
        Path b = Files.writeString(tmp.resolve("b.cu"), "x");
        Path c = Files.writeString(tmp.resolve("c.cu"), "y");
        // SHA-256("x") begins 2d711642b726b044: the first 8 bytes in hex.
        assertEquals("2d711642b726b044", KernelLibrary.digest(a));
        assertEquals(KernelLibrary.digest(a), KernelLibrary.digest(b), "same text, same folder");
        assertFalse(KernelLibrary.digest(a).equals(KernelLibrary.digest(c)), "another text, another folder");
    }
}
