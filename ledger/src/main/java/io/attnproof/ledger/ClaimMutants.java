package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import io.attnproof.fixtures.claim.ClaimId;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One claim's teeth, curated and PIT's: the curated mutants that fail one of its check or control lines (its row of
 * the kill matrix, decisive kills apart), the PIT mutations its tests kill, and the open (survived or uncovered)
 * PIT mutations of the classes its tests cover, with their triage verdicts.
 *
 * <p>The join: a claim's tests are the distinct {@code test} values ({@code Class#method}, parameter lists cut) of
 * its evidence lines. A PIT mutation is killed by the claim when one of its killing tests ({@code <killingTest>},
 * or every {@code <killingTests>} name under PIT's full mutation matrix) is one of those methods. A claim covers a
 * class when, under the full mutation matrix, one of its test methods ran against a mutation of that class
 * ({@code <coveringTests>}, {@code <killingTests>}, {@code <succeedingTests>}); without the matrix, when
 * {@code pit/test-scope.tsv} lists one of its test classes for that class; and always when its tests killed a
 * mutation of that class. Evidence names a test class by its simple name; PIT by its full name: they match on the
 * simple name (or the full name, where the evidence gives one).
 *
 * @param tests          the claim's test methods, {@code Class#method}, sorted
 * @param curated        the kill matrix's row: decisive kills first (the mutant's decisive line is this claim's)
 * @param aimed          mutants whose header names the claim but which fail none of its check or control lines
 * @param pitKilled      the PIT mutations its tests kill, in report order
 * @param coverage       where the covered classes come from (matrix, test scope, kills only)
 * @param coveredClasses the mutated classes the claim covers, sorted
 * @param open           the open mutations of those classes, untriaged first, then by class and line
 */
public record ClaimMutants(String claim, String sentence, List<String> tests, List<Curated> curated,
        List<String> aimed, List<PitKill> pitKilled, String coverage, List<String> coveredClasses,
        List<PitReport.Open> open) {

    /** Where the test scope lies, relative to the repository root. */
    public static final Path TEST_SCOPE = Path.of("pit", "test-scope.tsv");

    /** One curated kill of the claim: the margin of the claim's strongest failing line, and where the mutant strikes. */
    public record Curated(String id, double margin, boolean decisive, String source) {
        /** Below {@link MutantReport#FLAG_BELOW}. */
        public boolean flagged() {
            return Double.isNaN(margin) || margin < MutantReport.FLAG_BELOW;
        }
    }

    /** A PIT mutation the claim's tests kill, with those of its tests that killed it ({@code Class#method}). */
    public record PitKill(PitReport.Mutation mutation, List<String> by) {
    }

    public ClaimMutants {
        tests = List.copyOf(tests);
        curated = List.copyOf(curated);
        aimed = List.copyOf(aimed);
        pitKilled = List.copyOf(pitKilled);
        coveredClasses = List.copyOf(coveredClasses);
        open = List.copyOf(open);
    }

    /** How many distinct PIT mutations some claim's tests kill (a mutation two claims kill counts once). */
    public static int attributed(List<ClaimMutants> claims) {
        Set<PitReport.Mutation> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        claims.forEach(c -> c.pitKilled().forEach(k -> seen.add(k.mutation())));
        return seen.size();
    }

    /** The open mutations here that no triage row settles. */
    public long untriaged() {
        return open.stream().filter(o -> !o.triaged()).count();
    }

    /**
     * One entry per catalog claim, in catalog order, then any other claim id of the evidence; {@code mutants},
     * {@code pit} and {@code scope} may each be null (not run; no test scope).
     */
    public static List<ClaimMutants> of(List<EvidenceLine> lines, MutantReport mutants, PitReport pit,
            Map<String, List<String>> scope) {
        Map<String, Set<String>> testsByClaim = new TreeMap<>(ClaimRow::compareClaims);
        for (ClaimId id : ClaimId.values()) {
            testsByClaim.put(id.name(), new TreeSet<>());
        }
        for (EvidenceLine l : lines) {
            Set<String> tests = testsByClaim.computeIfAbsent(l.claim(), k -> new TreeSet<>());
            String t = l.test() == null ? null : claimTest(l.test());
            if (t != null) {
                tests.add(t);
            }
        }
        Map<String, Map<String, Double>> matrix = mutants == null ? Map.of() : mutants.killMatrix();
        Map<String, MutantReport.Mutant> byId = mutants == null ? Map.of() : mutants.byId();
        Map<String, List<String>> names = new HashMap<>();   // PIT test name -> its candidate keys, parsed once
        boolean fullMatrix = pit != null && pit.matrix();
        String coverage = pit == null ? "no PIT report"
                : fullMatrix ? "PIT's full mutation matrix (the tests that ran against each mutation)"
                : scope != null ? TEST_SCOPE + " (the test classes that run each class)"
                : "the kills only (no full mutation matrix, no " + TEST_SCOPE + ")";
        List<ClaimMutants> out = new ArrayList<>();
        for (Map.Entry<String, Set<String>> e : testsByClaim.entrySet()) {
            String claim = e.getKey();
            Set<String> tests = e.getValue();
            Set<String> testClasses = new LinkedHashSet<>();
            tests.forEach(t -> testClasses.add(t.substring(0, t.indexOf('#'))));

            List<Curated> curated = new ArrayList<>();
            matrix.getOrDefault(claim, Map.of()).forEach((id, margin) -> {
                MutantReport.Mutant m = byId.get(id);
                MutantReport.Value d = m == null ? null : m.decisive();
                curated.add(new Curated(id, margin, d != null && d.claim().equals(claim), m == null ? null : m.source()));
            });
            curated.sort(Comparator.comparing((Curated c) -> !c.decisive()).thenComparing(Curated::id));
            List<String> aimed = new ArrayList<>();
            if (mutants != null) {
                for (MutantReport.Mutant m : mutants.mutants()) {
                    if (m.claims().contains(claim) && !matrix.getOrDefault(claim, Map.of()).containsKey(m.id())) {
                        aimed.add(m.id());
                    }
                }
            }

            List<PitKill> killed = new ArrayList<>();
            Set<String> covered = new TreeSet<>();
            List<PitReport.Open> open = new ArrayList<>();
            if (pit != null && !tests.isEmpty()) {
                for (PitReport.Mutation m : pit.all()) {
                    List<String> by = new ArrayList<>();
                    for (String k : m.killingTests()) {
                        String hit = match(k, tests, names);
                        if (hit != null && !by.contains(hit)) {
                            by.add(hit);
                        }
                    }
                    if (!by.isEmpty()) {
                        killed.add(new PitKill(m, by));
                        covered.add(m.clazz());
                    }
                    if (fullMatrix && m.coveringTests() != null && !covered.contains(m.clazz())) {
                        for (String c : m.coveringTests()) {
                            if (match(c, tests, names) != null) {
                                covered.add(m.clazz());
                                break;
                            }
                        }
                    }
                }
                if (!fullMatrix && scope != null) {
                    scope.forEach((clazz, testClassList) -> {
                        for (String tc : testClassList) {
                            if (classMatches(tc, testClasses)) {
                                covered.add(clazz);
                                break;
                            }
                        }
                    });
                }
                killed.sort(Comparator.comparing((PitKill k) -> k.mutation().clazz())
                        .thenComparingInt(k -> k.mutation().line()).thenComparing(k -> k.mutation().mutator()));
                for (PitReport.Open o : pit.open()) {
                    if (covered.contains(o.clazz())) {
                        open.add(o);
                    }
                }
                open.sort(Comparator.comparing((PitReport.Open o) -> o.triaged()).thenComparing(PitReport.Open::clazz)
                        .thenComparingInt(PitReport.Open::line));
            }
            out.add(new ClaimMutants(claim, ClaimRow.sentence(claim), List.copyOf(tests), curated, aimed, killed,
                    coverage, List.copyOf(covered), open));
        }
        return out;
    }

    /**
     * Reads a test scope: an optional {@code #} comment, then per line a class, a TAB and its comma-separated test
     * classes; null when {@code tsv} does not exist.
     *
     * @throws IllegalArgumentException naming file and line for a line without a TAB
     */
    public static Map<String, List<String>> readTestScope(Path tsv) throws IOException {
        if (!Files.isRegularFile(tsv)) {
            return null;
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        List<String> text = Files.readAllLines(tsv, StandardCharsets.UTF_8);
        for (int i = 0; i < text.size(); i++) {
            String line = text.get(i);
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int tab = line.indexOf('\t');
            if (tab <= 0) {
                throw new IllegalArgumentException(tsv + ":" + (i + 1) + ": a line is class<TAB>test classes"
                        + " (comma-separated), not: " + line);
            }
            List<String> tests = new ArrayList<>();
            for (String t : line.substring(tab + 1).split(",")) {
                if (!t.isBlank()) {
                    tests.add(t.strip());
                }
            }
            out.computeIfAbsent(line.substring(0, tab).strip(), k -> new ArrayList<>()).addAll(tests);
        }
        return out;
    }

    /** An evidence line's test, {@code Class#method}, cut before a parameter list or invocation suffix. */
    static String claimTest(String test) {
        String t = test.strip();
        int hash = t.indexOf('#');
        if (hash <= 0 || hash == t.length() - 1) {
            return null;
        }
        int cut = t.length();
        for (char c : new char[] {'(', '[', ' '}) {
            int at = t.indexOf(c, hash);
            if (at >= 0) {
                cut = Math.min(cut, at);
            }
        }
        return t.substring(0, cut);
    }

    /**
     * A PIT test name as {@code package.Class#method} ({@code Outer$Nested} for a nested class): the JUnit 5
     * form {@code io.x.FooTest.[engine:junit-jupiter]/[class:io.x.FooTest]/[method:bar(...)]} (or
     * {@code [test-template:bar(...)]/[test-template-invocation:#6]}, {@code [test-factory:...]}), or the older
     * {@code io.x.FooTest.bar(io.x.FooTest)}; null when it names no method.
     */
    static String pitTest(String name) {
        int engine = name.indexOf("[engine:");
        if (engine >= 0) {
            String clazz = null;
            String method = null;
            for (String seg : name.substring(engine + 1).split("\\]/\\[")) {
                String s = seg.endsWith("]") ? seg.substring(0, seg.length() - 1) : seg;
                int colon = s.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String kind = s.substring(0, colon);
                String value = s.substring(colon + 1);
                switch (kind) {
                    case "class" -> clazz = value;
                    case "nested-class" -> clazz = clazz == null ? value : clazz + "$" + value;
                    case "method", "test-template", "test-factory" -> {
                        if (method == null) {
                            int paren = value.indexOf('(');
                            method = paren < 0 ? value : value.substring(0, paren);
                        }
                    }
                    default -> { }
                }
            }
            return clazz == null || method == null ? null : clazz + "#" + method;
        }
        String t = name.strip();
        int paren = t.indexOf('(');
        if (paren >= 0) {
            t = t.substring(0, paren);
        }
        int dot = t.lastIndexOf('.');
        return dot <= 0 || dot == t.length() - 1 ? null : t.substring(0, dot) + "#" + t.substring(dot + 1);
    }

    /** The claim test {@code pitName} is (one of {@code tests}), or null. */
    private static String match(String pitName, Set<String> tests, Map<String, List<String>> names) {
        for (String key : names.computeIfAbsent(pitName, ClaimMutants::keys)) {
            if (tests.contains(key)) {
                return key;
            }
        }
        return null;
    }

    /** "io.x.Outer$Inner#m" -> itself, "Outer$Inner#m", "Inner#m": the forms an evidence line may give. */
    private static List<String> keys(String pitName) {
        String full = pitTest(pitName);
        if (full == null) {
            return List.of();
        }
        int hash = full.indexOf('#');
        List<String> out = new ArrayList<>();
        for (String c : classNames(full.substring(0, hash))) {
            out.add(c + full.substring(hash));
        }
        return out;
    }

    private static boolean classMatches(String fullTestClass, Set<String> claimTestClasses) {
        for (String c : classNames(fullTestClass)) {
            if (claimTestClasses.contains(c)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> classNames(String full) {
        Set<String> out = new LinkedHashSet<>();
        out.add(full);
        String simple = full.substring(full.lastIndexOf('.') + 1);
        out.add(simple);
        out.add(simple.substring(simple.lastIndexOf('$') + 1));
        return List.copyOf(out);
    }

    /** What the section shows and how it joins, stated once above it. */
    static String intro(List<ClaimMutants> claims, PitReport pit) {
        String coverage = claims.isEmpty() ? "no PIT report" : claims.getFirst().coverage();
        String attributed = pit == null ? "" : " Of PIT's " + pit.killed() + " killed mutations, "
                + ClaimMutants.attributed(claims) + " are killed by a claim's test; the others by tests that record no"
                + " evidence, or without a killing test (timed out, memory or run error).";
        return "Per catalog claim: the curated mutants that fail one of its check or control lines (the kill matrix's"
                + " row; decisive: the mutant's decisive line is this claim's; ⚑ below "
                + Fmt.times(MutantReport.FLAG_BELOW) + "), the PIT mutations its tests kill (its tests: the distinct"
                + " Class#method of its evidence lines; a kill: PIT's killing test is one of them), and the open PIT"
                + " mutations (survived or no coverage) of the classes its tests cover, with their triage verdict"
                + " (⚑ untriaged). Covered classes from: " + coverage + ". Each entry links to its source line"
                + " (path:line from the repository root; a curated mutant: the first line its patch changes)."
                + attributed;
    }

}
