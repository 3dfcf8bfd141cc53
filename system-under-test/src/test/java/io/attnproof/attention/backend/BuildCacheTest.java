package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * native/emu/frontend/cache.sh, the front-end builds' cache (ATTNPROOF_BUILD_CACHE): the same inputs built into
 * another folder are copied, byte for byte, and any input the build reads (the source's bytes, its flags, its name, a
 * file of the emulator in use) is a new key, hence a compile. The compiler and the translator are stubs that count
 * their runs, so the test times the cache, not clang.
 */
class BuildCacheTest {
    @TempDir
    Path dir;
    Path compiles;
    Path cache;
    Path source;

    @BeforeEach
    void stubs() throws IOException {
        compiles = dir.resolve("compiles.txt");
        cache = dir.resolve("cache");
        Files.writeString(dir.resolve("cxx"), """
                #!/bin/bash
                [ "$1" = --version ] && { echo stub; exit 0; }
                echo compiled >> "%s"
                while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift ;; *) in="$1" ;; esac; shift; done
                cat "$in" > "$out"
                """.formatted(compiles));
        Files.writeString(dir.resolve("python"), """
                #!/bin/bash
                cat "$2" > "$3"; echo "rewrites of $2" > "$3.rewrites.txt"
                """);
        dir.resolve("cxx").toFile().setExecutable(true);
        dir.resolve("python").toFile().setExecutable(true);
        source = Files.createDirectories(dir.resolve("src")).resolve("k.cu");
        Files.writeString(source, "__global__ void k() {}\n");
    }

    int build(Path frontend, Path src, String out, String... flags) throws IOException {
        List<String> command = new ArrayList<>(List.of("bash", frontend.resolve("build-cu.sh").toString(),
                src.toString(), dir.resolve(out).toString(), "k"));
        command.addAll(List.of(flags));
        FrontEnd.Result r = FrontEnd.run(command, Map.of("CXX", dir.resolve("cxx").toString(), "ATTNPROOF_PYTHON",
                dir.resolve("python").toString(), "ATTNPROOF_BUILD_CACHE", cache.toString(), "ATTNPROOF_FRONTEND_OPT",
                "0"));
        assertEquals(0, r.code(), r.output());
        return Files.exists(compiles) ? Files.readAllLines(compiles).size() : 0;
    }

    @Test
    void theSameInputsInAnotherFolderAreCopiedByteForByte() throws IOException {
        assertEquals(1, build(FrontEnd.DIR, source, "a"));
        assertEquals(1, build(FrontEnd.DIR, source, "b"), "the second build of the same inputs compiled again");
        for (String f : List.of("libk.so", "k.emu.cpp", "k.emu.cpp.rewrites.txt")) {
            assertArrayEquals(Files.readAllBytes(dir.resolve("a").resolve(f)),
                    Files.readAllBytes(dir.resolve("b").resolve(f)), f);
        }
        // Control: without the cache folder every build compiles.
        FrontEnd.Result r = FrontEnd.run(List.of("bash", FrontEnd.DIR.resolve("build-cu.sh").toString(),
                source.toString(), dir.resolve("c").toString(), "k"), Map.of("CXX", dir.resolve("cxx").toString(),
                "ATTNPROOF_PYTHON", dir.resolve("python").toString(), "ATTNPROOF_BUILD_CACHE", ""));
        assertEquals(0, r.code(), r.output());
        assertEquals(2, Files.readAllLines(compiles).size());
    }

    @Test
    void everyInputTheBuildReadsIsPartOfTheKey() throws IOException {
        assertEquals(1, build(FrontEnd.DIR, source, "a"));
        assertEquals(2, build(FrontEnd.DIR, source, "b", "-DATTNPROOF_EMU_PLAIN"), "another flag");
        Files.writeString(source, "__global__ void k() { }\n");
        assertEquals(3, build(FrontEnd.DIR, source, "c"), "the source's bytes");
        Files.writeString(source.resolveSibling("k.cuh"), "#define TILE 64\n");
        assertEquals(4, build(FrontEnd.DIR, source, "c2"), "a file the source may include, beside it");
        // The emulator in use: a copy of native/emu with one header changed, as a mutant's patched copy.
        Path emu = dir.resolve("emu");
        try (Stream<Path> files = Files.walk(FrontEnd.REPO.resolve("native/emu"))) {
            for (Path p : files.toList()) {
                Path to = emu.resolve(FrontEnd.REPO.resolve("native/emu").relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(p, to);
                }
            }
        }
        assertEquals(5, build(emu.resolve("frontend"), source, "d"), "the emulator's path");
        assertEquals(5, build(emu.resolve("frontend"), source, "e"), "the copy's second build of the same inputs");
        Files.writeString(emu.resolve("emu_limits.h"), "// changed\n", java.nio.file.StandardOpenOption.APPEND);
        assertEquals(6, build(emu.resolve("frontend"), source, "f"), "a changed emulator header");
        assertEquals(7, Stream.of("a", "b", "c", "c2", "d", "e", "f")
                .filter(d -> Files.exists(dir.resolve(d).resolve("libk.so"))).count());
    }
}
