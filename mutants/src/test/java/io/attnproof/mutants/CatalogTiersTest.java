package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The default tier (what every {@code mvn verify} runs) keeps the catalog's reach: every (claim, lane) pair that some
 * curated mutant proves, and every checker of the emulator whose detection paths mutants name ({@code # detects:}
 * race, bounds, launch, barrier, warp: a path's key up to its dot), is proved by a default-tier one, so the sweep
 * tier only adds other bugs of a pair already covered and a checker's other paths (the sweep runs on every push to
 * main that changes native/, campaigns.yml). A lane is where the mutant's code runs: a native lane, or the Java
 * source root it patches; an emulator mutant that names detection paths counts by their checkers, not by its
 * claims.
 */
class CatalogTiersTest {
    static final Path CATALOG = Path.of(System.getProperty("mutants.catalog", "catalog"));

    static String lane(Mutant m) {
        String nativeLane = m.nativeLane();
        return nativeLane != null ? nativeLane : PatchParser.javaRoot(m.files().getFirst().path());
    }

    /** Each (claim, lane) pair and each checker of {@code mutants} with the ids proving it. */
    static Map<String, Set<String>> pairs(List<Mutant> mutants) throws java.io.IOException {
        Map<String, Set<String>> out = new TreeMap<>();
        for (Mutant m : mutants) {
            List<String> paths = detects(m);
            // An emulator mutant that names detection paths counts by their checkers: the sweep tier runs on every
            // push to main that changes native/ (campaigns.yml), so a checker's other paths may wait for it.
            if (paths.isEmpty() || !PatchParser.EMULATOR.equals(lane(m))) {
                for (String c : m.claims()) {
                    out.computeIfAbsent(c + " on " + lane(m), k -> new TreeSet<>()).add(m.id());
                }
            }
            for (String path : paths) {
                out.computeIfAbsent("checker " + path.split("\\.", 2)[0], k -> new TreeSet<>()).add(m.id());
            }
        }
        return out;
    }

    /** The detection paths {@code m}'s header names (the runner does not keep them: PatchParser checked them). */
    static List<String> detects(Mutant m) throws java.io.IOException {
        List<String> out = new java.util.ArrayList<>();
        for (String line : java.nio.file.Files.readAllLines(m.patchFile())) {
            if (line.startsWith("# " + PatchParser.DETECTS + ":")) {
                for (String path : line.substring(line.indexOf(':') + 1).split(",")) {
                    out.add(path.strip());
                }
            }
        }
        return out;
    }

    @Test
    void everyClaimAndLaneOfTheCatalogHasADefaultTierMutant() throws Exception {
        List<Mutant> all = Campaign.loadCatalog(CATALOG);
        List<Mutant> defaults = all.stream().filter(m -> !m.sweep()).toList();
        // Degeneracy: both tiers are populated, else the rule below holds by having nothing to split.
        assertFalse(defaults.isEmpty(), "no default-tier mutant in " + CATALOG);
        assertTrue(defaults.size() < all.size(), "no sweep-tier mutant in " + CATALOG + ": the rule is vacuous");
        Map<String, Set<String>> every = pairs(all);
        Set<String> missing = new TreeSet<>(every.keySet());
        missing.removeAll(pairs(defaults).keySet());
        Map<String, Set<String>> uncovered = new TreeMap<>();
        missing.forEach(p -> uncovered.put(p, every.get(p)));
        assertTrue(every.keySet().stream().anyMatch(k -> k.startsWith("checker ")), "no mutant names a"
                + " detection path: the rule's second half is vacuous");
        assertEquals(Map.of(), uncovered, "(claim, lane) pairs or checkers proved only by sweep-tier mutants:"
                + " move one of each to the default tier (drop its '# tier: sweep')");
        // The second half has teeth: some checker has paths in both tiers, so a rule by path would differ.
        Set<String> sweepPaths = new TreeSet<>();
        for (Mutant m : all) {
            if (m.sweep()) {
                sweepPaths.addAll(detects(m));
            }
        }
        assertFalse(sweepPaths.isEmpty(), "no sweep-tier mutant names a detection path: the checker rule is the path"
                + " rule");
    }
}
