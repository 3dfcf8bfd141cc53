package io.attnproof.ledger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The emulator's detection paths (what PIT cannot reach: native/emu), each with the curated mutants whose catalog
 * header names it ({@code # detects: key, key}) and that died: a path is proven only by a killed mutant.
 */
public final class DetectionPaths {

    /** One way the emulator's checkers turn a kernel fault into a failed launch or a failed check line. */
    public record Path(String key, String checker, String what) {
    }

    /** Every detection path, in the order the ledger lists them. */
    public static final List<Path> ALL = List.of(
            new Path("race.write-after-write", "race checker",
                    "two threads write one shared element in one barrier interval (EMU_SHARED_MEMORY_RACE)"),
            new Path("race.read-after-write", "race checker",
                    "a thread reads a shared element another wrote in the same interval (EMU_SHARED_MEMORY_RACE)"),
            new Path("race.write-after-read", "race checker",
                    "a thread writes a shared element another read in the same interval (EMU_SHARED_MEMORY_RACE)"),
            new Path("bounds.global", "bounds checker",
                    "a read or write past a device buffer (EMU_OUT_OF_BOUNDS, cudaErrorIllegalAddress)"),
            new Path("bounds.shared", "bounds checker",
                    "a read or write past a shared / threadgroup array (EMU_OUT_OF_BOUNDS)"),
            new Path("launch.limits", "launch limits",
                    "a grid, block or shared-memory size past the device's limit (EMU_INVALID_LAUNCH_CONFIG)"),
            new Path("barrier.deadlock", "scheduler (fibers)",
                    "a barrier some threads of the block never reach (EMU_DEADLOCK)"),
            new Path("barrier.block-scope", "scheduler (fibers)",
                    "a block barrier releases only when every warp reached it, whatever their shuffles"),
            new Path("warp.misuse", "scheduler (fibers)",
                    "a warp operation whose mask, width or source lane the device leaves undefined (EMU_WARP_MISUSE)"));

    private DetectionPaths() {
    }

    /** The path named {@code key}; an unknown key is refused naming the key and every path. */
    public static Path of(String key) {
        for (Path p : ALL) {
            if (p.key().equals(key)) {
                return p;
            }
        }
        throw new IllegalArgumentException("detects = \"" + key + "\" must be one of "
                + ALL.stream().map(Path::key).toList());
    }

    /** Each path (in {@link #ALL}'s order) with the mutants whose header names it, killed or not. */
    public static Map<Path, List<MutantReport.Mutant>> byPath(MutantReport report) {
        Map<Path, List<MutantReport.Mutant>> out = new LinkedHashMap<>();
        for (Path p : ALL) {
            List<MutantReport.Mutant> ms = new ArrayList<>();
            for (MutantReport.Mutant m : report.mutants()) {
                if (m.detects().contains(p.key())) {
                    ms.add(m);
                }
            }
            out.put(p, ms);
        }
        return out;
    }

    /** Whether some killed mutant proves {@code p}. */
    public static boolean proven(List<MutantReport.Mutant> mutants) {
        return mutants.stream().anyMatch(MutantReport.Mutant::killed);
    }

    /** The keys of the paths no killed mutant proves, in {@link #ALL}'s order. */
    public static List<String> unproven(MutantReport report) {
        List<String> out = new ArrayList<>();
        byPath(report).forEach((p, ms) -> {
            if (!proven(ms)) {
                out.add(p.key());
            }
        });
        return out;
    }

    /** A path's cell: each mutant naming it with its status ("none" when no mutant names it). */
    static String cell(List<MutantReport.Mutant> mutants) {
        return cell(mutants, List.of());
    }

    /**
     * A path's cell: each mutant of the results naming it with its status, then each catalog mutant naming it that
     * this run did not hold ("not in this run": a sweep-tier one after a default campaign); "none" when no mutant
     * names it.
     */
    static String cell(List<MutantReport.Mutant> mutants, List<String> notRun) {
        List<String> parts = new ArrayList<>(mutants.stream().map(m -> m.id() + " (" + m.status() + ")").toList());
        notRun.forEach(id -> parts.add(id + " (not in this run)"));
        return parts.isEmpty() ? "none" : String.join(", ", parts);
    }

    /** The catalog mutants naming {@code p} that the report's results do not hold, in id order. */
    static List<String> notRun(MutantReport report, Path p) {
        List<String> out = new ArrayList<>();
        report.notRunDetects().forEach((id, keys) -> {
            if (keys.contains(p.key())) {
                out.add(id);
            }
        });
        return out;
    }
}
