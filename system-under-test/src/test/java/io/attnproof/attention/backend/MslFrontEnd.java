package io.attnproof.attention.backend;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The MSL front end (native/emu/frontend/msl2emu.py, build-metal.sh) seen from the tests: a standard {@code .metal}
 * source translated, or built into target/frontend/lib{name}.so (rebuilt only when the source or the front end
 * changed; a mutant's own build, in the runner's {@code attnproof.native.dir}, comes first), and its kernels launched
 * through the metal-emu C API ({@code attnproof_emu_launch}) with the host's choices as data: kernel name, grid,
 * threadgroup size, buffers by index, threadgroup memory lengths.
 */
final class MslFrontEnd {
    /** emu_host.h's argument kinds, and msl_launch.h's threadgroup memory length. */
    static final int ARG_I32 = 0;
    static final int ARG_F32_BUF = 2;
    static final int ARG_I32_BUF = 3;
    static final int ARG_NULL = 4;
    static final int ARG_BYTES = 5;
    static final int ARG_THREADGROUP = 6;
    /** emu_state.h's launch results. */
    static final int LAUNCH_OK = 0;
    static final int LAUNCH_BAD_SIGNATURE = 11;
    static final int LAUNCH_FAULT = 12;
    static final int LAUNCH_BAD_CONFIG = 14;
    static final int LAUNCH_RACE = 15;

    private MslFrontEnd() {}

    /** {@code msl2emu.py <source> <out.cpp>}: exit code and stderr + stdout. */
    static FrontEnd.Result translate(Path source, Path out) throws IOException {
        return FrontEnd.run(List.of(FrontEnd.PYTHON, FrontEnd.DIR.resolve("msl2emu.py").toString(), source.toString(),
                out.toString()), null);
    }

    /** Builds {@code source} through build-metal.sh at -O0 (the tests' build) into target/frontend/lib{name}.so. */
    static synchronized Path build(Path source, String name) throws IOException {
        String nativeDir = System.getProperty("attnproof.native.dir");
        if (nativeDir != null && Files.isRegularFile(Path.of(nativeDir, "lib" + name + ".so"))) {
            return Path.of(nativeDir, "lib" + name + ".so").toAbsolutePath();
        }
        Path out = Path.of("target", "frontend").toAbsolutePath();
        Path lib = out.resolve("lib" + name + ".so");
        if (Files.exists(lib) && newerThanInputs(lib, source)) return lib;
        FrontEnd.Result r = FrontEnd.run(List.of("bash", FrontEnd.DIR.resolve("build-metal.sh").toString(),
                source.toString(), out.toString(), name), Map.of("ATTNPROOF_FRONTEND_OPT", "0"));
        if (r.code() != 0) {
            throw new AssertionError("build-metal.sh " + source + " failed (" + r.code() + "):\n" + r.output());
        }
        return lib;
    }

    private static boolean newerThanInputs(Path lib, Path source) throws IOException {
        List<Path> inputs = new ArrayList<>(List.of(source));
        for (Path dir : List.of(FrontEnd.DIR, FrontEnd.REPO.resolve("native/emu"), FrontEnd.REPO.resolve("native/emu/metal"))) {
            try (var s = Files.list(dir)) {
                s.filter(Files::isRegularFile).forEach(inputs::add);
            }
        }
        var built = Files.getLastModifiedTime(lib);
        for (Path p : inputs) {
            if (Files.getLastModifiedTime(p).compareTo(built) > 0) return false;
        }
        return true;
    }

    /** One binding of a launch: an argument kind, its value (an address for a buffer) and its length. */
    record Arg(int kind, long value, long length) {
        static Arg floats(MemorySegment s) {
            return new Arg(ARG_F32_BUF, s.address(), s.byteSize() / 4);
        }

        static Arg ints(MemorySegment s) {
            return new Arg(ARG_I32_BUF, s.address(), s.byteSize() / 4);
        }

        static Arg bytes(MemorySegment s) {
            return new Arg(ARG_BYTES, s.address(), s.byteSize());
        }

        static Arg none() {
            return new Arg(ARG_NULL, 0, 0);
        }

        static Arg threadgroup(int index, long bytes) {
            return new Arg(ARG_THREADGROUP, index, bytes);
        }
    }

    /** A launch's result: the code and the library's message (empty when it succeeded). */
    record Launch(int code, String message) {}

    /** A library built by the front end, loaded once. */
    static final class Lib {
        private final MethodHandle launch;

        Lib(Path so) {
            SymbolLookup l = SymbolLookup.libraryLookup(so, Arena.global());
            Linker linker = Linker.nativeLinker();
            launch = linker.downcallHandle(l.find("attnproof_emu_launch").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        }

        /** Launches {@code kernel} on {@code grid} threadgroups of {@code threads} threads (x only). */
        Launch run(String kernel, int[] grid, int threads, List<Arg> args) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment dims = a.allocateFrom(ValueLayout.JAVA_LONG, grid[0], grid[1], grid[2], threads, 1, 1);
                int n = args.size();
                MemorySegment kinds = a.allocate(ValueLayout.JAVA_INT, Math.max(1, n));
                MemorySegment values = a.allocate(ValueLayout.JAVA_LONG, Math.max(1, n));
                MemorySegment lengths = a.allocate(ValueLayout.JAVA_LONG, Math.max(1, n));
                for (int i = 0; i < n; i++) {
                    kinds.setAtIndex(ValueLayout.JAVA_INT, i, args.get(i).kind());
                    values.setAtIndex(ValueLayout.JAVA_LONG, i, args.get(i).value());
                    lengths.setAtIndex(ValueLayout.JAVA_LONG, i, args.get(i).length());
                }
                MemorySegment err = a.allocate(4096);
                int rc = (int) launch.invokeExact(a.allocateFrom(kernel), dims, n, kinds, values, lengths, err, 4096L);
                return new Launch(rc, err.getString(0));
            } catch (Throwable t) {
                throw new AssertionError("attnproof_emu_launch " + kernel, t);
            }
        }
    }
}
