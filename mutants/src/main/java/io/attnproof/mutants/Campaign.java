package io.attnproof.mutants;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The mutant campaign: for each catalog patch (or this shard's share), apply it to a scratch copy of the sources,
 * compile the mutated files in process (a native mutant: rebuild its emulated lane's library from the patched kernel
 * source into the mutant's own folder, {@link NativeBuild}), run the tests of the claims it names in a fresh child-first class loader
 * with a per-mutant timeout and its own evidence directory, and record killed / survived / stale / timeout with
 * the killing tests and the evidence values both ways. Writes {@code results.json} (or
 * {@code results-k-of-n.json}), {@code results.md} and {@code campaign.json} under the output directory.
 */
public final class Campaign {
    /** Where things are and how to run; {@link #fromSystemProperties()} reads the {@code mutants.*} properties. */
    public record Config(Path repoRoot, Path catalog, Path sutClasses, Path sutTestClasses, Path fixEvidence, Path out,
            Shard shard, Set<String> only, int threads, Duration timeout, Path conformanceClasses,
            Path conformanceTestClasses, Path conformanceEvidence, boolean allTiers) {

        public Config {
            only = Set.copyOf(only);
        }

        /** A config over every tier of its catalog. */
        public Config(Path repoRoot, Path catalog, Path sutClasses, Path sutTestClasses, Path fixEvidence, Path out,
                Shard shard, Set<String> only, int threads, Duration timeout, Path conformanceClasses,
                Path conformanceTestClasses, Path conformanceEvidence) {
            this(repoRoot, catalog, sutClasses, sutTestClasses, fixEvidence, out, shard, only, threads, timeout,
                    conformanceClasses, conformanceTestClasses, conformanceEvidence, true);
        }

        /** A config with the conformance kit's classes, claim tests and evidence where its build leaves them. */
        public Config(Path repoRoot, Path catalog, Path sutClasses, Path sutTestClasses, Path fixEvidence, Path out,
                Shard shard, Set<String> only, int threads, Duration timeout) {
            this(repoRoot, catalog, sutClasses, sutTestClasses, fixEvidence, out, shard, only, threads, timeout,
                    repoRoot.resolve("conformance/target/classes"), repoRoot.resolve("conformance/target/test-classes"),
                    repoRoot.resolve("conformance/target/evidence"));
        }

        /**
         * {@code mutants.repo.root} (default: the working directory), {@code mutants.catalog},
         * {@code mutants.sut.classes}, {@code mutants.sut.testClasses}, {@code mutants.fix.evidence},
         * {@code mutants.conformance.classes}, {@code mutants.conformance.testClasses},
         * {@code mutants.conformance.evidence},
         * {@code mutants.out} (defaults under the repository root), {@code mutants.shard} (k/n),
         * {@code mutants.only} (comma-separated ids, run whatever their tier), {@code mutants.tier} ({@code default}:
         * the mutants without {@code # tier: sweep}, what every {@code mvn verify} runs; {@code all}: the whole
         * catalog, what the campaigns workflow runs), {@code mutants.threads} (0: one per core, at most 2) and
         * {@code mutants.timeout} (seconds per mutant, default 150).
         */
        public static Config fromSystemProperties() {
            Path root = Path.of(prop("mutants.repo.root", ".")).toAbsolutePath().normalize();
            int threads = Integer.parseInt(prop("mutants.threads", "0").strip());
            if (threads <= 0) {
                threads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
            }
            Set<String> only = new LinkedHashSet<>();
            for (String id : prop("mutants.only", "").split(",")) {
                if (!id.isBlank()) {
                    only.add(id.strip());
                }
            }
            String tier = prop("mutants.tier", "default").strip();
            if (!tier.equals("default") && !tier.equals("all")) {
                throw new IllegalArgumentException("mutants.tier = " + tier + ": must be default (the mutants without"
                        + " '# tier: sweep') or all (the whole catalog)");
            }
            return new Config(root, path(root, "mutants.catalog", "mutants/catalog"),
                    path(root, "mutants.sut.classes", "system-under-test/target/classes"),
                    path(root, "mutants.sut.testClasses", "system-under-test/target/test-classes"),
                    path(root, "mutants.fix.evidence", "system-under-test/target/evidence"),
                    path(root, "mutants.out", "mutants/target/mutants"), Shard.parse(prop("mutants.shard", "")), only,
                    threads, Duration.ofSeconds(Long.parseLong(prop("mutants.timeout", "150").strip())),
                    path(root, "mutants.conformance.classes", "conformance/target/classes"),
                    path(root, "mutants.conformance.testClasses", "conformance/target/test-classes"),
                    path(root, "mutants.conformance.evidence", "conformance/target/evidence"), tier.equals("all"));
        }

        /** This config running only {@code ids} into {@code out}, one at a time, whole catalog. */
        public Config with(Path out, Set<String> ids) {
            return new Config(repoRoot, catalog, sutClasses, sutTestClasses, fixEvidence, out, Shard.ALL, ids, threads,
                    timeout, conformanceClasses, conformanceTestClasses, conformanceEvidence, allTiers);
        }

        private static String prop(String key, String fallback) {
            String v = System.getProperty(key);
            return v == null || v.isBlank() ? fallback : v;
        }

        private static Path path(Path root, String key, String fallback) {
            return root.resolve(prop(key, fallback)).normalize();
        }
    }

    /** A finished campaign: the results in catalog order, the wall time and the threads used. */
    public record Result(List<MutantResult> mutants, double wallSeconds, int threads, Shard shard, Path resultsFile) {
        /** The mutants that were not killed. */
        public List<MutantResult> notKilled() {
            return mutants.stream().filter(m -> m.status() != MutantResult.Status.KILLED).toList();
        }
    }

    private static final String EVIDENCE_PROPERTY = "attnproof.evidence.dir";
    /** How long a timed-out mutant's claim tests get to unwind after their thread is interrupted. */
    static final java.time.Duration TIMEOUT_GRACE = java.time.Duration.ofSeconds(10);
    private static final Pattern SUITE_NAME = Pattern.compile("<testsuite[^>]*\\sname=\"([^\"]+)\"");
    private static final Pattern SUITE_TIME = Pattern.compile("<testsuite[^>]*\\stime=\"([0-9.]+)\"");

    private final Config config;
    private final ClassLoader source;
    private final MutantCompiler compiler;
    private final MutantCompiler conformanceCompiler;
    private volatile ClaimTests index;

    public Campaign(Config config) {
        this.config = config;
        this.source = Campaign.class.getClassLoader();
        this.compiler = new MutantCompiler(List.of(config.sutClasses()));
        this.conformanceCompiler = new MutantCompiler(conformanceClasspath(config));
        if (!Files.isDirectory(config.sutClasses()) || !Files.isDirectory(config.sutTestClasses())) {
            throw new IllegalStateException("mutants: build system-under-test first (need " + config.sutClasses()
                    + " and " + config.sutTestClasses() + ")");
        }
        ScopedProperties.install();
    }

    /** Every catalog patch in file-name order; a patch that cannot be read fails the whole catalog. */
    public static List<Mutant> loadCatalog(Path dir) throws IOException, PatchFormatException {
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".patch")).sorted().toList();
        }
        List<Mutant> out = new ArrayList<>();
        for (Path f : files) {
            out.add(PatchParser.parse(f));
        }
        return out;
    }

    /** Runs this config's share of the catalog and writes the results files. */
    public Result run() throws IOException, PatchFormatException {
        List<Mutant> catalog = loadCatalog(config.catalog());
        List<Mutant> selected = config.shard().select(catalog);
        if (!config.only().isEmpty()) {
            Set<String> known = new LinkedHashSet<>();
            catalog.forEach(m -> known.add(m.id()));
            for (String id : config.only()) {
                if (!known.contains(id)) {
                    throw new IllegalArgumentException("mutants.only: \"" + id + "\" is not a catalog id " + known);
                }
            }
            selected = selected.stream().filter(m -> config.only().contains(m.id())).toList();
        } else if (!config.allTiers()) {
            selected = selected.stream().filter(m -> !m.sweep()).toList();
        }
        return run(selected);
    }

    /** Runs {@code mutants} and writes the results files. */
    public Result run(List<Mutant> mutants) throws IOException {
        long start = System.nanoTime();
        Files.createDirectories(config.out());
        // The normal run's evidence: the system under test's claim tests and the conformance kit's.
        List<EvidenceValues.Line> fix = new ArrayList<>(EvidenceValues.read(config.fixEvidence()));
        fix.addAll(EvidenceValues.read(config.conformanceEvidence()));
        Map<String, Double> cost = suiteTimes(config.sutTestClasses().getParent().resolve("surefire-reports"));
        cost.putAll(suiteTimes(config.conformanceTestClasses().getParent().resolve("surefire-reports")));
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < mutants.size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingDouble((Integer i) -> -estimate(mutants.get(i), cost)).thenComparing(i -> i));
        MutantResult[] results = new MutantResult[mutants.size()];
        ExecutorService pool = Executors.newFixedThreadPool(config.threads());
        try {
            Map<Integer, Future<MutantResult>> futures = new LinkedHashMap<>();
            for (int i : order) {
                futures.put(i, pool.submit(() -> runOne(mutants.get(i), fix)));
            }
            for (Map.Entry<Integer, Future<MutantResult>> e : futures.entrySet()) {
                try {
                    results[e.getKey()] = e.getValue().get();
                } catch (ExecutionException ex) {
                    throw new IllegalStateException("mutant " + mutants.get(e.getKey()).id() + ": the runner failed: "
                            + ex.getCause(), ex.getCause());
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", ex);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        double wall = (System.nanoTime() - start) / 1e9;
        List<MutantResult> list = Arrays.asList(results);
        Path resultsFile = config.out().resolve(config.shard().resultsFile());
        ResultsFiles.writeJson(resultsFile, list);
        String context = String.format(Locale.ROOT, "Campaign%s: %d mutants in %.1f s wall on %d thread%s "
                + "(per-mutant limit %d s).", config.shard().all() ? "" : " shard " + config.shard(), list.size(), wall,
                config.threads(), config.threads() == 1 ? "" : "s", config.timeout().toSeconds());
        String mdName = resultsFile.getFileName().toString().replace(".json", ".md");
        ResultsFiles.writeMarkdown(config.out().resolve(mdName), ResultsFiles.readJson(resultsFile), context);
        writeCampaign(list, wall);
        return new Result(list, wall, config.threads(), config.shard(), resultsFile);
    }

    private void writeCampaign(List<MutantResult> list, double wall) throws IOException {
        MutantResult weakest = null;
        for (MutantResult r : list) {
            if (r.status() == MutantResult.Status.KILLED && !Double.isNaN(r.margin())
                    && (weakest == null || r.margin() < weakest.margin())) {
                weakest = r;
            }
        }
        ObjectNode o = JsonTrees.MAPPER.createObjectNode().put("shard", config.shard().toString())
                .put("mutants", list.size())
                .put("killed", list.stream().filter(r -> r.status() == MutantResult.Status.KILLED).count())
                .put("tier", !config.only().isEmpty() ? "only" : config.allTiers() ? "all" : "default")
                .put("wall_seconds", Math.round(wall * 10) / 10.0).put("threads", config.threads())
                .put("timeout_seconds", config.timeout().toSeconds());
        if (weakest == null) {
            o.putNull("smallest_margin").putNull("smallest_margin_id");
        } else {
            o.put("smallest_margin", weakest.margin()).put("smallest_margin_id", weakest.id());
        }
        String name = config.shard().all() ? "campaign.json"
                : "campaign-" + config.shard().k() + "-of-" + config.shard().n() + ".json";
        Files.writeString(config.out().resolve(name), JsonTrees.write(o) + "\n", StandardCharsets.UTF_8);
    }

    /** Applies, compiles and runs one mutant. */
    MutantResult runOne(Mutant m, List<EvidenceValues.Line> fix) {
        long t0 = System.nanoTime();
        String patch = config.repoRoot().relativize(m.patchFile().toAbsolutePath().normalize()).toString()
                .replace('\\', '/');
        Map<String, byte[]> classes;
        String lane = m.nativeLane();
        Path nativeDir = config.out().resolve("native").resolve(m.id());
        try {
            Map<String, String> sources = new LinkedHashMap<>();
            for (Mutant.FilePatch fp : m.files()) {
                Path file = config.repoRoot().resolve(fp.path());
                if (!Files.isRegularFile(file)) {
                    throw new StaleException(fp.path() + " does not exist any more");
                }
                sources.put(fp.path(), PatchApplier.apply(fp, Files.readString(file, StandardCharsets.UTF_8)));
            }
            if (lane == null) {
                boolean conformance = sources.keySet().stream()
                        .anyMatch(p -> PatchParser.CONFORMANCE_ROOT.equals(PatchParser.javaRoot(p)));
                if (conformance && !Files.isDirectory(config.conformanceClasses())) {
                    throw new IllegalStateException("mutant " + m.id() + " patches the conformance kit: build it first"
                            + " (need " + config.conformanceClasses() + ")");
                }
                classes = (conformance ? conformanceCompiler : compiler).compile(sources);
            } else {
                // A native mutant: its lane's library rebuilt from the patched kernel source into its own folder.
                classes = Map.of();
                NativeBuild.build(config.repoRoot(), config.sutClasses().getParent().resolve("native"), nativeDir, m,
                        sources.values().iterator().next());
            }
        } catch (StaleException e) {
            return finish(m, patch, MutantResult.Status.STALE, e.getMessage(), null, List.of(), t0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        SortedSet<String> testClasses = lane == null ? index().classesFor(m.claims())
                : new java.util.TreeSet<>(NativeBuild.laneClasses(lane, index().concreteClassesFor(m.claims()), m.claims()));
        if (testClasses.isEmpty()) {
            return finish(m, patch, MutantResult.Status.STALE, "no claim test proves " + m.claims()
                    + (lane == null ? "" : " on " + lane) + " under " + testRoots(), null, List.of(), t0);
        }
        Path evidence = config.out().resolve("evidence").resolve(m.id());
        deleteTree(evidence);
        Map<String, String> properties = new HashMap<>();
        properties.put(EVIDENCE_PROPERTY, evidence.toString());
        if (lane != null) {
            properties.put(NativeBuild.DIR_PROPERTY, nativeDir.toString());
        }
        MutantClassLoader loader = new MutantClassLoader("mutant-" + m.id(), classes, source, properties);
        AtomicReference<ClaimTests.Outcome> outcome = new AtomicReference<>();
        AtomicReference<Throwable> crash = new AtomicReference<>();
        Thread runner = new Thread(null, () -> {
            try {
                outcome.set(ClaimTests.run(loader, m.claims(), testClasses));
            } catch (Throwable t) {
                crash.set(t);
            }
        }, "mutant-" + m.id(), 64L << 20);
        runner.setDaemon(true);
        runner.setContextClassLoader(loader);
        runner.start();
        try {
            runner.join(config.timeout().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (runner.isAlive()) {
            runner.interrupt();
            // An interruptible run unwinds now: wait for it (bounded), so that it writes no evidence after the
            // campaign has reported it and moved on (a test's temporary directory was once deleted under it).
            try {
                runner.join(TIMEOUT_GRACE.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return finish(m, patch, MutantResult.Status.TIMEOUT, "the claim tests ran past " + config.timeout()
                    .toSeconds() + " s (" + testClasses + ")", null, List.of(), t0);
        }
        if (crash.get() != null) {
            throw new IllegalStateException("mutant " + m.id() + ": the JUnit run itself failed: " + crash.get(),
                    crash.get());
        }
        ClaimTests.Outcome o = outcome.get();
        List<EvidenceValues.Value> values = EvidenceValues.failing(fix, EvidenceValues.read(evidence));
        if (o.killers().isEmpty()) {
            if (o.run() == 0 || o.passed() == 0) {
                return finish(m, patch, MutantResult.Status.STALE, "no claim test of " + m.claims() + " ran (" + o.run()
                        + " run, " + o.skipped() + " skipped)", o, values, t0);
            }
            return finish(m, patch, MutantResult.Status.SURVIVED, "every claim test of " + m.claims() + " passed ("
                    + o.passed() + " of " + o.run() + ")", o, values, t0);
        }
        return finish(m, patch, MutantResult.Status.KILLED, null, o, values, t0);
    }

    private MutantResult finish(Mutant m, String patch, MutantResult.Status status, String detail,
            ClaimTests.Outcome o, List<EvidenceValues.Value> values, long t0) {
        double seconds = (System.nanoTime() - t0) / 1e9;
        EvidenceValues.Value decisive = EvidenceValues.decisive(values, m.claims());
        MutantResult r = new MutantResult(m.id(), m.claims(), m.breaks(), m.origin(), m.interleaving(), patch, status, detail,
                o == null ? List.of() : o.killers(), values, decisive, decisive == null ? Double.NaN : decisive.margin(),
                o == null ? 0 : o.run(),
                o == null ? 0 : o.failed(), seconds);
        String by = r.killers().isEmpty() ? (detail == null ? "" : " — " + detail.lines().findFirst().orElse(""))
                : " by " + r.killers().getFirst().test() + (r.killers().size() > 1 ? " (+" + (r.killers().size() - 1)
                        + ")" : "");
        System.out.printf(Locale.ROOT, "[mutants] %-40s %-8s %6.1f s, margin %s%s%n", m.id(), status.json(), seconds,
                ResultsFiles.formatMargin(r.margin()), by);
        return r;
    }

    private ClaimTests index() {
        ClaimTests i = index;
        if (i == null) {
            synchronized (this) {
                if (index == null) {
                    index = ClaimTests.index(testRoots(),
                            new MutantClassLoader("claim-index", Map.of(), source, Map.of()));
                }
                i = index;
            }
        }
        return i;
    }

    /** The claim tests' class folders: the system under test's and, once built, the conformance kit's. */
    private List<Path> testRoots() {
        return Files.isDirectory(config.conformanceTestClasses())
                ? List.of(config.sutTestClasses(), config.conformanceTestClasses()) : List.of(config.sutTestClasses());
    }

    /**
     * What a conformance mutant compiles against: the conformance kit's classes, the system under test's, and this
     * runner's class path (surefire's test class path: the ledger, the fixtures, the oracles, picocli, Commons CSV).
     */
    static List<Path> conformanceClasspath(Config config) {
        List<Path> out = new ArrayList<>(List.of(config.conformanceClasses(), config.sutClasses()));
        for (String entry : System.getProperty("java.class.path", "").split(java.io.File.pathSeparator)) {
            if (!entry.isBlank() && Files.exists(Path.of(entry))) {
                out.add(Path.of(entry));
            }
        }
        return out;
    }

    private double estimate(Mutant m, Map<String, Double> cost) {
        double sum = 0;
        for (String c : index().classesFor(m.claims())) {
            sum += cost.getOrDefault(c, 0.0);
        }
        return sum;
    }

    /** Each test class's time in the normal run (surefire's reports), to start the longest mutants first. */
    static Map<String, Double> suiteTimes(Path reports) {
        Map<String, Double> out = new HashMap<>();
        if (!Files.isDirectory(reports)) {
            return out;
        }
        try (Stream<Path> s = Files.list(reports)) {
            for (Path f : s.filter(p -> p.getFileName().toString().matches("TEST-.*\\.xml")).toList()) {
                String head;
                try (var in = Files.newInputStream(f)) {
                    head = new String(in.readNBytes(4096), StandardCharsets.UTF_8);
                }
                Matcher n = SUITE_NAME.matcher(head);
                Matcher t = SUITE_TIME.matcher(head);
                if (n.find() && t.find()) {
                    out.put(n.group(1), Double.parseDouble(t.group(1)));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return out; // an estimate only: order does not change any result
        }
        return out;
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clear " + dir, e);
        }
    }

    /** Runs the campaign from the {@code mutants.*} system properties; exit 0 when every mutant was killed. */
    public static void main(String[] args) throws Exception {
        Result r = new Campaign(Config.fromSystemProperties()).run();
        System.out.println(ResultsFiles.headline(ResultsFiles.readJson(r.resultsFile())) + " -> " + r.resultsFile());
        System.exit(r.notKilled().isEmpty() ? 0 : 1);
    }
}
