package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.Compare;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the corpus checker records besides PASS and FAIL: the kernel lane's faults and skips (as evidence lines, each
 * with its case's seed), the seal on that path (a derived corpus is judged without one, a tampered sealed corpus is
 * refused), the margin of each kind of check and an empty detail when it passes, and why an output is unusable.
 */
class CorpusCheckerDetailsTest {
    static Path corpus;
    static Path good;
    static Manifest manifest;

    @TempDir
    Path dir;

    @BeforeAll
    static void exportAndRun() {
        corpus = SmallCorpus.corpus();
        good = SmallCorpus.outputs();
        manifest = Manifest.read(corpus);
    }

    private static CaseChecker.Reference ref(String id) {
        Manifest.Entry e = manifest.cases().stream().filter(x -> x.id().equals(id)).findFirst().orElseThrow();
        return CaseChecker.reference(CaseReader.readAny(corpus.resolve(e.caseFile())));
    }

    private static CorpusChecker.Outcome outcome(CorpusChecker.Result r, String checkId) {
        return r.outcomes().stream().filter(o -> o.check().id().equals(checkId)).findFirst().orElseThrow();
    }

    @Test
    void theKernelLanesFaultsAndSkipsAreRecorded() throws IOException {
        CheckSpec faulty = manifest.checks().getFirst();
        String x = faulty.a().caseId();
        CheckSpec skipped = manifest.checks().stream().filter(c -> !CorpusExport.caseIds(c).contains(x)).findFirst()
                .orElseThrow();
        String y = skipped.a().caseId();
        long t0 = System.nanoTime();
        CorpusChecker.Result r = CorpusChecker.check(corpus, good, "k", dir.resolve("ev"), new HashMap<>(),
                Map.of(y, "outside the envelope"), Map.of(x, "race on sink"));
        double wall = (System.nanoTime() - t0) / 1e9;
        assertEquals(manifest.checks().size(), r.outcomes().size(), "every check judged");
        assertFalse(r.passed());
        assertEquals(r.outcomes().stream().filter(o -> !o.passed()).toList(), r.failures());
        assertFalse(r.failures().isEmpty());
        CorpusChecker.Outcome f = outcome(r, faulty.id());
        assertFalse(f.passed());
        assertEquals("case " + x + ": race on sink", f.detail());
        CorpusChecker.Outcome s = outcome(r, skipped.id());
        assertTrue(s.passed(), "a skip is no failure");
        assertEquals("case " + y + ": outside the envelope", s.skipped());
        assertTrue(r.seconds() >= 0 && r.seconds() <= wall, r.seconds() + " s within the call's " + wall + " s");
        List<String> lines = Files.readAllLines(r.evidenceFile());
        assertTrue(lines.stream().anyMatch(l -> l.contains("\"kernel_faults[" + x + "]\"")), "the fault's line");
        assertTrue(lines.stream().anyMatch(l -> l.contains("\"skipped\":\"case " + y + ": outside the envelope\"")),
                "the skip's line");
        long seed = manifest.cases().stream().filter(e -> e.id().equals(x)).findFirst().orElseThrow().seed();
        assertTrue(lines.stream().anyMatch(l -> l.contains("\"kernel_faults[" + x + "]\"") && l.contains("\"seed\":"
                + seed)), "the fault's line carries its case's seed " + seed);
    }

