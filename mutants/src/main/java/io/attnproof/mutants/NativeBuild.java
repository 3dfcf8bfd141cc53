package io.attnproof.mutants;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A native mutant's own build: its patched kernel source written into the mutant's folder and compiled there by
 * {@code native/emu/build.sh} into that lane's emulation library (the other lanes' libraries are linked from the
 * normal build), so the mutant's claim tests load it through {@code attnproof.native.dir} while other mutants and the
 * normal build keep theirs. An emulator mutant (a patched {@code native/emu} file) copies the emulator into its folder
 * and builds every library there through the copy: the lanes, the plain builds and the fidelity probes. A source
 * that does not compile makes the mutant stale.
 */
final class NativeBuild {
    /** The system property the native lanes read their libraries' directory from. */
    static final String DIR_PROPERTY = "attnproof.native.dir";
    /** The simple-name prefix of the claim test classes of each emulated lane. */
    private static final List<List<String>> LANE_TESTS = List.of(List.of("cuda-emu", "CudaEmu"),
            List.of("metal-emu", "MetalEmu"), List.of("cuda-frontend", "Fa2Sinks"),
            List.of("metal-frontend", "MetalSinksDecode"));
    /**
     * Claims whose tests are lane-neutral but read what a lane was built from: a native mutant naming one of them
     * runs these classes too (X1 compares the lanes' outputs; N3 hashes the source the lane was built from).
     */
    private static final java.util.Map<String, String> LANE_NEUTRAL = java.util.Map.of("X1", "CrossLane", "N3",
            "KernelSources");
    private static final long BUILD_SECONDS = 180;
    /**
     * The libraries an emulator mutant rebuilds, by the claims its tests check (build.sh's groups): N4's probes; N5's
     * checked lanes, held against the normal build's plain ones (a patched emulator is judged against the unpatched
     * plain build); N1's checked lanes and probes (the race checker runs only there: RaceClaims on cuda-emu and
     * metal-emu, each kind of race on the probes, CheckerPathsTest); a
     * claim not listed rebuilds every group. A patch's {@code # builds:} line names its groups instead (mutant 91
     * changes the cuda-emu line of build.sh only). The rest come from the normal build, so a fault only another
     * group shows can only survive, never pass for a kill.
     */
    private static final java.util.Map<String, String> EMULATOR_BUILDS = java.util.Map.of("N4", "fidelity", "N5",
            "cuda-emu,metal-emu", "N1", "cuda-emu,fidelity,metal-emu");

    /** build.sh's groups for an emulator mutant of {@code claims}: its {@code # builds:} groups where it names any. */
    static String emulatorBuilds(List<String> claims, List<String> builds) {
        if (!builds.isEmpty()) {
            return String.join(",", builds);
        }
        Set<String> groups = new TreeSet<>();
        for (String c : claims) {
            String g = EMULATOR_BUILDS.get(c);
            if (g == null) {
                return String.join(",", PatchParser.BUILD_GROUPS);
            }
            groups.addAll(List.of(g.split(",")));
        }
        return String.join(",", groups);
    }

    /** The fidelity probe kernels (claim N4) an emulator mutant's build compiles too. */
    static final String FIDELITY_PROBES = "system-under-test/src/test/resources/emu-kernels";

    private NativeBuild() {
    }

