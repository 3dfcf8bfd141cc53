package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The proof that sharding changes nothing: the whole campaign once unsharded, then split into n shards for each n
 * of {@code -Dmutants.shardProof=2,3} (each shard a separate campaign into its own directory, as a CI runner would
 * run it), the shard files merged by {@link MergeResults}, and the merge compared verdict by verdict with the
 * unsharded run ({@link MergeResults#compare}: same ids, statuses, killers and messages, failing lines with their
 * values both ways, decisive line and margin; only wall times may differ, and a race's counts). Opt-in, since it
 * runs the campaign 1 + |n| times: {@code mvn -B verify -pl mutants -am -Dmutants.shardProof=2,3}. It writes
 * {@code target/mutants/shard-proof/proof.txt}.
 */
class ShardEquivalenceTest {

    @Test
    void mergedShardsGiveExactlyTheUnshardedResults() throws Exception {
        String spec = System.getProperty("mutants.shardProof", "");
        assumeTrue(!spec.isBlank(), "opt-in: -Dmutants.shardProof=2,3 (runs the campaign once per shard count + 1)");
        Campaign.Config base = Campaign.Config.fromSystemProperties();
        Path root = base.out().resolve("shard-proof");
        Campaign.Result whole = new Campaign(config(base, root.resolve("unsharded"), Shard.ALL)).run();
        List<Map<String, Object>> unsharded = ResultsFiles.readJson(whole.resultsFile());
        assertEquals(Campaign.loadCatalog(base.catalog()).size(), unsharded.size(), "the unsharded run covers the catalog");
        List<String> report = new ArrayList<>();
        report.add(String.format(java.util.Locale.ROOT, "unsharded: %s in %.1f s wall", ResultsFiles.headline(unsharded),
                whole.wallSeconds()));
        List<String> allDiffs = new ArrayList<>();
        for (String part : spec.split(",")) {
            int n = Integer.parseInt(part.strip());
            assertTrue(n >= 2, "mutants.shardProof: shard counts must be >= 2, got " + n);
            Path dir = root.resolve(n + "-shards");
            double wall = 0;
            for (int k = 1; k <= n; k++) {
                wall = Math.max(wall, new Campaign(config(base, dir, new Shard(k, n))).run().wallSeconds());
            }
            List<Map<String, Object>> merged = MergeResults.mergeAndWrite(dir, base.catalog());
            List<String> diffs = MergeResults.compare("unsharded", unsharded, n + " shards merged", merged);
            long decisive = merged.stream().filter(r -> MergeResults.decisive(r) != null).count();
            report.add(String.format(java.util.Locale.ROOT,
                    "%d shards merged: %s; %d decisive lines; %s (slowest shard %.1f s wall)", n,
                    ResultsFiles.headline(merged), decisive,
                    diffs.isEmpty() ? "identical to unsharded" : diffs.size() + " difference(s)", wall));
            diffs.forEach(d -> report.add("  " + d));
            allDiffs.addAll(diffs);
        }
        Files.createDirectories(root);
        Files.writeString(root.resolve("proof.txt"), String.join("\n", report) + "\n", StandardCharsets.UTF_8);
        report.forEach(line -> System.out.println("[shard-proof] " + line));
        assertTrue(allDiffs.isEmpty(), "sharded campaigns differ from the unsharded one:\n" + String.join("\n", allDiffs));
    }

    private static Campaign.Config config(Campaign.Config base, Path out, Shard shard) {
        return new Campaign.Config(base.repoRoot(), base.catalog(), base.sutClasses(), base.sutTestClasses(),
                base.fixEvidence(), out, shard, base.only(), base.threads(), base.timeout());
    }
}
