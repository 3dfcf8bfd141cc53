package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A native mutant's own build ({@link NativeBuild#build}) over a throw-away repository whose build scripts are stubs:
 * each stub records the arguments and the build environment it was started with, makes one library, and fails
 * (25 numbered lines of output) when the patched source says FAIL or sleeps when it says SLOW. So every lane's
 * command, source placement, environment, the emulator's private copy, the stale message's last 20 lines, the
 * interrupt and the links to the normal build's other libraries are checked by their documented rules, without a
 * compiler (RunnerTest builds real ones, outside PIT).
 */
class NativeBuildTest {
    @TempDir
    Path root;

    /**
     * Records its name, "$@" and the build variables next to itself, makes libmine.so in its first folder argument,
     * and obeys FAIL/SLOW.
     */
    private static final String STUB = """
            #!/usr/bin/env bash
            rec="$(dirname "$0")/record.txt"
            echo "script=$(basename "$0")" > "$rec"
            printf 'arg=%s\\n' "$@" >> "$rec"
            echo "EMU_ONLY=${ATTNPROOF_EMU_ONLY-unset}" >> "$rec"
            echo "EMU_OPT=${ATTNPROOF_EMU_OPT-unset}" >> "$rec"
            echo "FRONTEND_OPT=${ATTNPROOF_FRONTEND_OPT-unset}" >> "$rec"
            if grep -qs SLOW "$@"; then sleep 2; fi
            if grep -qs FAIL "$@"; then
              for i in $(seq 1 25); do echo "line $i"; done
              exit 3
            fi
            for a in "$@"; do
              if [ -d "$a" ]; then touch "$a/libmine.so"; break; fi
            done
            """;

    private Path normal;

    private void repo() throws Exception {
        for (String s : List.of("native/emu/build.sh", "native/emu/frontend/build-cu.sh",
                "native/emu/frontend/build-metal.sh")) {
            Files.createDirectories(root.resolve(s).getParent());
            Files.writeString(root.resolve(s), STUB);
        }
        for (String s : List.of("native/cuda/sinks_attn.cu", "native/metal/sinks_attn.metal", "native/emu/kernel.h",
                "native/emu/sub/deep/util.h", "examples/kernels/cuda/fa.cu", "examples/kernels/metal/fm.metal")) {
            Files.createDirectories(root.resolve(s).getParent());
            Files.writeString(root.resolve(s), "original " + s + "\n");
        }
        normal = Files.createDirectories(root.resolve("normal"));
        Files.writeString(normal.resolve("libother.so"), "other lane");
        Files.writeString(normal.resolve("libmine.so"), "the normal build's own copy");
        Files.writeString(normal.resolve("notes.txt"), "not a library");
    }

    private static Mutant mutant(String path, String... claims) {
        return new Mutant("m1", List.of(claims), "b", "o", null, false, List.of(), Path.of("m1.patch"),
                List.of(new Mutant.FilePatch(path, List.of())));
    }

    private static List<String> record(Path file) throws Exception {
        return Files.readAllLines(file);
    }

    private static List<String> expected(List<String> args, String emuOnly, String emuOpt) {
        return expected("build.sh", args, emuOnly, emuOpt);
    }

    private static List<String> expected(String script, List<String> args, String emuOnly, String emuOpt) {
        List<String> out = new ArrayList<>();
        out.add("script=" + script);
        args.forEach(a -> out.add("arg=" + a));
        out.add("EMU_ONLY=" + emuOnly);
        out.add("EMU_OPT=" + emuOpt);
        out.add("FRONTEND_OPT=0");
        return out;
    }

    /** The other lanes' libraries link to the normal build's; the mutant's own library and non-libraries do not. */
    private void assertLinks(Path dir) throws Exception {
        assertTrue(Files.isSymbolicLink(dir.resolve("libother.so")), "libother.so links to the normal build");
        assertEquals(normal.resolve("libother.so").toAbsolutePath(),
                Files.readSymbolicLink(dir.resolve("libother.so")));
        assertFalse(Files.isSymbolicLink(dir.resolve("libmine.so")), "the mutant's own library is kept");
        assertEquals("", Files.readString(dir.resolve("libmine.so")), "the stub's empty library, not the normal one");
        assertFalse(Files.exists(dir.resolve("notes.txt"), java.nio.file.LinkOption.NOFOLLOW_LINKS),
                "only *.so files are linked");
    }

    @Test
    void aCudaMutantBuildsItsPatchedSourceInAnEmptiedFolderAtO0() throws Exception {
        repo();
        Path dir = root.resolve("out/m1");
        Files.createDirectories(dir.resolve("stale/deeper"));
        Files.writeString(dir.resolve("stale/deeper/old.txt"), "an earlier build's file");
        // A lane mutant of N5 still builds at -O0: only an emulator mutant of N5 keeps the normal level.
        NativeBuild.build(root, normal, dir, mutant("native/cuda/sinks_attn.cu", "N5"), "PATCHED cuda\n");
        assertFalse(Files.exists(dir.resolve("stale")), "the folder is emptied first");
        Path src = dir.resolve("src/sinks_attn.cu");
        assertEquals("PATCHED cuda\n", Files.readString(src));
        assertEquals(expected(List.of(dir.toString(), src.toString(),
                root.resolve("native/metal/sinks_attn.metal").toString()), "cuda-emu", "0"),
                record(root.resolve("native/emu/record.txt")));
        assertLinks(dir);
    }

