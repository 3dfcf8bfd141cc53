package io.attnproof.conformance.corpus;

import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.EvidenceSink;
import io.attnproof.conformance.cases.AnyCase;
import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.Compare;
import io.attnproof.conformance.npy.Npy;
import io.attnproof.conformance.npy.NpyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code attnproof corpus check}: applies every check of a corpus's manifest to an engine's outputs
 * ({@code OUT/<case id>.npy}), writing one evidence line per measured number with {@code backend = engine} (test
 * {@code CorpusChecker#<check id>}) into {@code evidenceDir/CorpusChecker.jsonl}, which the ledger reads as one more
 * lane column. A missing or misshapen output is a failing line naming the case, never a skip. A corpus that is not
 * as export wrote it ({@link Seal}) is refused before any output is read.
 */
public final class CorpusChecker {
    private final Path dir;
    private final Path outputs;
    private final Manifest manifest;
    private final Map<String, Manifest.Entry> entries = new LinkedHashMap<>();
    private final Map<String, CaseChecker.Reference> references;
    private final Map<String, Object> actuals = new HashMap<>();

    private CorpusChecker(Path dir, Path outputs, Map<String, CaseChecker.Reference> references) {
        this.references = references;
        this.dir = dir;
        this.outputs = outputs;
        this.manifest = Manifest.read(dir);
        manifest.cases().forEach(e -> entries.put(e.id(), e));
    }

    /** The outcome of one check; {@code skipped} is the SKIP reason of a check outside a kernel's envelope, else null. */
    public record Outcome(CheckSpec check, boolean passed, double margin, String detail, String skipped) {
        public Outcome(CheckSpec check, boolean passed, double margin, String detail) {
            this(check, passed, margin, detail, null);
        }
    }

    /** Every outcome, in manifest order, plus where the evidence went. */
    public record Result(Manifest manifest, List<Outcome> outcomes, Path evidenceFile, double seconds,
            List<String> extraFiles) {
        public boolean passed() {
            return outcomes.stream().allMatch(Outcome::passed);
        }

        /** The failing outcomes. */
        public List<Outcome> failures() {
            return outcomes.stream().filter(o -> !o.passed()).toList();
        }
    }

    /**
     * Checks the outputs in {@code outputs} of the corpus in {@code dir}, as engine {@code engine}.
     *
     * @throws CaseException naming the file and field of a bad manifest or case (bad input: exit 2)
     */
    public static Result check(Path dir, Path outputs, String engine, Path evidenceDir) {
        return check(dir, outputs, engine, evidenceDir, new HashMap<>());
    }

    /** The same, reusing (and filling) {@code references}, the oracles of earlier checks of the same corpus by case id. */
    public static Result check(Path dir, Path outputs, String engine, Path evidenceDir,
            Map<String, CaseChecker.Reference> references) {
        long t0 = System.nanoTime();
        CorpusChecker c = new CorpusChecker(dir, outputs, references);
        Seal.verify(dir);
        return c.judge(engine, evidenceDir, x -> true, Map.of(), Map.of(), t0);
    }

    /**
     * The same for a kernel lane ({@code attnproof kernel}): a check naming a case of {@code skipped} (case id to the
     * reason it is outside the kernel's envelope) is one SKIP line with the reason, never a pass; a check naming a case
     * of {@code faults} (case id to the bounds fault, race, deadlock or launch refusal) fails naming the case and the
     * fault, controls included. A derived corpus (a shrunk case, a test's fixture) is judged without a seal.
     */
    public static Result check(Path dir, Path outputs, String engine, Path evidenceDir,
            Map<String, CaseChecker.Reference> references, Map<String, String> skipped, Map<String, String> faults) {
        long t0 = System.nanoTime();
        CorpusChecker c = new CorpusChecker(dir, outputs, references);
        if (!derived(c.manifest)) {
            Seal.verify(dir);
        }
        return c.judge(engine, evidenceDir, x -> true, skipped, faults, t0);
    }

    /** The scales of corpora the kernel lane writes itself (a shrunk case, a test's fixture): never sealed. */
    public static final java.util.Set<String> DERIVED_SCALES = java.util.Set.of("shrunk", "kernel-fixture");

    /**
     * A derived corpus, judged unsealed by the kernel lane only (it reproduces a failure, it is not a conformance
     * verdict; {@code corpus check} refuses it for want of a seal).
     */
    public static boolean derived(Manifest m) {
        return DERIVED_SCALES.contains(m.scale());
    }

    /**
     * Judges only the checks {@code which} selects, without verifying the seal: for tests that aim one fault at one
     * check (SealTest covers the seal).
     */
    static Result checkUnsealed(Path dir, Path outputs, String engine, Path evidenceDir,
            Map<String, CaseChecker.Reference> references, java.util.function.Predicate<CheckSpec> which) {
        return new CorpusChecker(dir, outputs, references).judge(engine, evidenceDir, which, Map.of(), Map.of(),
                System.nanoTime());
    }

    private Result judge(String engine, Path evidenceDir, java.util.function.Predicate<CheckSpec> which,
            Map<String, String> skipped, Map<String, String> faults, long t0) {
        if (!Files.isDirectory(outputs)) {
            throw new IllegalArgumentException("--outputs " + outputs + ": must be a folder holding <case id>.npy ("
                    + (Files.exists(outputs) ? "it is a file" : "no such folder") + ")");
        }
        List<String> extras = extraFiles(outputs, entries.keySet());
        EvidenceSink sink = new EvidenceSink(evidenceDir);
        List<Outcome> out = new ArrayList<>();
        for (CheckSpec check : manifest.checks()) {
            if (!which.test(check)) {
                continue;
            }
            Evidence ev = Evidence.of(check.claim(), CorpusChecker.class, check.id(), sink).backend(engine);
            ev.seed(entries.get(check.a().caseId()).seed());
            List<String> ids = CorpusExport.caseIds(check);
            String fault = ids.stream().filter(faults::containsKey).findFirst().orElse(null);
            String skip = ids.stream().filter(skipped::containsKey).findFirst().orElse(null);
            if (fault != null) {
                Rec rec = new Rec(ev);
                rec.run(() -> rec.ev.checkEqual("kernel_faults[" + fault + "]", 1, 0), 0, null);
                out.add(new Outcome(check, false, 0, "case " + fault + ": " + faults.get(fault)));
            } else if (skip != null) {
                String why = "case " + skip + ": " + skipped.get(skip);
                ev.skipped(engine, why);
                out.add(new Outcome(check, true, Double.NaN, "SKIP " + why, why));
            } else {
                out.add(apply(check, new Rec(ev)));
            }
        }
        return new Result(manifest, List.copyOf(out), sink.file("CorpusChecker"), (System.nanoTime() - t0) / 1e9,
                extras);
    }

    /** The names in {@code outputs} that are not {@code <case id>.npy} of a case of the manifest, sorted. */
    private static List<String> extraFiles(Path outputs, java.util.Set<String> ids) {
        try (java.util.stream.Stream<Path> s = Files.list(outputs)) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> !(n.endsWith(".npy") && ids.contains(n.substring(0, n.length() - 4)))).sorted().toList();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("--outputs " + outputs + ": cannot list the folder: " + e.getMessage());
        }
    }

    /** Records evidence lines, catching each failure so that every number of a check is written. */
    static final class Rec {
        final Evidence ev;
        boolean passed = true;
        double margin = Double.POSITIVE_INFINITY;
        final List<String> notes = new ArrayList<>();

        Rec(Evidence ev) {
            this.ev = ev;
        }

        void run(Runnable line, double margin, String note) {
            try {
                line.run();
                if (!Double.isNaN(margin)) {
                    this.margin = Math.min(this.margin, margin);
                }
            } catch (AssertionError e) {
                passed = false;
                this.margin = Math.min(this.margin, Double.isNaN(margin) ? 0 : margin);
                notes.add(e.getMessage());
                return;
            }
            if (note != null) {
                notes.add(note);
            }
        }

        void le(String metric, double value, double limit, io.attnproof.fixtures.evidence.Worst worst) {
            run(() -> ev.check(metric, value, limit, worst), value == 0 ? Double.POSITIVE_INFINITY : limit / value,
                    null);
        }

        void gap(String name, double gap, double limit) {
            run(() -> ev.controlGap(name, gap, limit), gap / limit, null);
        }
    }

    private Outcome apply(CheckSpec check, Rec rec) {
        List<String> missing = new ArrayList<>();
        for (String id : CorpusExport.caseIds(check)) {
            if (id.equals(check.against())) {
                continue;
            }
            Object a = actual(id);
            if (a instanceof String why) {
                missing.add(why);
            }
        }
        if (!missing.isEmpty()) {
            rec.run(() -> rec.ev.checkAtLeast("output_present", 0, 1), 0, null);
            return new Outcome(check, false, 0, String.join("; ", missing));
        }
        switch (check.type()) {
            case "oracle" -> oracle(check, rec);
            case "degenerate" -> degenerate(check, rec);
            default -> pair(check, rec);
        }
        return new Outcome(check, rec.passed, rec.margin, String.join("; ", rec.notes));
    }

    private void oracle(CheckSpec check, Rec rec) {
        double[] act = (double[]) actual(check.a().caseId());
        if (!check.control()) {
            CaseChecker.Reference ref = reference(check.a().caseId());
            judged(rec, ref, act);
            return;
        }
        CaseChecker.Reference truth = reference(check.against());
        CaseChecker.Reference own = reference(check.a().caseId());
        double limit = truth.limit();
        double oracleGap = Compare.of(truth.oracle(), CaseChecker.flat(own.oracle())).maxAbs();
        rec.run(() -> rec.ev.degeneracy("control_oracle_gap", oracleGap, Comparison.GT, limit, "the control case's own"
                + " oracle must miss " + check.against() + "'s by more than its limit"), Double.NaN, null);
        Compare diff = Compare.of(truth.oracle(), act);
        double gap = diff.nonFiniteMismatches() > 0 ? Double.POSITIVE_INFINITY : diff.maxAbs();
        rec.gap(check.id(), gap, limit);
    }

    private void judged(Rec rec, CaseChecker.Reference ref, double[] act) {
        CaseChecker.Verdict v = CaseChecker.judge(ref, act);
        rec.run(() -> rec.ev.checkEqual("nan_inf_positions_differing", v.nonFiniteMismatches(), 0),
                Double.POSITIVE_INFINITY, null);
        rec.le("max_abs_err", v.maxAbsErr(), v.limit(), v.worst());
        if (v.hasContractTier()) {
            rec.le("max_abs_err:contract", v.maxAbsErr(), v.contractLimit(), v.worst());
        }
        rec.ev.info("cosine_diff", v.cosineDiff());
        if (!rec.passed) {
            rec.notes.add(v.line() + "; " + v.detailLine());
        }
    }

    private void degenerate(CheckSpec check, Rec rec) {
        double[] act = (double[]) actual(check.a().caseId());
        if (!check.control()) {
            CaseChecker.Reference ref = reference(check.a().caseId());
            double[] oracle = CaseChecker.flat(ref.oracle());
            int d = ref.oracle()[0][0][0].length;
            long nearZeroRows = 0;
            for (int row = 0; row * d < oracle.length; row++) {
                double max = 0;
                for (int x = 0; x < d; x++) {
                    max = Math.max(max, Math.abs(oracle[row * d + x]));
                }
                nearZeroRows += max <= 1e-3 ? 1 : 0;
            }
            long rows = nearZeroRows;
            rec.run(() -> rec.ev.degeneracy("degenerate_rows", rows, Comparison.GE, 1, "the case must hold a row with"
                    + " nothing to attend or all mass on the sink (oracle max-abs <= 1e-3)"), Double.NaN, null);
            long nonzero = nonzeroWhereZero(oracle, act);
            rec.run(() -> rec.ev.checkEqual("nonzero_where_oracle_zero", nonzero, 0), Double.POSITIVE_INFINITY, null);
            judged(rec, ref, act);
            return;
        }
        double[] truth = CaseChecker.flat(reference(check.against()).oracle());
        double[] own = CaseChecker.flat(reference(check.a().caseId()).oracle());
        long ownNonzero = nonzeroWhereZero(truth, own);
        rec.run(() -> rec.ev.degeneracy("control_rows_live", ownNonzero, Comparison.GE, 1, "the control's own oracle"
                + " must be nonzero where " + check.against() + "'s is zero"), Double.NaN, null);
        long nonzero = nonzeroWhereZero(truth, act);
        rec.run(() -> rec.ev.controlAtLeast(check.id(), nonzero, 1), nonzero, null);
    }

    private static long nonzeroWhereZero(double[] oracle, double[] act) {
        long n = 0;
        for (int i = 0; i < oracle.length; i++) {
            if (oracle[i] == 0 && act[i] != 0) {
                n++;
            }
        }
        return n;
    }

    private void pair(CheckSpec check, Rec rec) {
        double[] a = slice(check.a(), (double[]) actual(check.a().caseId()));
        double[] b = slice(check.b(), (double[]) actual(check.b().caseId()));
        CaseChecker.Reference ref = reference(check.b().caseId());
        double limit = ref.limit();
        double maxAbs = 0;
        long bits = 0;
        boolean nonFinite = false;
        for (int i = 0; i < a.length; i++) {
            if (Double.doubleToRawLongBits(a[i]) != Double.doubleToRawLongBits(b[i])) {
                bits++;
            }
            double d = Math.abs(a[i] - b[i]);
            if (Double.isNaN(d) && !(Double.isNaN(a[i]) && Double.isNaN(b[i]))) {
                nonFinite = true;
            } else if (!Double.isNaN(d)) {
                maxAbs = Math.max(maxAbs, d);
            }
        }
        double diff = nonFinite ? Double.POSITIVE_INFINITY : maxAbs;
        if (check.control()) {
            double[] oa = slice(check.a(), CaseChecker.flat(reference(check.a().caseId()).oracle()));
            double[] ob = slice(check.b(), CaseChecker.flat(ref.oracle()));
            double oracleGap = 0;
            for (int i = 0; i < oa.length; i++) {
                oracleGap = Math.max(oracleGap, Math.abs(oa[i] - ob[i]));
            }
            double g = oracleGap;
            rec.run(() -> rec.ev.degeneracy("control_oracle_gap", g, Comparison.GT, limit, "the two cases' oracles must"
                    + " differ by more than the limit"), Double.NaN, null);
            rec.gap(check.id(), diff, limit);
            return;
        }
        if (check.type().equals("same-bits")) {
            long n = bits;
            rec.run(() -> rec.ev.checkBitIdentical("bits_differing", n), n == 0 ? Double.POSITIVE_INFINITY : 0, null);
            rec.ev.info("max_abs_diff", diff);
        } else {
            rec.le("max_abs_diff", diff, limit, null);
            rec.ev.info("bits_differing", bits);
        }
    }

    /** The selected slice (batch rows, then query rows; all heads and columns) of a case's output. */
    private double[] slice(CheckSpec.Sel sel, double[] x) {
        if (sel.whole()) {
            return x;
        }
        int[] s = entries.get(sel.caseId()).outputShape();
        int b0 = sel.b0() < 0 ? 0 : sel.b0();
        int b1 = sel.b0() < 0 ? s[0] : sel.b1();
        int r0 = sel.r0() < 0 ? 0 : sel.r0();
        int r1 = sel.r0() < 0 ? s[2] : sel.r1();
        double[] out = new double[(b1 - b0) * s[1] * (r1 - r0) * s[3]];
        int i = 0;
        for (int b = b0; b < b1; b++) {
            for (int h = 0; h < s[1]; h++) {
                for (int r = r0; r < r1; r++) {
                    int from = ((b * s[1] + h) * s[2] + r) * s[3];
                    System.arraycopy(x, from, out, i, s[3]);
                    i += s[3];
                }
            }
        }
        return out;
    }

    private CaseChecker.Reference reference(String id) {
        return references.computeIfAbsent(id, k -> {
            AnyCase c = CaseReader.readAny(dir.resolve(entries.get(k).caseFile()));
            return CaseChecker.reference(c);
        });
    }

    /** The output of case {@code id} as doubles, or a String saying why it is missing or unusable. */
    private Object actual(String id) {
        return actuals.computeIfAbsent(id, k -> {
            Path file = outputs.resolve(k + ".npy");
            if (!Files.isRegularFile(file)) {
                return "missing output " + file + " of case " + k;
            }
            Npy.Wide w;
            try {
                w = Npy.readWide(file);
            } catch (NpyException e) {
                return "unreadable output of case " + k + ": " + e.getMessage();
            }
            int[] expected = entries.get(k).outputShape();
            if (!Arrays.equals(w.array().shape(), expected)) {
                return "output " + file + " of case " + k + " has shape " + w.array().shapeText() + ", the case needs "
                        + Npy.shapeText(expected);
            }
            return w.values();
        });
    }
}
