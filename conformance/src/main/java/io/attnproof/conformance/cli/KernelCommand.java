package io.attnproof.conformance.cli;

import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.corpus.CorpusChecker;
import io.attnproof.conformance.corpus.CorpusExport;
import io.attnproof.conformance.corpus.CorpusGenerator;
import io.attnproof.conformance.kernel.Adapter;
import io.attnproof.conformance.kernel.KernelBuildException;
import io.attnproof.conformance.kernel.KernelLane;
import io.attnproof.conformance.kernel.KernelRun;
import io.attnproof.conformance.kernel.Shrinker;
import io.attnproof.conformance.npy.NpyException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code attnproof kernel}: a user's kernels, named by an adapter, built unchanged on the emulator (checked and plain
 * lanes), run through the corpus and judged by {@code corpus check} into one more ledger column (claim F1); failures
 * shrunk on request (claim F3); one shard of the corpus, or the merge of every shard's outputs.
 */
@Command(name = "kernel", mixinStandardHelpOptions = true,
        description = {"Judges your own kernels (README \"Judge your kernels\"): builds the adapter's sources unchanged"
            + " on the emulator (checked and plain lanes), runs the corpus through its entry points, and judges the"
            + " outputs with corpus check. Cases outside the adapter's envelope are SKIP with the reason; a bounds"
            + " fault, race, deadlock or launch refusal fails every check of its case, naming it.",
            "Exit code 0 every check passed or was skipped, 1 one failed, 2 bad input (adapter, corpus, a source the"
            + " front end refuses)."})
