package io.attnproof.mutants;

import java.util.ArrayList;
import java.util.List;

/** Shard {@code k} of {@code n} (1-based): the mutants at catalog positions {@code i} with {@code i % n == k - 1}. */
public record Shard(int k, int n) {
    /** The whole catalog. */
    public static final Shard ALL = new Shard(1, 1);

    public Shard {
        if (n < 1 || k < 1 || k > n) {
            throw new IllegalArgumentException("mutants.shard = " + k + "/" + n + ": must be k/n with 1 <= k <= n");
        }
    }

    /** Parses {@code k/n}; null or blank is {@link #ALL}. */
    public static Shard parse(String text) {
        if (text == null || text.isBlank()) {
            return ALL;
        }
        String[] parts = text.strip().split("/", -1);
        try {
            if (parts.length == 2) {
                return new Shard(Integer.parseInt(parts[0].strip()), Integer.parseInt(parts[1].strip()));
            }
        } catch (NumberFormatException e) {
            // falls through to the message below
        }
        throw new IllegalArgumentException("mutants.shard = \"" + text + "\": must be k/n with 1 <= k <= n, e.g. 2/4");
    }

    /** Whether this is the whole catalog in one run. */
    public boolean all() {
        return n == 1;
    }

    /** The items of {@code catalog} (in catalog order) this shard runs. */
    public <T> List<T> select(List<T> catalog) {
        List<T> out = new ArrayList<>();
        for (int i = 0; i < catalog.size(); i++) {
            if (i % n == k - 1) {
                out.add(catalog.get(i));
            }
        }
        return out;
    }

    /** The results file of this shard: {@code results.json} for the whole catalog, else {@code results-k-of-n.json}. */
    public String resultsFile() {
        return all() ? "results.json" : "results-" + k + "-of-" + n + ".json";
    }

    @Override
    public String toString() {
        return k + "/" + n;
    }
}
