package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.npy.Npy;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every rule of {@code corpus check} can fail: for every check of the small corpus, outputs of the system under test
 * (which pass) are changed by one fault aimed at that check's rule (a NaN or inf where the oracle is finite, an
 * element off by three limits, two rows swapped, one ulp off in a same-bits slice, a slice filled from another row, a
 * control's output made equal to what it must miss, a nonzero where a degenerate row's oracle is exactly 0), and the
 * check must FAIL. The check type each claim uses is pinned, and the cosine difference is taken over the whole output.
 * Claim F1: an engine's outputs PASS or FAIL exactly as the claims say only if every rule of the checker can fail
 * (the curated mutants of the checker's rules name F1 and die on these tests' lines).
 */
@Claim("F1")
class CheckRulesTest {
    static Path corpus;
    static Path good;
    static Manifest manifest;
    static final Map<String, CaseChecker.Reference> REFERENCES = new HashMap<>();
    static final Map<String, double[]> GOOD = new HashMap<>();

    @TempDir
    Path dir;

    @BeforeAll
    static void exportAndRun() throws IOException {
        // Not kept across runs of the class in one JVM: PIT hot-swaps every mutant of a class into one minion.
        REFERENCES.clear();
        GOOD.clear();
        corpus = SmallCorpus.corpus();
        good = SmallCorpus.outputs();
        manifest = Manifest.read(corpus);
        for (Manifest.Entry x : manifest.cases()) {
            GOOD.put(x.id(), Npy.readWide(good.resolve(x.id() + ".npy")).values());
        }
    }

    private static Manifest.Entry entry(String id) {
        return manifest.cases().stream().filter(x -> x.id().equals(id)).findFirst().orElseThrow();
    }

    private static CaseChecker.Reference ref(String id) {
        return REFERENCES.computeIfAbsent(id,
                k -> CaseChecker.reference(CaseReader.readAny(corpus.resolve(entry(k).caseFile()))));
    }

    /** One fault: the outputs that replace the system's, by case id. */
    record Fault(String name, Map<String, double[]> outputs) {
    }