    @Test
    void aMetalMutantPassesItsSourceAsTheMetalOneIntoAFolderThatDidNotExist() throws Exception {
        repo();
        Path dir = root.resolve("fresh/m1");
        NativeBuild.build(root, normal, dir, mutant("native/metal/sinks_attn.metal", "S1"), "PATCHED metal\n");
        Path src = dir.resolve("src/sinks_attn.metal");
        assertEquals("PATCHED metal\n", Files.readString(src));
        assertEquals(expected(List.of(dir.toString(), root.resolve("native/cuda/sinks_attn.cu").toString(),
                src.toString()), "metal-emu", "0"), record(root.resolve("native/emu/record.txt")));
        assertLinks(dir);
    }

    @Test
    void frontEndMutantsRunTheirFrontEndsScriptWithSourceFolderAndStem() throws Exception {
        repo();
        Path dir = root.resolve("fe");
        NativeBuild.build(root, normal, dir, mutant("examples/kernels/cuda/fa.cu", "N6"), "PATCHED fa\n");
        Path src = dir.resolve("src/fa.cu");
        assertEquals("PATCHED fa\n", Files.readString(src));
        Path rec = root.resolve("native/emu/frontend/record.txt");
        assertEquals(expected("build-cu.sh", List.of(src.toString(), dir.toString(), "fa"), "cuda-frontend", "0"),
                record(rec));
        Files.delete(rec);
        NativeBuild.build(root, normal, dir, mutant("examples/kernels/metal/fm.metal", "N6"), "PATCHED fm\n");
        assertEquals(expected("build-metal.sh", List.of(dir.resolve("src/fm.metal").toString(), dir.toString(), "fm"),
                "metal-frontend", "0"), record(rec));
        assertFalse(Files.exists(src), "the second build emptied the folder of the first");
        assertLinks(dir);
    }

    @Test
    void anEmulatorMutantBuildsThroughItsOwnCopyOfTheEmulator() throws Exception {
        repo();
        Path dir = root.resolve("emu-m");
        NativeBuild.build(root, normal, dir, mutant("native/emu/kernel.h", "N5"), "PATCHED header\n");
        Path emu = dir.resolve("emu");
        assertEquals("PATCHED header\n", Files.readString(emu.resolve("kernel.h")));
        assertEquals("original native/emu/sub/deep/util.h\n", Files.readString(emu.resolve("sub/deep/util.h")),
                "the whole emulator is copied, folders and all");
        assertEquals("original native/emu/kernel.h\n", Files.readString(root.resolve("native/emu/kernel.h")),
                "the repository's own emulator is untouched");
        assertFalse(Files.exists(root.resolve("native/emu/record.txt")), "the repository's build.sh did not run");
        // N5: the normal build's optimisation level (no ATTNPROOF_EMU_OPT), the groups of its claim.
        assertEquals(expected(List.of(dir.toString(), root.resolve("native/cuda/sinks_attn.cu").toString(),
                root.resolve("native/metal/sinks_attn.metal").toString(),
                root.resolve(NativeBuild.FIDELITY_PROBES).toString()), "cuda-emu,metal-emu", "unset"),
                record(emu.resolve("record.txt")));
        assertLinks(dir);
        NativeBuild.build(root, normal, dir, mutant("native/emu/kernel.h", "N4"), "PATCHED again\n");
        assertEquals(expected(List.of(dir.toString(), root.resolve("native/cuda/sinks_attn.cu").toString(),
                root.resolve("native/metal/sinks_attn.metal").toString(),
                root.resolve(NativeBuild.FIDELITY_PROBES).toString()), "fidelity", "0"),
                record(emu.resolve("record.txt")));
    }

    @Test
    void aSourceThatDoesNotBuildIsStaleWithTheLast20LinesOfTheLog() throws Exception {
        repo();
        Path dir = root.resolve("bad");
        StaleException e = assertThrows(StaleException.class, () -> NativeBuild.build(root, normal, dir,
                mutant("native/cuda/sinks_attn.cu", "S1"), "FAIL\n"));
        String last20 = String.join("\n", IntStream.rangeClosed(25 - 20 + 1, 25).mapToObj(i -> "line " + i).toList());
        assertEquals("the patched sinks_attn.cu does not compile for cuda-emu:\n" + last20, e.getMessage());
        assertFalse(Files.exists(dir.resolve("libother.so"), java.nio.file.LinkOption.NOFOLLOW_LINKS),
                "a failed build links nothing");
    }

    @Test
    void anInterruptedBuildIsStaleAndKeepsTheInterrupt() throws Exception {
        repo();
        Thread self = Thread.currentThread();
        Thread interrupter = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException ignored) {
                return;
            }
            self.interrupt();
        });
        interrupter.start();
        try {
            StaleException e = assertThrows(StaleException.class, () -> NativeBuild.build(root, normal,
                    root.resolve("slow"), mutant("native/cuda/sinks_attn.cu", "S1"), "SLOW\n"));
            assertEquals("interrupted while building native mutant m1", e.getMessage());
            assertTrue(Thread.interrupted(), "the interrupt is restored for the caller");
        } finally {
            interrupter.join();
            Thread.interrupted();
        }
    }
}
