package io.attnproof.ledger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The ledger's first view: one row per claim (its sentence once), one column per lane and engine (the system's lanes
 * in ledger order, then the engines judged by the corpus by name), each cell the claim's status and margin on that
 * backend, linking to the detail row of the claims × backends table below. Cross-lane pairs ({@code a-vs-b}, X1's
 * comparisons) get no column of their own: one "pairs" cell per claim gives their worst status and their number,
 * linking to the first failing (else the first) pair's detail row.
 */
public final class ClaimMatrix {
    /** The system's lanes, in ledger order; other backends (engines judged by the corpus, X1 pairs) follow by name. */
    public static final List<String> LANES = List.of("cpu", "cuda-emu", "metal-emu", "cuda", "metal");

    private ClaimMatrix() {
    }

    /** Whether {@code backend} names a cross-lane pair ({@code "<a>-vs-<b>"}). */
    public static boolean isPair(String backend) {
        return backend.contains("-vs-");
    }

    /**
     * The columns: the lanes that have evidence, in {@link #LANES} order, then the other backends by name; pairs
     * are summarised in one "pairs" cell instead ({@link #pairs}).
     */
    public static List<String> columns(List<ClaimRow> rows) {
        Set<String> present = new LinkedHashSet<>();
        rows.stream().filter(r -> !isPair(r.backend())).forEach(r -> present.add(r.backend()));
        List<String> out = new ArrayList<>();
        for (String lane : LANES) {
            if (present.contains(lane)) {
                out.add(lane);
            }
        }
        present.stream().filter(b -> !LANES.contains(b)).sorted().forEach(out::add);
        return out;
    }

    /** Claim -> backend -> row, claims in catalog order (the rows' order). */
    public static Map<String, Map<String, ClaimRow>> cells(List<ClaimRow> rows) {
        Map<String, Map<String, ClaimRow>> out = new LinkedHashMap<>();
        for (ClaimRow r : rows) {
            out.computeIfAbsent(r.claim(), k -> new LinkedHashMap<>()).put(r.backend(), r);
        }
        return out;
    }

    /**
     * The pair rows of one claim summarised: null when it has none, else the row to link to (the first failing
     * one, else the first) and the status shown: FAIL/INCONSISTENT if any pair fails, else PASS if any passed,
     * else SKIP.
     */
    static Pairs pairs(Map<String, ClaimRow> byBackend) {
        List<ClaimRow> pairs = byBackend.values().stream().filter(r -> isPair(r.backend())).toList();
        if (pairs.isEmpty()) {
            return null;
        }
        ClaimRow failing = pairs.stream().filter(r -> r.status().failing()).findFirst().orElse(null);
        ClaimRow.Status status = failing != null ? failing.status()
                : pairs.stream().anyMatch(r -> r.status() == ClaimRow.Status.PASS) ? ClaimRow.Status.PASS
                : ClaimRow.Status.SKIP;
        return new Pairs(failing != null ? failing : pairs.getFirst(), status, pairs.size());
    }

    /** A claim's pair rows in one cell: the row linked, the status shown, how many pairs. */
    record Pairs(ClaimRow link, ClaimRow.Status status, int count) {
        String text() {
            return status + " (" + count + (count == 1 ? " pair)" : " pairs)");
        }
    }

    /** The anchor of the detail row of (claim, backend). */
    public static String anchor(String claim, String backend) {
        return "detail-" + (claim + "-" + backend).replaceAll("[^A-Za-z0-9_.-]", "_");
    }

}
