package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The campaign, as {@code mvn verify} runs it: every curated mutant of {@code catalog/} in the default tier
 * ({@code -Dmutants.tier=all}: the sweep tier too; {@code -Dmutants.shard=k/n}: this shard's share) applied, compiled
 * and run against the tests of the claims it names. Fails when a mutant survives, is stale or times out.
 */
class CuratedMutantsTest {

    @Test
    void everyCuratedMutantIsKilled() throws Exception {
        Campaign.Config config = Campaign.Config.fromSystemProperties();
        Campaign.Result result = new Campaign(config).run();
        System.out.printf("[mutants] %s -> %s (%.1f s wall, %d threads)%n",
                ResultsFiles.headline(ResultsFiles.readJson(result.resultsFile())), result.resultsFile(),
                result.wallSeconds(), result.threads());
        assertTrue(!result.mutants().isEmpty() || !config.only().isEmpty() || !config.shard().all(),
                "the catalog " + config.catalog() + " holds no mutant");
        List<MutantResult> bad = result.notKilled();
        if (!bad.isEmpty()) {
            fail(bad.size() + " curated mutant(s) not killed (see " + result.resultsFile() + "):\n" + bad.stream()
                    .map(m -> "  " + m.id() + ": " + m.status().json() + (m.detail() == null ? "" : " — " + m.detail()))
                    .collect(Collectors.joining("\n")));
        }
    }
}
