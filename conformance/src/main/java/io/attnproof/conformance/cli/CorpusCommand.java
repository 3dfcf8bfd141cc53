package io.attnproof.conformance.cli;

import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.backend.LaneUnavailableException;
import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.corpus.CheckSpec;
import io.attnproof.conformance.corpus.CorpusChecker;
import io.attnproof.conformance.corpus.CorpusExport;
import io.attnproof.conformance.corpus.CorpusGenerator;
import io.attnproof.conformance.corpus.CorpusRunner;
import io.attnproof.conformance.npy.NpyException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
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
import picocli.CommandLine.Parameters;

/** {@code attnproof corpus export|run|check}: the conformance corpus any engine can run. */
@Command(name = "corpus", mixinStandardHelpOptions = true,
        description = {"The conformance corpus: every numeric claim as portable cases (README \"Judge your engine\").",
            "export writes the cases and manifest.json; run fills OUT from the system under test on a lane; check"
            + " judges any engine's outputs into evidence lines the ledger shows as one more column."},
        subcommands = {CorpusCommand.Export.class, CorpusCommand.Run.class, CorpusCommand.Check.class})
final class CorpusCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The repository root: $ATTNPROOF_ROOT (set by ./attnproof), else the working directory. */
    static Path root() {
        String r = System.getenv("ATTNPROOF_ROOT");
        return Path.of(r == null || r.isBlank() ? "." : r);
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a corpus command: export, run or check");
    }

    @Command(name = "export", mixinStandardHelpOptions = true,
            description = {"Writes a corpus into DIR: manifest.json (every case with its claim, seed and the checks"
                + " that judge it, negative controls included) and cases/<id>/ (case.json + .npy, README \"Cases\").",
                "The same seed gives the same bytes; seal.json holds the export options and every file's SHA-256, which"
                + " corpus check verifies. Exit code 0, or 2 for bad options."})
    static final class Export implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "DIR", description = "The corpus folder (empty, or an earlier corpus).")
        Path dir;

        @Option(names = "--claims", split = ",", paramLabel = "ID", description = "Only these claims (default: all).")
        List<String> claims = new ArrayList<>();

        @Option(names = "--dtype", split = ",", paramLabel = "T", description = "Only these dtypes: F32, F16, BF16.")
        List<String> dtypes = new ArrayList<>();

        @Option(names = "--max-mb", paramLabel = "MB", defaultValue = "200",
                description = "Keep whole checks, in order, while the case files stay under MB (default 200).")
        double maxMb;

        @Option(names = "--small", description = "The small corpus (under 10 MB): fewer shapes, mostly F32.")
        boolean small;

        @Option(names = "--seed", defaultValue = "13", description = "The corpus seed (default 13).")
        long seed;

        @Override
        public Integer call() {
            PrintWriter o = spec.commandLine().getOut();
            long t0 = System.nanoTime();
            CorpusExport.Result r;
            try {
                r = CorpusExport.export(dir, seed, small, new LinkedHashSet<>(claims), new LinkedHashSet<>(dtypes),
                        (long) (maxMb * 1024 * 1024));
            } catch (IllegalArgumentException e) {
                spec.commandLine().getErr().println("attnproof corpus export: " + e.getMessage());
                return 2;
            }
            double s = (System.nanoTime() - t0) / 1e9;
            long controls = r.manifest().checks().stream().filter(CheckSpec::control).count();
            o.printf(Locale.ROOT, "corpus export: %s: %d cases, %d checks (%d negative controls), %.1f MB, seed %d, %s,"
                    + " %.1f s%n", dir, r.manifest().cases().size(), r.manifest().checks().size(), controls,
                    r.bytes() / 1048576.0, seed, small ? "small" : "full", s);
            StringBuilder per = new StringBuilder("  cases per claim:");
            r.casesPerClaim().forEach((c, n) -> per.append(' ').append(c).append(' ').append(n));
            o.println(per);
            if (!r.droppedChecks().isEmpty()) {
                o.println("  --max-mb dropped " + r.droppedChecks().size() + " checks, first " + r.droppedChecks().getFirst());
            }
            o.flush();
            return 0;
        }
    }

    @Command(name = "run", mixinStandardHelpOptions = true,
            description = {"Runs the system under test on every case of the corpus in DIR on one lane and writes"
                + " OUT/<case id>.npy ('<f4').", "Exit code 0, or 2 for bad input or a lane that cannot run here."})
    static final class Run implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "DIR", description = "The corpus folder.")
        Path dir;

        @Option(names = "--out", required = true, paramLabel = "OUT", description = "Where the outputs go.")
        Path out;

        @Option(names = "--lane", defaultValue = "cpu", paramLabel = "L",
                description = "cpu (default), cuda-emu, metal-emu, cuda or metal.")
        String lane;

        @Override
        public Integer call() {
            try {
                Backend b = Backend.named(lane);
                CorpusRunner.Result r = CorpusRunner.run(dir, out, b);
                spec.commandLine().getOut().printf(Locale.ROOT, "corpus run: %d outputs in %s from %s on %s, %.1f s%n",
                        r.cases(), out, dir, lane, r.seconds());
                spec.commandLine().getOut().flush();
                return 0;
            } catch (IllegalArgumentException | CaseException | NpyException | LaneUnavailableException e) {
                spec.commandLine().getErr().println("attnproof corpus run: " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true,
            description = {"Judges an engine's outputs OUT/<case id>.npy (float16/32/64, either byte order) with every"
                + " check of the corpus in DIR: evidence lines with backend = NAME go to --evidence-out (default"
                + " conformance/target/evidence-engines/NAME, which ./attnproof ledger reads), then a table per claim.",
                "A missing output is a failure naming the case. Exit code 0 every check passed, 1 one failed, 2 bad"
                + " input: a corpus that fails its seal (seal.json), a malformed manifest, or no outputs folder."})
    static final class Check implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "DIR", description = "The corpus folder.")
        Path dir;

        @Option(names = "--outputs", required = true, paramLabel = "OUT", description = "The engine's outputs.")
        Path outputs;

        @Option(names = "--engine", required = true, paramLabel = "NAME",
                description = "The engine's name: the backend column of its evidence lines.")
        String engine;

        @Option(names = "--evidence-out", paramLabel = "DIR",
                description = "Where the evidence goes (default: conformance/target/evidence-engines/NAME).")
        Path evidenceOut;

        @Override
        public Integer call() {
            PrintWriter o = spec.commandLine().getOut();
            if (!engine.matches("[A-Za-z0-9._:+-]+")) {
                spec.commandLine().getErr().println("attnproof corpus check: --engine " + engine
                        + ": use letters, digits and . _ : + - only");
                return 2;
            }
            Path ev = evidenceOut != null ? evidenceOut
                    : root().resolve("conformance").resolve("target").resolve("evidence-engines").resolve(engine);
            CorpusChecker.Result r;
            try {
                r = CorpusChecker.check(dir, outputs, engine, ev);
            } catch (CaseException | NpyException | IllegalArgumentException e) {
                spec.commandLine().getErr().println("attnproof corpus check: " + e.getMessage());
                return 2;
            }
            o.printf(Locale.ROOT, "corpus check: engine %s, %d checks over %d cases of %s (outputs %s), %.1f s%n",
                    engine, r.outcomes().size(), r.manifest().cases().size(), dir, outputs, r.seconds());
            if (!r.extraFiles().isEmpty()) {
                o.printf(Locale.ROOT, "warning: %d files in %s are not outputs of this corpus (ignored): %s%s%n",
                        r.extraFiles().size(), outputs, String.join(", ", r.extraFiles().stream().limit(20).toList()),
                        r.extraFiles().size() > 20 ? ", ..." : "");
            }
            o.printf(Locale.ROOT, "%-5s %7s %6s %6s %9s  %s%n", "claim", "checks", "pass", "fail", "controls",
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
                long pass = l.stream().filter(CorpusChecker.Outcome::passed).count();
                long controls = l.stream().filter(x -> x.check().control()).count();
                CorpusChecker.Outcome worst = l.stream().min((a, b) -> Double.compare(a.margin(), b.margin())).orElseThrow();
                o.printf(Locale.ROOT, "%-5s %7d %6d %6d %9d  %s (%s)%n", e.getKey(), l.size(), pass, l.size() - pass,
                        controls, margin(worst.margin()), worst.check().id());
            }
            List<CorpusChecker.Outcome> failures = r.failures();
            for (CorpusChecker.Outcome f : failures.stream().limit(40).toList()) {
                o.println("  FAIL " + f.check().id() + ": " + f.detail());
            }
            if (failures.size() > 40) {
                o.println("  ... " + (failures.size() - 40) + " more failing checks");
            }
            Set<String> failedClaims = new LinkedHashSet<>();
            failures.forEach(f -> failedClaims.add(f.check().claim()));
            o.println(failures.isEmpty() ? "corpus check: PASS, every check (negative controls included)"
                    : "corpus check: FAIL, " + failures.size() + " checks of claims " + String.join(", ", failedClaims));
            o.println("evidence: " + r.evidenceFile() + " (backend " + engine + "; ./attnproof ledger --no-build shows"
                    + " it)");
            o.flush();
            return failures.isEmpty() ? 0 : 1;
        }

        private static String margin(double m) {
            if (Double.isInfinite(m)) {
                return "exact";
            }
            return String.format(Locale.ROOT, "%.3gx", m);
        }
    }
}