    /** The outcome of {@code check} when {@code fault}'s outputs replace the good ones. */
    private CorpusChecker.Outcome judge(CheckSpec check, Fault fault) throws IOException {
        Path out = dir.resolve("out");
        if (!Files.isDirectory(out)) {
            Files.createDirectories(out);
            for (Manifest.Entry x : manifest.cases()) {
                Files.copy(good.resolve(x.id() + ".npy"), out.resolve(x.id() + ".npy"));
            }
        }
        for (var e : fault.outputs().entrySet()) {
            writeF8(out.resolve(e.getKey() + ".npy"), entry(e.getKey()).outputShape(), e.getValue());
        }
        try {
            CorpusChecker.Result r = CorpusChecker.checkUnsealed(corpus, out, "planted", dir.resolve("ev"), REFERENCES,
                    c -> c.id().equals(check.id()));
            assertEquals(1, r.outcomes().size());
            return r.outcomes().getFirst();
        } finally {
            for (String id : fault.outputs().keySet()) {
                Files.copy(good.resolve(id + ".npy"), out.resolve(id + ".npy"),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** Writes doubles exactly, as '<f8'. */
    private static void writeF8(Path file, int[] shape, double[] values) throws IOException {
        // Npy writes floats; '<f8' with float values loses nothing, and a planted double needs 8 bytes.
        byte[] head = Npy.encode(Npy.DType.F8, shape, new float[values.length], 1);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(head).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int start = head.length - values.length * 8;
        for (int i = 0; i < values.length; i++) {
            b.putDouble(start + 8 * i, values[i]);
        }
        Files.write(file, head);
    }

    /** Flat indices of slice {@code s} of case output shape {@code o}, in order. */
    private static int[] indices(CheckSpec.Sel s, int[] o) {
        int b0 = s.b0() < 0 ? 0 : s.b0();
        int b1 = s.b0() < 0 ? o[0] : s.b1();
        int r0 = s.r0() < 0 ? 0 : s.r0();
        int r1 = s.r0() < 0 ? o[2] : s.r1();
        List<Integer> out = new ArrayList<>();
        for (int b = b0; b < b1; b++) {
            for (int h = 0; h < o[1]; h++) {
                for (int r = r0; r < r1; r++) {
                    for (int c = 0; c < o[3]; c++) {
                        out.add(((b * o[1] + h) * o[2] + r) * o[3] + c);
                    }
                }
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Fault one(String name, String id, double[] values) {
        return new Fault(name, Map.of(id, values));
    }

    /** The faults aimed at {@code check}'s rules. */
    static List<Fault> faults(CheckSpec check) {
        List<Fault> out = new ArrayList<>();
        String a = check.a().caseId();
        double[] act = GOOD.get(a).clone();
        int[] shape = entry(a).outputShape();
        if (check.control()) {
            // The engine ignored what the control changed: its output is the one the control must miss.
            String truth = check.against() != null ? check.against() : check.b().caseId();
            double[] t = GOOD.get(truth);
            double[] x = act.clone();
            int[] idx = indices(check.a(), shape);
            if (check.against() != null) {
                assertEquals(x.length, t.length, check.id() + ": the control and its case share a shape");
                System.arraycopy(t, 0, x, 0, t.length);
            } else {
                int[] tIdx = indices(check.b(), entry(truth).outputShape());
                for (int i = 0; i < idx.length; i++) {
                    x[idx[i]] = t[tIdx[i]];
                }
            }
            out.add(one("control output equals what it must miss", a, x));
            return out;
        }
        double[] oracle = CaseChecker.flat(ref(a).oracle());
        int[] idx = check.type().startsWith("same") ? indices(check.a(), shape) : indices(CheckSpec.Sel.all(a), shape);
        int finite = -1;
        for (int i : idx) {
            if (Double.isFinite(oracle[i]) && oracle[i] != 0) {
                finite = i;
                break;
            }
        }
        assertTrue(finite >= 0, check.id() + " has a finite nonzero oracle element");
        double[] nan = act.clone();
        nan[finite] = Double.NaN;
        out.add(one("one NaN where the oracle is finite", a, nan));
        double[] inf = act.clone();
        inf[finite] = Double.POSITIVE_INFINITY;
        out.add(one("one +inf where the oracle is finite", a, inf));
        double limit = check.type().startsWith("same") ? ref(check.b().caseId()).limit() : ref(a).limit();
        double[] off = act.clone();
        off[finite] += 3 * limit;
        out.add(one("one element off by 3 limits", a, off));
        switch (check.type()) {
            case "same-bits" -> {
                double[] ulp = act.clone();
                ulp[finite] = Math.nextUp((float) act[finite]);
                out.add(one("one element one float ulp off", a, ulp));
            }
            case "same-within-rule" -> {
                if (check.a().whole()) {
                    double[] x = swap(act, oracle, shape, 2 * limit);
                    assertTrue(x != null, check.id() + " has two rows to swap");
                    out.add(one("two query rows swapped", a, x));
                    break;
                }
                // The slice filled from another batch row (or query row) of the same output: a wrong slice.
                int[] other = indices(shifted(check.a(), shape), shape);
                double[] x = act.clone();
                for (int i = 0; i < idx.length; i++) {
                    x[idx[i]] = act[other[i]];
                }
                out.add(one("the slice taken from another row", a, x));
            }
            default -> {
                if (swap(act, oracle, shape, 2 * limit) instanceof double[] x) {
                    out.add(one("two query rows swapped", a, x));
                }
                CaseChecker.Reference r = ref(a);
                if (r.contract() != null && r.contractLimit() < r.limit()) {
                    double[] x = act.clone();
                    x[finite] = oracle[finite] + (r.contractLimit() + r.limit()) / 2;
                    out.add(one("one element between the contract and the naive limit", a, x));
                }
                if (check.type().equals("degenerate")) {
                    for (int i = 0; i < oracle.length; i++) {
                        if (oracle[i] == 0) {
                            double[] x = act.clone();
                            x[i] = 1e-30;
                            out.add(one("1e-30 where the oracle is exactly 0", a, x));
                            break;
                        }
                    }
                }
            }
        }
        return out;
    }

    /** The same slice one batch row on (or, with one batch row, one query row on), wrapping. */
    private static CheckSpec.Sel shifted(CheckSpec.Sel s, int[] o) {
        if (s.b0() >= 0 && s.b1() - s.b0() < o[0]) {
            int n = s.b1() - s.b0();
            int b0 = (s.b0() + n) % (o[0] - n + 1);
            return new CheckSpec.Sel(s.caseId(), b0, b0 + n, s.r0(), s.r1());
        }
        int r0 = s.r0() < 0 ? 0 : s.r0();
        int n = s.r0() < 0 ? o[2] : s.r1() - s.r0();
        assertTrue(n < o[2], s + ": a slice to shift needs a spare row");
        int to = (r0 + n) % (o[2] - n + 1);
        return new CheckSpec.Sel(s.caseId(), s.b0(), s.b1(), to, to + n);
    }

    /** {@code act} with the first two query rows whose oracles differ by more than {@code gap} swapped; null if none. */
    private static double[] swap(double[] act, double[] oracle, int[] o, double gap) {
        int d = o[3];
        int rows = o[0] * o[1] * o[2];
        for (int i = 0; i < rows; i++) {
            for (int j = i + 1; j < rows; j++) {
                double m = 0;
                for (int c = 0; c < d; c++) {
                    double x = oracle[i * d + c];
                    double y = oracle[j * d + c];
                    m = Math.max(m, Double.isFinite(x) && Double.isFinite(y) ? Math.abs(x - y) : 0);
                }
                if (m > gap) {
                    double[] x = act.clone();
                    System.arraycopy(act, j * d, x, i * d, d);
                    System.arraycopy(act, i * d, x, j * d, d);
                    return x;
                }
            }
        }
        return null;
    }

    @Test
    void theSystemsOutputsPassEveryCheckUntouched(Evidence ev) {
        CorpusChecker.Result r = CorpusChecker.checkUnsealed(corpus, good, "cpu", dir.resolve("ev"), REFERENCES,
                c -> true);
        ev.checkEqual("checks_failing_the_systems_own_outputs", r.failures().size(), 0);
        assertTrue(r.passed(), () -> r.failures().toString());
    }

    @Test
    void everyCheckFailsEachFaultAimedAtItsRule(Evidence ev) throws IOException {
        Map<String, Integer> perFault = new TreeMap<>();
        Map<String, Integer> passedPerFault = new TreeMap<>();
        List<String> passedWrongly = new ArrayList<>();
        for (CheckSpec check : manifest.checks()) {
            List<Fault> faults = faults(check);
            assertTrue(!faults.isEmpty(), check.id());
            for (Fault f : faults) {
                CorpusChecker.Outcome o = judge(check, f);
                perFault.merge(check.type() + (check.control() ? " control" : "") + ": " + f.name(), 1, Integer::sum);
                if (o.passed()) {
                    passedWrongly.add(check.id() + " PASSED with " + f.name());
                    passedPerFault.merge(check.type() + (check.control() ? " control" : "") + ": " + f.name(), 1,
                            Integer::sum);
                }
            }
        }
        System.out.println("CheckRulesTest: faults planted per rule " + perFault);
        // One line per rule: how many checks a fault aimed at that rule got past (the first rule that leaks fails).
        for (String rule : perFault.keySet()) {
            ev.checkEqual("checks_passing_the_fault[" + rule + "]", passedPerFault.getOrDefault(rule, 0), 0);
        }
        assertEquals(List.of(), passedWrongly);
        // Every rule met its fault somewhere in the corpus.
        for (String rule : List.of("oracle: one NaN where the oracle is finite", "oracle: one +inf where the oracle is"
                + " finite", "oracle: one element off by 3 limits", "oracle: two query rows swapped",
                "oracle: one element between the contract and the naive limit", "oracle control: control output equals"
                + " what it must miss", "same-bits: one element one float ulp off", "same-within-rule: the slice taken"
                + " from another row", "same-within-rule: two query rows swapped", "same-within-rule control: control output equals what it must miss",
                "degenerate: 1e-30 where the oracle is exactly 0", "degenerate control: control output equals what it"
                + " must miss")) {
            assertTrue(perFault.containsKey(rule), rule + " was never planted: " + perFault.keySet());
        }
    }

    /** The check types (type/expect) each claim's manifest entries use: a bit identity stays a bit identity. */
    @Test
    void theCheckTypeOfEveryClaimIsPinned() {
        Map<String, Set<String>> want = new LinkedHashMap<>();
        Set<String> oracleWithControl = Set.of("oracle/pass", "oracle/fail");
        for (String c : List.of("U1", "U2", "U4", "U5", "U6", "U7", "S1", "S2", "S6", "B1", "B4", "B5")) {
            want.put(c, oracleWithControl);
        }
        want.put("U3", Set.of("oracle/pass", "same-bits/pass", "same-within-rule/fail"));
        want.put("U8", Set.of("oracle/pass", "degenerate/pass", "oracle/fail"));
        want.put("R1", Set.of("oracle/pass", "same-within-rule/pass", "oracle/fail", "same-within-rule/fail"));
        want.put("R9", want.get("R1"));
        want.put("R5", Set.of("oracle/pass", "same-bits/pass", "same-within-rule/fail"));
        want.put("V1", Set.of("oracle/pass", "same-bits/pass", "same-within-rule/fail"));
        want.put("V3", Set.of("oracle/pass", "same-within-rule/pass", "same-within-rule/fail"));
        want.put("B2", Set.of("oracle/pass", "same-within-rule/pass", "same-within-rule/fail"));
        want.put("B6", Set.of("degenerate/pass", "degenerate/fail", "oracle/fail"));
        for (boolean small : new boolean[] {true, false}) {
            Map<String, Set<String>> got = new LinkedHashMap<>();
            for (CheckSpec c : CorpusGenerator.build(13, small).checks()) {
                got.computeIfAbsent(c.claim(), k -> new TreeSet<>()).add(c.type() + "/" + c.expect());
            }
            for (String claim : CorpusGenerator.CLAIMS) {
                assertEquals(new TreeSet<>(want.get(claim)), got.get(claim), claim + (small ? " (small)" : " (full)"));
            }
        }
        // The identity claims compare bits, never within a tolerance, on every positive pair check.
        for (CheckSpec c : CorpusGenerator.build(13, false).checks()) {
            if (Set.of("U3", "R5", "V1").contains(c.claim()) && c.type().startsWith("same") && !c.control()) {
                assertEquals("same-bits", c.type(), c.id());
            }
        }
    }

    /** The cosine difference is over the whole output: heads scaled apart are parallel per head, not over the output. */
    @Test
    void theCosineDifferenceIsTakenOverTheWholeOutput(Evidence ev) throws IOException {
        CheckSpec check = manifest.checks().stream().filter(c -> c.id().equals("U6:oracle:U6-r4-F32")).findFirst()
                .orElseThrow();
        double[][][][] o = ref("U6-r4-F32").oracle();
        double[] flat = CaseChecker.flat(o);
        int[] shape = entry("U6-r4-F32").outputShape();
        int per = shape[2] * shape[3];
        double[] x = flat.clone();
        double dot = 0;
        double nx = 0;
        double ne = 0;
        for (int i = 0; i < x.length; i++) {
            int h = (i / per) % shape[1];
            double s = h % 2 == 0 ? 1 : 3;  // odd heads three times as long, each head parallel to its oracle
            x[i] = s * flat[i];
            dot += x[i] * flat[i];
            nx += x[i] * x[i];
            ne += flat[i] * flat[i];
        }
        double want = 1 - dot / (Math.sqrt(nx) * Math.sqrt(ne));
        assertTrue(want > 0.05, "the scaled output must be visibly off over the whole output: " + want);
        CorpusChecker.Outcome out = judge(check, one("odd heads scaled by 3", "U6-r4-F32", x));
        assertTrue(!out.passed(), out.toString());
        double got = Double.NaN;
        for (String line : Files.readAllLines(dir.resolve("ev/CorpusChecker.jsonl"))) {
            Map<String, Object> m = JsonTrees.parseObject(line);
            if ("cosine_diff".equals(m.get("metric")) && String.valueOf(m.get("test")).endsWith("#" + check.id())) {
                got = ((Number) m.get("value")).doubleValue();
            }
        }
        // NaN (no cosine_diff line) fails the check as well.
        ev.check("cosine_diff_error_against_the_whole_output_value", Math.abs(got - want), 1e-12, null);
    }
}
