package io.attnproof.attention.dispatch;

import io.attnproof.attention.backend.Backend;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.EvidenceSink;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;

/**
 * The skip-or-fail rule of the lane claim tests for the B claims (the same system properties as the other lane
 * tests): the cpu lane always runs; the emulated lanes must run unless {@code attnproof.require.emu=false}; the
 * device lanes skip with their probe's reason unless -Pcuda / -Pmetal require them.
 */
final class DispatchLanes {
    private DispatchLanes() {
    }

    static boolean required(Backend lane) {
        return switch (lane.name()) {
            case "cpu" -> true;
            case "cuda-emu", "metal-emu" -> !"false".equals(System.getProperty("attnproof.require.emu"));
            case "cuda" -> Boolean.getBoolean("attnproof.require.cuda");
            case "metal" -> Boolean.getBoolean("attnproof.require.metal");
            default -> true;
        };
    }

    /** One skip line per claim for an unavailable lane, or one failing line per claim and a failure if required. */
    static void probe(Backend lane, Class<?> testClass, List<String> claims) {
        Optional<String> reason = lane.unavailable();
        if (reason.isEmpty()) {
            return;
        }
        EvidenceSink sink = EvidenceSink.fromSystemProperty();
        for (String claim : claims) {
            Evidence ev = Evidence.of(claim, testClass, "lane", sink).backend(lane.name());
            if (required(lane)) {
                try {
                    ev.checkEqual("lane_available: " + reason.get(), 0, 1);
                } catch (AssertionError recorded) {
                    // recorded; the failure is thrown once below
                }
            } else {
                ev.skipped(lane.name(), reason.get());
            }
        }
        if (required(lane)) {
            throw new AssertionError("the " + lane.name() + " lane is required here but cannot run: " + reason.get());
        }
    }

    static void assumeAvailable(Backend lane) {
        Optional<String> reason = lane.unavailable();
        Assumptions.assumeTrue(reason.isEmpty(), () -> lane.name() + " skipped: " + reason.orElse(""));
    }
}
