package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import io.attnproof.fixtures.claim.ClaimId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One ledger row: a claim on one backend, its status over all its evidence lines and the line shown for it.
 *
 * @param status the row's verdict over all its lines ({@link Status})
 * @param worst  the line nearest (or furthest past) its limit: among the failing lines if any, else among the
 *               measured lines, the first with the smallest {@link Margin} in {@link Margin#compareTo} order
 *               (finite factors, then exact checks, then infinite factors, then lines without a margin)
 */
public record ClaimRow(String claim, String sentence, String backend, Status status, int lines, EvidenceLine worst,
        Margin margin) {

    /** A row's verdict over all its evidence lines. */
    public enum Status {
        /** No line failed and at least one was measured. */
        PASS,
        /** A line's numbers fail. */
        FAIL,
        /** Every counted line is a skip. */
        SKIP,
        /** A line's recorded verdict contradicts its numbers: counted as a failure. */
        INCONSISTENT,
        /** Only informational lines: nothing was checked. */
        INFO;

        /** Whether a row of this status fails the ledger. */
        public boolean failing() {
            return this == FAIL || this == INCONSISTENT;
        }
    }

    /** The catalog sentence of {@code claim}, or a note when the id is not in the catalog. */
    public static String sentence(String claim) {
        try {
            return ClaimId.of(claim).sentence();
        } catch (IllegalArgumentException e) {
            return "(not in the catalog of docs/claims.md)";
        }
    }

    /** Rows of {@code lines} grouped by (claim, backend): catalog order, then backends by name. */
    public static List<ClaimRow> of(List<EvidenceLine> lines) {
        Map<String, Map<String, List<EvidenceLine>>> groups = new TreeMap<>(ClaimRow::compareClaims);
        for (EvidenceLine line : lines) {
            groups.computeIfAbsent(line.claim(), k -> new TreeMap<>()).computeIfAbsent(line.backend(),
                    k -> new ArrayList<>()).add(line);
        }
        List<ClaimRow> rows = new ArrayList<>();
        for (var byClaim : groups.entrySet()) {
            for (var byBackend : byClaim.getValue().entrySet()) {
                List<EvidenceLine> group = byBackend.getValue();
                EvidenceLine worst = worst(group);
                rows.add(new ClaimRow(byClaim.getKey(), sentence(byClaim.getKey()), byBackend.getKey(), status(group),
                        group.size(), worst, Margin.of(worst)));
            }
        }
        return rows;
    }

    /**
     * INCONSISTENT (a line's own verdict contradicts its numbers: a failure), FAIL (a line's numbers fail), SKIP
     * (every line a skip), INFO (only informational lines: nothing was checked), else PASS.
     */
    static Status status(List<EvidenceLine> group) {
        if (group.stream().anyMatch(EvidenceLine::inconsistent)) {
            return Status.INCONSISTENT;
        }
        if (group.stream().anyMatch(l -> !l.passed())) {
            return Status.FAIL;
        }
        List<EvidenceLine> counted = group.stream().filter(l -> !l.isInfo()).toList();
        if (counted.isEmpty()) {
            return Status.INFO;
        }
        return counted.stream().allMatch(EvidenceLine::isSkip) ? Status.SKIP : Status.PASS;
    }

    static EvidenceLine worst(List<EvidenceLine> group) {
        List<EvidenceLine> failing = group.stream().filter(l -> !l.passed()).toList();
        List<EvidenceLine> candidates = !failing.isEmpty() ? failing
                : group.stream().filter(l -> !l.isSkip() && !l.isDegeneracy() && !l.isInfo()).toList();
        if (candidates.isEmpty()) {
            return group.stream().filter(l -> !l.isSkip() && !l.isInfo()).findFirst()
                    .orElse(group.stream().filter(l -> !l.isInfo()).findFirst().orElse(group.getFirst()));
        }
        EvidenceLine best = null;
        for (EvidenceLine l : candidates) {
            if (best == null || Margin.of(l).compareTo(Margin.of(best)) < 0) {
                best = l;
            }
        }
        return best;
    }

    /** Catalog order; ids outside the catalog last, by name. */
    public static int compareClaims(String a, String b) {
        int ia = catalogIndex(a);
        int ib = catalogIndex(b);
        return ia != ib ? Integer.compare(ia, ib) : a.compareTo(b);
    }

    private static int catalogIndex(String id) {
        try {
            return ClaimId.of(id).ordinal();
        } catch (IllegalArgumentException e) {
            return Integer.MAX_VALUE;
        }
    }
}