final class KernelCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--adapter", required = true, paramLabel = "FILE", description = "The adapter (JSON).")
    Path adapterFile;

    @Option(names = "--corpus", paramLabel = "DIR",
            description = "The corpus (default: the small corpus, exported into OUT/corpus).")
    Path corpus;

    @Option(names = "--out", required = true, paramLabel = "OUT",
            description = "Outputs (OUT/outputs/<case id>.npy) and shrunk cases (OUT/shrunk); builds go to"
                + " conformance/target/kernel-build.")
    Path out;

    @Option(names = "--engine", paramLabel = "NAME",
            description = "The ledger column (default kernel-<adapter name>).")
    String engine;

    @Option(names = "--evidence-out", paramLabel = "DIR",
            description = "Where the evidence goes (default conformance/target/evidence-engines/NAME).")
    Path evidenceOut;

    @Option(names = "--no-plain", description = "Run the checked lane only (the plain lane's bits are not compared).")
    boolean noPlain;

    @Option(names = "--shard", paramLabel = "K/N",
            description = "Run only shard K of N of the cases and write OUT/outputs; no judging (see --merge).")
    String shard;

    @Option(names = "--merge", split = ",", paramLabel = "DIR",
            description = "Judge the outputs of every shard (their OUT/outputs folders) as one column; a missing shard"
                + " fails the merge.")
    List<Path> merge = new ArrayList<>();

    @Option(names = "--shrink", description = "Shrink each failing case to a smallest one that fails the same check,"
            + " written to OUT/shrunk/<check>/ with the command that reproduces it.")
    boolean shrink;

    /** The repository root: $ATTNPROOF_ROOT, else -Dattnproof.root, else the working directory or its parent. */
    static Path root() {
        String r = System.getenv("ATTNPROOF_ROOT");
        if (r == null || r.isBlank()) {
            r = System.getProperty("attnproof.root");
        }
        if (r != null && !r.isBlank()) {
            return Path.of(r);
        }
        return java.nio.file.Files.isDirectory(Path.of("native", "emu")) ? Path.of(".") : Path.of("..");
    }

    /** Builds go under the repository's conformance/target (one per source text), so that reruns reuse them. */
    static Path buildDir() {
        return root().resolve("conformance").resolve("target").resolve("kernel-build");
    }

    @Override
    public Integer call() {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            Adapter adapter = Adapter.read(adapterFile);
            String name = engine != null ? engine : "kernel-" + adapter.name();
            if (!name.matches("[A-Za-z0-9._:+-]+")) {
                err.println("attnproof kernel: --engine " + name + ": use letters, digits and . _ : + - only");
                return 2;
            }
            if (shard != null && !merge.isEmpty()) {
                err.println("attnproof kernel: --shard and --merge: a shard runs, the merge judges; name one");
                return 2;
            }
            Path dir = corpus;
            if (dir == null) {
                dir = out.resolve("corpus");
                CorpusExport.export(dir, 13, true, Set.of(), Set.of(), 200L * 1024 * 1024);
            }
            Path outputs = out.resolve("outputs");
            KernelRun.Result run;
            if (!merge.isEmpty()) {
                run = KernelRun.merge(merge, outputs);
                o.printf(Locale.ROOT, "kernel: merged %d shards: %d cases ran, %d skipped, %d faulted%n", merge.size(),
                        run.ran().size(), run.skipped().size(), run.faults().size());
            } else {
                long t0 = System.nanoTime();
                Path root = root();
                // The two lanes build side by side (two compilers).
                java.util.concurrent.CompletableFuture<KernelLane> plainBuild = noPlain ? null
                        : java.util.concurrent.CompletableFuture.supplyAsync(() -> KernelLane.build(root, adapter,
                                buildDir(), true));
                KernelLane checked = KernelLane.build(root, adapter, buildDir(), false);
                KernelLane plain = null;
                if (plainBuild != null) {
                    try {
                        plain = plainBuild.join();
                    } catch (java.util.concurrent.CompletionException ex) {
                        if (ex.getCause() instanceof RuntimeException re) {
                            throw re;
                        }
                        throw ex;
                    }
                }
                double built = (System.nanoTime() - t0) / 1e9;
                KernelRun.Shard sh = shard == null ? new KernelRun.Shard(1, 1) : KernelRun.Shard.parse(shard);
                run = KernelRun.run(dir, outputs, adapter, checked, plain, sh);
                o.printf(Locale.ROOT, "kernel: %s (%s), shard %d/%d: %d cases ran on the %s, %d skipped, %d faulted;"
                        + " build %.1f s, run %.1f s%n", adapter.name(), adapter.sources().getFirst().getFileName(),
                        sh.index(), sh.count(), run.ran().size(), noPlain ? "checked lane" : "checked and plain lanes",
                        run.skipped().size(), run.faults().size(), built, run.seconds());
                if (shard != null) {
                    o.println("kernel: shard outputs and " + run.statusFile().getFileName() + " in " + outputs
                            + "; judge every shard with --merge");
                    o.flush();
                    return 0;
                }
            }
            Path ev = evidenceOut != null ? evidenceOut
                    : root().resolve("conformance").resolve("target").resolve("evidence-engines")
                            .resolve(name);
            CorpusChecker.Result r = CorpusChecker.check(dir, outputs, name, ev, new HashMap<>(), run.skipped(),
                    run.faults());
            report(o, name, r, run);
            if (CorpusChecker.derived(r.manifest())) {
                o.println("kernel: " + dir + " is a derived corpus (scale " + r.manifest().scale() + ", not sealed):"
                        + " it reproduces a failure; it is not a conformance verdict");
            }
            if (r.outcomes().stream().allMatch(x -> x.skipped() != null)) {
                o.flush();
                err.println("attnproof kernel: no check of " + dir + " is inside the adapter's envelope (every case"
                        + " SKIP): nothing was judged");
                return 2;
            }
            if (shrink && !r.failures().isEmpty()) {
                Path root = root();
                KernelLane checked = KernelLane.build(root, adapter, buildDir(), false);
                for (Shrinker.Shrunk s : Shrinker.shrinkAll(dir, adapter, adapterFile, checked, r, run.faults(),
                        out.resolve("shrunk"))) {
                    o.println("  shrunk " + s.checkId() + ": " + s.summary());
                    o.println("    reproduce: " + s.command());
                }
            }
            o.flush();
            return r.failures().isEmpty() ? 0 : 1;
        } catch (CaseException | NpyException | IllegalArgumentException | KernelBuildException e) {
            err.println("attnproof kernel: " + e.getMessage());
            return 2;
        }
    }

    private static void report(PrintWriter o, String engine, CorpusChecker.Result r, KernelRun.Result run) {
        o.printf(Locale.ROOT, "%-5s %7s %6s %6s %6s %9s  %s%n", "claim", "checks", "pass", "fail", "skip", "controls",
                "smallest margin (check)");
        Map<String, List<CorpusChecker.Outcome>> byClaim = new LinkedHashMap<>();
        for (String c : CorpusGenerator.CLAIMS) {
            List<CorpusChecker.Outcome> l = r.outcomes().stream().filter(x -> x.check().claim().equals(c)).toList();
            if (!l.isEmpty()) {
                byClaim.put(c, l);
            }
        }
        for (var e : byClaim.entrySet()) {
            List<CorpusChecker.Outcome> l = e.getValue();
            long skip = l.stream().filter(x -> x.skipped() != null).count();
            long fail = l.stream().filter(x -> !x.passed()).count();
            long controls = l.stream().filter(x -> x.check().control() && x.skipped() == null).count();
            String worst = l.stream().filter(x -> x.skipped() == null)
                    .min((a, b) -> Double.compare(a.margin(), b.margin()))
                    .map(w -> (Double.isInfinite(w.margin()) ? "exact" : String.format(Locale.ROOT, "%.3gx",
                            w.margin())) + " (" + w.check().id() + ")").orElse("-");
            o.printf(Locale.ROOT, "%-5s %7d %6d %6d %6d %9d  %s%n", e.getKey(), l.size(), l.size() - skip - fail, fail,
                    skip, controls, worst);
        }
        Map<String, Integer> reasons = new LinkedHashMap<>();
        run.skipped().values().forEach(v -> reasons.merge(v, 1, Integer::sum));
        reasons.forEach((why, n) -> o.println("  SKIP " + n + " case" + (n == 1 ? "" : "s") + ": " + why));
        for (CorpusChecker.Outcome f : r.failures().stream().limit(40).toList()) {
            o.println("  FAIL " + f.check().id() + ": " + f.detail());
        }
        if (r.failures().size() > 40) {
            o.println("  ... " + (r.failures().size() - 40) + " more failing checks");
        }
        Set<String> failed = new LinkedHashSet<>();
        r.failures().forEach(f -> failed.add(f.check().claim()));
        long judged = r.outcomes().stream().filter(x -> x.skipped() == null).count();
        o.println(r.failures().isEmpty() ? "kernel: PASS, " + judged + " checks judged (negative controls included), "
                + (r.outcomes().size() - judged) + " skipped" : "kernel: FAIL, " + r.failures().size()
                + " checks of claims " + String.join(", ", failed));
        o.println("evidence: " + r.evidenceFile() + " (backend " + engine + "; ./attnproof ledger --no-build shows it)");
    }
}