    /**
     * Builds mutant {@code m}'s library into {@code dir} (emptied first) from {@code patched}, the text of its one
     * kernel source after the patch; {@code normal} is the normal build's native directory.
     *
     * @throws StaleException when the patched source does not compile (with the compiler's last lines)
     */
    static void build(Path repoRoot, Path normal, Path dir, Mutant m, String patched) throws StaleException {
        String lane = m.nativeLane();
        Path original = repoRoot.resolve(m.files().getFirst().path());
        boolean emulator = lane.equals(PatchParser.EMULATOR);
        try {
            deleteTree(dir);
            Path buildScript = repoRoot.resolve("native/emu/build.sh");
            Path src;
            if (emulator) {
                Path emu = dir.resolve("emu");
                copyTree(repoRoot.resolve("native/emu"), emu);
                src = emu.resolve(repoRoot.resolve("native/emu").relativize(original));
                buildScript = emu.resolve("build.sh");
            } else {
                src = Files.createDirectories(dir.resolve("src")).resolve(original.getFileName());
            }
            Files.writeString(src, patched, StandardCharsets.UTF_8);
            Path cu = lane.equals("cuda-emu") ? src : repoRoot.resolve("native/cuda/sinks_attn.cu");
            Path msl = lane.equals("metal-emu") ? src : repoRoot.resolve("native/metal/sinks_attn.metal");
            String stem = original.getFileName().toString().replaceFirst("\\.(cu|metal)$", "");
            List<String> command;
            if (lane.equals("cuda-frontend") || lane.equals("metal-frontend")) {
                // A standard-dialect source: the front end's build, lib<stem>.so in the mutant's folder (its tests
                // look there first, through attnproof.native.dir).
                String script = lane.equals("cuda-frontend") ? "build-cu.sh" : "build-metal.sh";
                command = List.of("bash", repoRoot.resolve("native/emu/frontend/" + script).toString(),
                        src.toString(), dir.toString(), stem);
            } else {
                command = new java.util.ArrayList<>(List.of("bash", buildScript.toString(), dir.toString(),
                        cu.toString(), msl.toString()));
                if (emulator) {
                    command.add(repoRoot.resolve(FIDELITY_PROBES).toString());
                }
            }
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().put("ATTNPROOF_EMU_ONLY", emulator ? emulatorBuilds(m.claims(), m.builds()) : lane);
            pb.environment().put("ATTNPROOF_FRONTEND_OPT", "0");
            pb.environment().remove("ATTNPROOF_BUILD_CACHE"); // a mutant's own build is never built again
            if (!emulator || !m.claims().contains("N5")) {
                // At -O0 (clang++ where installed, native/emu/cxx.sh): a fraction of the compile time, the -O2
                // lanes' bits on the claim inputs (OptLevelBitsTest). An emulator mutant of N5 keeps the normal
                // build's level: N5 holds the checked lanes to the normal build's plain ones, and a flag such as
                // FMA contraction changes bits only where the optimiser acts.
                pb.environment().put("ATTNPROOF_EMU_OPT", "0");
            }
            Path log = dir.resolve("build.log");
            pb.redirectOutput(log.toFile());
            Process p = pb.start();
            if (!p.waitFor(BUILD_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new StaleException("the " + lane + " build of the patched " + original.getFileName()
                        + " ran past " + BUILD_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                throw new StaleException("the patched " + original.getFileName() + " does not compile for " + lane
                        + ":\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())));
            }
            // The other lanes' libraries: the normal build's.
            try (Stream<Path> libs = Files.list(normal)) {
                for (Path lib : libs.filter(f -> f.getFileName().toString().endsWith(".so")).toList()) {
                    Path mine = dir.resolve(lib.getFileName());
                    if (!Files.exists(mine)) {
                        Files.createSymbolicLink(mine, lib.toAbsolutePath());
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot build native mutant " + m.id() + " in " + dir, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StaleException("interrupted while building native mutant " + m.id());
        }
    }

    /**
     * The claim test classes a native mutant of {@code lane} runs: those of its claims that test that lane (by the
     * lane's class-name prefix), plus the lane-neutral classes of {@link #LANE_NEUTRAL} for the claims it names; an
     * emulator mutant runs every class of its claims.
     */
    static Set<String> laneClasses(String lane, Set<String> classes, List<String> claims) {
        if (lane.equals(PatchParser.EMULATOR)) {
            return new TreeSet<>(classes); // the emulator runs under every lane: all of its claims' classes
        }
        String prefix = LANE_TESTS.stream().filter(l -> l.get(0).equals(lane)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("lane = " + lane + ": no emulated lane of that name"))
                .get(1);
        Set<String> out = new TreeSet<>();
        for (String c : classes) {
            String simple = c.substring(c.lastIndexOf('.') + 1);
            boolean neutral = claims.stream().map(LANE_NEUTRAL::get)
                    .anyMatch(n -> n != null && simple.startsWith(n));
            if (simple.startsWith(prefix) || neutral) {
                out.add(c);
            }
        }
        return out;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
