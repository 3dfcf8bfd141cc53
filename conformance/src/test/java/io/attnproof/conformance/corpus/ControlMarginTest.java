package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every negative control of the corpus (small and full) misses what it must miss by at least twice the limit in exact
 * math: the fp64 oracle of the control's case against the oracle it must miss, over the limit its check uses. A
 * control nearer its bar would fail a correct engine that uses part of its tolerance. The test lists the smallest.
 */
class ControlMarginTest {
    static final double MIN_MARGIN = 2.0;

    @TempDir
    Path dir;

    private final Map<String, CaseChecker.Reference> refs = new HashMap<>();
    private final Map<String, CaseSpec> specs = new HashMap<>();

    private CaseChecker.Reference ref(String id) {
        return refs.computeIfAbsent(id, k -> {
            Path d = dir.resolve(k);
            specs.get(k).write(d);
            return CaseChecker.reference(CaseReader.readAny(d.resolve("case.json")));
        });
    }

    private static double[] slice(CheckSpec.Sel s, int[] o, double[] x) {
        if (s.whole()) {
            return x;
        }
        List<Double> out = new ArrayList<>();
        for (int b = s.b0() < 0 ? 0 : s.b0(); b < (s.b0() < 0 ? o[0] : s.b1()); b++) {
            for (int h = 0; h < o[1]; h++) {
                for (int r = s.r0() < 0 ? 0 : s.r0(); r < (s.r0() < 0 ? o[2] : s.r1()); r++) {
                    for (int c = 0; c < o[3]; c++) {
                        out.add(x[((b * o[1] + h) * o[2] + r) * o[3] + c]);
                    }
                }
            }
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double maxAbs(double[] a, double[] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            m = Math.max(m, Math.abs(a[i] - b[i]));
        }
        return m;
    }

    @Test
    void everyControlMissesByAtLeastTwiceItsLimitInExactMath() {
        Map<String, CheckSpec> controls = new LinkedHashMap<>();
        for (boolean small : new boolean[] {true, false}) {
            CorpusGenerator g = CorpusGenerator.build(13, small);
            g.cases().forEach(c -> specs.putIfAbsent(c.id(), c));
            g.checks().stream().filter(CheckSpec::control).forEach(c -> controls.putIfAbsent(c.id(), c));
        }
        Map<String, Double> margins = new LinkedHashMap<>();
        for (CheckSpec c : controls.values()) {
            String own = c.a().caseId();
            if (c.type().equals("degenerate")) {
                continue;   // a count of live elements, not a distance: CorpusChecker's control_rows_live line
            }
            double margin;
            if (c.against() != null) {
                CaseChecker.Reference truth = ref(c.against());
                margin = maxAbs(CaseChecker.flat(truth.oracle()), CaseChecker.flat(ref(own).oracle())) / truth.limit();
            } else {
                CaseChecker.Reference b = ref(c.b().caseId());
                double[] oa = slice(c.a(), specs.get(own).outputShape(), CaseChecker.flat(ref(own).oracle()));
                double[] ob = slice(c.b(), specs.get(c.b().caseId()).outputShape(), CaseChecker.flat(b.oracle()));
                margin = maxAbs(oa, ob) / b.limit();
            }
            margins.put(c.id(), margin);
        }
        List<Map.Entry<String, Double>> sorted = new ArrayList<>(margins.entrySet());
        sorted.sort(Map.Entry.comparingByValue());
        StringBuilder list = new StringBuilder("smallest control margins (exact math, gap / limit):");
        for (var e : sorted.subList(0, Math.min(8, sorted.size()))) {
            list.append(String.format(Locale.ROOT, "%n  %.3gx %s", e.getValue(), e.getKey()));
        }
        System.out.println(list);
        List<String> below = sorted.stream().filter(e -> !(e.getValue() >= MIN_MARGIN))
                .map(e -> String.format(Locale.ROOT, "%s %.3gx", e.getKey(), e.getValue())).toList();
        assertTrue(below.isEmpty(), below.size() + " of " + margins.size() + " controls under " + MIN_MARGIN + "x: "
                + below + "\n" + list);
        assertTrue(margins.size() >= 30, "the corpus holds its controls: " + margins.size());
    }
}
