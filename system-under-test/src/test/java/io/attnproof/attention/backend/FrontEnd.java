package io.attnproof.attention.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The front end (native/emu/frontend/cuda2emu.py, libclang's Python bindings under /usr/bin/python3) seen from the
 * tests: whether it is usable here (else the tests that need it SKIP with the reason), and a source built through it
 * into target/frontend (rebuilt only when the source or the front end changed).
 */
final class FrontEnd {
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    static final Path DIR = REPO.resolve("native/emu/frontend");
    static final String PYTHON = "/usr/bin/python3";
    private static String unavailable;
    private static boolean probed;

    private FrontEnd() {}

    /** Null when the front end can run; else why not (the SKIP reason). */
    static synchronized String unavailableReason() {
        if (!probed) {
            probed = true;
            try {
                Result r = run(List.of(PYTHON, "-c", "import clang.cindex as c; c.Index.create()"), null);
                unavailable = r.code == 0 ? null : "libclang's Python bindings are not usable by " + PYTHON
                        + " (bin/install-frontend.sh installs them): " + r.output.strip();
            } catch (IOException e) {
                unavailable = PYTHON + " cannot run: " + e.getMessage();
            }
        }
        return unavailable;
    }

    record Result(int code, String output) {}

    static Result run(List<String> command, java.util.Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        if (env != null) pb.environment().putAll(env);
        Process p = pb.start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException(command + " timed out");
            }
            return new Result(p.exitValue(), out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running " + command, e);
        }
    }

    /** {@code cuda2emu.py <source> <out.cpp>}: exit code and stderr + stdout. */
    static Result translate(Path source, Path out) throws IOException {
        return run(List.of(PYTHON, DIR.resolve("cuda2emu.py").toString(), source.toString(), out.toString()), null);
    }

    /** Builds {@code source} through build-cu.sh into target/frontend/lib{name}.so (at -O0: the tests' build, which compiles in less than half the time). */
    static synchronized Path build(Path source, String name) throws IOException {
        // A native mutant's own build (the mutant runner's folder, named by attnproof.native.dir) comes first.
        String nativeDir = System.getProperty("attnproof.native.dir");
        if (nativeDir != null && Files.isRegularFile(Path.of(nativeDir, "lib" + name + ".so"))) {
            return Path.of(nativeDir, "lib" + name + ".so").toAbsolutePath();
        }
        Path out = Path.of("target", "frontend").toAbsolutePath();
        Path lib = out.resolve("lib" + name + ".so");
        if (Files.exists(lib) && newerThanInputs(lib, source)) return lib;
        Result r = run(List.of("bash", DIR.resolve("build-cu.sh").toString(), source.toString(), out.toString(), name),
                java.util.Map.of("ATTNPROOF_FRONTEND_OPT", "0"));
        if (r.code != 0) throw new AssertionError("build-cu.sh " + source + " failed (" + r.code + "):\n" + r.output);
        return lib;
    }

    private static boolean newerThanInputs(Path lib, Path source) throws IOException {
        List<Path> inputs = new ArrayList<>(List.of(source));
        try (var s = Files.list(DIR)) {
            s.filter(Files::isRegularFile).forEach(inputs::add);
        }
        try (var s = Files.list(REPO.resolve("native/emu"))) {
            s.filter(p -> p.toString().endsWith(".h")).forEach(inputs::add);
        }
        var built = Files.getLastModifiedTime(lib);
        for (Path p : inputs) {
            if (Files.getLastModifiedTime(p).compareTo(built) > 0) return false;
        }
        return true;
    }
}
