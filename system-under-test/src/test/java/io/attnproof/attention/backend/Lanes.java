package io.attnproof.attention.backend;

import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.EvidenceSink;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * What every lane's claim tests share: whether a lane must run here, the skip-or-fail decision with its evidence
 * line, and a per-JVM memo so that the fp64 oracles of a case are computed once for all lanes.
 */
final class Lanes {
    /** The system property that makes the cuda lane's tests fail instead of skip (set by -Pcuda). */
    static final String REQUIRE_CUDA = "attnproof.require.cuda";
    /** The system property that makes the metal lane's tests fail instead of skip (set by -Pmetal). */
    static final String REQUIRE_METAL = "attnproof.require.metal";
    /**
     * Set to {@code false} only where the emulated lanes are not the point and may not load (the CUDA device bundle
     * on a machine whose C++ runtime is older than the build machine's); they are required everywhere else.
     */
    static final String REQUIRE_EMU = "attnproof.require.emu";

    private static final Map<Object, Object> MEMO = new ConcurrentHashMap<>();

    private Lanes() {
    }

    /**
     * Whether {@code lane} must run here: the CPU lane always, the emulated lanes unless {@link #REQUIRE_EMU} is
     * {@code false} (gcc is on every build machine, and a missing library is a broken build), the device lanes when
     * their profile asks for them.
     */
    static boolean required(Backend lane) {
        boolean emu = !"false".equals(System.getProperty(REQUIRE_EMU));
        return switch (lane) {
            case Cpu c -> true;
            case CudaEmu c -> emu && (!c.contracted() || fmaBuilt());
            case MetalEmu m -> emu;
            case Cuda c -> Boolean.getBoolean(REQUIRE_CUDA);
            case Metal m -> Boolean.getBoolean(REQUIRE_METAL);
        };
    }

    /**
     * Whether native/emu/build.sh built the FMA-contraction library: it does wherever the CPU has FMA instructions
     * (and says so where it does not), so its absence elsewhere is a broken build.
     */
    static boolean fmaBuilt() {
        String arch = System.getProperty("os.arch", "");
        if (arch.equals("aarch64") || arch.equals("arm64")) {
            return true;
        }
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/cpuinfo")).matches("(?s).*\\bfma\\b.*");
        } catch (java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Before a lane's tests: when the lane is unavailable, either writes one {@code "skipped"} evidence line per
     * claim under the lane (and the tests then skip with the reason), or, when the lane is required, one failing
     * line per claim and throws: a required lane never skips.
     */
    static void probe(Backend lane, Class<?> testClass, List<String> claims) {
        Optional<String> reason = lane.unavailable();
        if (reason.isEmpty()) {
            return;
        }
        EvidenceSink sink = EvidenceSink.fromSystemProperty();
        for (String claim : claims) {
            Evidence ev = Evidence.of(claim, testClass, "lane", sink).backend(lane.name());
            if (required(lane)) {
                recordUnavailable(ev, reason.get());
            } else {
                ev.skipped(lane.name(), reason.get());
            }
        }
        if (required(lane)) {
            throw new AssertionError("the " + lane.name() + " lane is required here (" + requiredBy(lane)
                    + ") but cannot run: " + reason.get());
        }
    }

    /** Skips the running test with the lane's reason when the lane cannot run here. */
    static void assumeAvailable(Backend lane) {
        Optional<String> reason = lane.unavailable();
        Assumptions.assumeTrue(reason.isEmpty(), () -> lane.name() + " skipped: " + reason.orElse(""));
    }

    /**
     * Skips the running test with the lane's reason when the lane cannot run here, after writing that reason as the
     * test's evidence line ({@code ev.skipped(lane, reason)}): no skip goes unrecorded.
     */
    static void assumeAvailable(Backend lane, Evidence ev) {
        Optional<String> reason = lane.unavailable();
        reason.ifPresent(r -> ev.skipped(lane.name(), r));
        Assumptions.assumeTrue(reason.isEmpty(), () -> lane.name() + " skipped: " + reason.orElse(""));
    }

    private static String requiredBy(Backend lane) {
        return switch (lane) {
            case Cuda c -> "-Pcuda sets " + REQUIRE_CUDA;
            case Metal m -> "-Pmetal sets " + REQUIRE_METAL;
            case CudaEmu c -> "the emulated lanes run on every build (" + REQUIRE_EMU + " is not false)";
            case MetalEmu m -> "the emulated lanes run on every build (" + REQUIRE_EMU + " is not false)";
            case Cpu c -> "the cpu lane runs everywhere";
        };
    }

    /** The value memoised under {@code key}, computed once per JVM. */
    @SuppressWarnings("unchecked")
    static <T> T memo(Object key, Supplier<T> compute) {
        return (T) MEMO.computeIfAbsent(key, k -> compute.get());
    }

    /** A required lane that cannot run: one failing check line (available 0, must be 1) naming the reason. */
    static void recordUnavailable(Evidence ev, String reason) {
        try {
            ev.checkEqual("lane_available: " + reason, 0, 1);
        } catch (AssertionError recorded) {
            // recorded as a failing line; the caller fails the test once for all claims
        }
    }
}