    @Test
    void theKernelPathVerifiesASealedCorpusAndJudgesADerivedOneUnsealed() throws IOException {
        Path c = dir.resolve("tampered");
        try (Stream<Path> walk = Files.walk(corpus)) {
            for (Path p : walk.sorted().toList()) {
                Path t = c.resolve(corpus.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t);
                }
            }
        }
        Files.writeString(c.resolve("extra.txt"), "x");
        assertThrows(CaseException.class, () -> CorpusChecker.check(c, good, "k", dir.resolve("ev"), new HashMap<>(),
                Map.of(), Map.of()));
        Path derived = dir.resolve("derived");
        KernelFixtureCorpus.write(derived);
        Path none = Files.createDirectories(dir.resolve("no-outputs"));
        CorpusChecker.Result r = CorpusChecker.check(derived, none, "k", dir.resolve("ev2"), new HashMap<>(), Map.of(),
                Map.of());
        assertFalse(r.outcomes().isEmpty());
        assertTrue(r.outcomes().stream().allMatch(o -> !o.passed() && o.detail().startsWith("missing output ")),
                r.outcomes().toString());
    }

    @Test
    void eachKindOfCheckHasItsMarginAndAPassHasNoDetail() throws IOException {
        CorpusChecker.Result r = CorpusChecker.checkUnsealed(corpus, good, "cpu", dir.resolve("ev"), new HashMap<>(),
                c -> true);
        CheckSpec oracle = manifest.checks().stream().filter(c -> c.type().equals("oracle") && !c.control())
                .findFirst().orElseThrow();
        CorpusChecker.Outcome o = outcome(r, oracle.id());
        assertTrue(o.passed());
        assertEquals("", o.detail(), "a pass records no note");
        double[] act = Npy.readWide(good.resolve(oracle.a().caseId() + ".npy")).values();
        CaseChecker.Verdict v = CaseChecker.judge(ref(oracle.a().caseId()), act);
        double want = v.maxAbsErr() == 0 ? Double.POSITIVE_INFINITY : v.limit() / v.maxAbsErr();
        if (v.hasContractTier()) {
            want = Math.min(want, v.maxAbsErr() == 0 ? Double.POSITIVE_INFINITY : v.contractLimit() / v.maxAbsErr());
        }
        assertEquals(want, o.margin(), 1e-12 * Math.abs(want), "limit ÷ error, the nearest tier");
        assertTrue(want > 1 && Double.isFinite(want), "degeneracy: a finite margin above 1 (" + want + ")");

        CheckSpec control = manifest.checks().stream().filter(c -> c.type().equals("oracle") && c.control())
                .findFirst().orElseThrow();
        double[] cact = Npy.readWide(good.resolve(control.a().caseId() + ".npy")).values();
        CaseChecker.Reference truth = ref(control.against());
        double gap = Compare.of(truth.oracle(), cact).maxAbs();
        assertEquals(gap / truth.limit(), outcome(r, control.id()).margin(), 1e-12 * gap / truth.limit(),
                "a control's margin: its gap ÷ the limit");

        CheckSpec bits = manifest.checks().stream().filter(c -> c.type().equals("same-bits") && !c.control())
                .findFirst().orElseThrow();
        assertEquals(Double.POSITIVE_INFINITY, outcome(r, bits.id()).margin(), "identical bits: an infinite margin");
        CheckSpec within = manifest.checks().stream().filter(c -> c.type().equals("same-within-rule") && !c.control())
                .findFirst().orElseThrow();
        List<String> lines = Files.readAllLines(r.evidenceFile());
        assertTrue(lines.stream().anyMatch(l -> l.contains("#" + bits.id() + "\"") && l.contains("\"max_abs_diff\"")),
                "a same-bits check records its max-abs difference");
        assertTrue(lines.stream().anyMatch(l -> l.contains("#" + within.id() + "\"") && l.contains("\"bits_differing\"")),
                "a within-rule check records its differing bits");
    }

    @Test
    void corpusCheckJudgesEveryCheckOfASealedCorpus() {
        CorpusChecker.Result r = CorpusChecker.check(corpus, good, "cpu", dir.resolve("ev"));
        assertEquals(manifest.checks().size(), r.outcomes().size());
        assertTrue(r.passed(), () -> r.failures().toString());
    }

    /** The flat index of the first element of selection {@code s} of an output shaped {@code o}. */
    private static int firstOf(CheckSpec.Sel s, int[] o) {
        int b0 = Math.max(s.b0(), 0);
        int r0 = Math.max(s.r0(), 0);
        return (b0 * o[1] * o[2] + r0) * o[3];
    }

    private static int[] shape(String id) {
        return manifest.cases().stream().filter(e -> e.id().equals(id)).findFirst().orElseThrow().outputShape();
    }

    /** Within a rule, NaN at the same place on both sides agrees; NaN on one side only is a failure. */
    @Test
    void nanAtTheSamePlaceOnBothSidesOfAPairIsAgreement() throws IOException {
        CheckSpec pair = manifest.checks().stream().filter(c -> c.type().equals("same-within-rule") && !c.control())
                .findFirst().orElseThrow();
        Path out = Files.createDirectories(dir.resolve("nan"));
        try (Stream<Path> files = Files.list(good)) {
            for (Path p : files.toList()) {
                Files.copy(p, out.resolve(p.getFileName()));
            }
        }
        Map<String, float[]> planted = new HashMap<>();
        for (CheckSpec.Sel s : List.of(pair.a(), pair.b())) {
            float[] f = planted.computeIfAbsent(s.caseId(), id -> {
                double[] v = Npy.readWide(good.resolve(id + ".npy")).values();
                float[] x = new float[v.length];
                for (int i = 0; i < v.length; i++) {
                    x[i] = (float) v[i];
                }
                return x;
            });
            f[firstOf(s, shape(s.caseId()))] = Float.NaN;
        }
        planted.forEach((id, f) -> Npy.write(out.resolve(id + ".npy"), Npy.DType.F4, shape(id), f));
        CorpusChecker.Outcome o = CorpusChecker.checkUnsealed(corpus, out, "x", dir.resolve("ev"), new HashMap<>(),
                c -> c.id().equals(pair.id())).outcomes().getFirst();
        assertTrue(o.passed(), "NaN on both sides at the same place agrees: " + o);
        // Negative control: NaN on a's side only fails (b's output as the system wrote it).
        if (!pair.a().caseId().equals(pair.b().caseId())) {
            Files.copy(good.resolve(pair.b().caseId() + ".npy"), out.resolve(pair.b().caseId() + ".npy"),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } else {
            float[] f = planted.get(pair.b().caseId());
            f[firstOf(pair.b(), shape(pair.b().caseId()))] = 0.5f;
            Npy.write(out.resolve(pair.b().caseId() + ".npy"), Npy.DType.F4, shape(pair.b().caseId()), f);
        }
        o = CorpusChecker.checkUnsealed(corpus, out, "x", dir.resolve("ev"), new HashMap<>(),
                c -> c.id().equals(pair.id())).outcomes().getFirst();
        assertFalse(o.passed(), "NaN on one side only: " + o);
    }

    @Test
    void anUnreadableOrMisshapenOutputIsNamed() throws IOException {
        Path out = Files.createDirectories(dir.resolve("out"));
        try (Stream<Path> files = Files.list(good)) {
            for (Path p : files.toList()) {
                Files.copy(p, out.resolve(p.getFileName()));
            }
        }
        CheckSpec check = manifest.checks().stream().filter(c -> c.type().equals("oracle") && !c.control())
                .findFirst().orElseThrow();
        String id = check.a().caseId();
        Files.writeString(out.resolve(id + ".npy"), "not an npy file");
        CorpusChecker.Result r = CorpusChecker.checkUnsealed(corpus, out, "x", dir.resolve("ev"), new HashMap<>(),
                c -> c.id().equals(check.id()));
        CorpusChecker.Outcome o = r.outcomes().getFirst();
        assertFalse(o.passed());
        assertTrue(Files.readAllLines(r.evidenceFile()).stream().anyMatch(l -> l.contains("\"output_present\"")),
                "the missing output is an evidence line");
        assertTrue(o.detail().startsWith("unreadable output of case " + id + ": "), o.detail());
        Npy.write(out.resolve(id + ".npy"), Npy.DType.F4, new int[] {1}, new float[1]);
        o = CorpusChecker.checkUnsealed(corpus, out, "x", dir.resolve("ev"), new HashMap<>(),
                c -> c.id().equals(check.id())).outcomes().getFirst();
        assertFalse(o.passed());
        int[] shape = manifest.cases().stream().filter(e -> e.id().equals(id)).findFirst().orElseThrow().outputShape();
        assertEquals("output " + out.resolve(id + ".npy") + " of case " + id + " has shape (1,), the case needs "
                + Npy.shapeText(shape), o.detail());
    }
}
