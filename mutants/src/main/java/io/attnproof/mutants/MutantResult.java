package io.attnproof.mutants;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.attnproof.fixtures.json.JsonTrees;
import java.util.List;

/**
 * What the campaign found for one mutant: {@code status}, the tests that killed it with their messages, the
 * failing evidence lines with the values with the fix and with the mutant, the decisive kill (the failing check or
 * control line of one of its claims with the largest observed ÷ allowed; null when none failed), its margin (NaN
 * without a decisive line) and the wall time it took.
 */
public record MutantResult(String id, List<String> claims, String breaks, String origin, String interleaving,
        String patch, Status status,
        String detail, List<ClaimTests.Killer> killers, List<EvidenceValues.Value> values,
        EvidenceValues.Value decisive, double margin, int testsRun,
        int testsFailed, double seconds) {

    public MutantResult {
        claims = List.copyOf(claims);
        killers = List.copyOf(killers);
        values = List.copyOf(values);
    }

    /** The outcome of one mutant. */
    public enum Status {
        /** At least one claim test failed. */
        KILLED,
        /** Every claim test passed: the claims do not catch this mutant. */
        SURVIVED,
        /** The patch no longer applies, the mutated sources do not compile, or no test proves its claims. */
        STALE,
        /** The claim tests ran past the per-mutant limit. */
        TIMEOUT;

        public String json() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The JSON object of this result, as {@code results.json} holds it. */
    public String toJson() {
        ObjectNode o = JsonTrees.MAPPER.createObjectNode();
        o.put("id", id);
        ArrayNode claimList = o.putArray("claims");
        claims.forEach(claimList::add);
        o.put("breaks", breaks).put("origin", origin);
        if (interleaving != null) {
            o.put("interleaving", interleaving);
        }
        o.put("patch", patch).put("status", status.json()).put("detail", detail);
        ArrayNode killerList = o.putArray("killers");
        for (ClaimTests.Killer k : killers) {
            killerList.addObject().put("test", k.test()).put("message", k.message());
        }
        ArrayNode valueList = o.putArray("values");
        for (EvidenceValues.Value v : values) {
            ObjectNode line = valueList.addObject().put("claim", v.claim()).put("kind", v.kind().key())
                    .put("metric", v.metric()).put("test", v.test());
            if (v.seed() != null) {
                line.put("seed", v.seed().longValue());
            }
            reading(line, "fix", v.fix());
            reading(line, "mutant", v.mutant());
            line.put("margin", v.margin());
        }
        if (decisive == null) {
            o.putNull("decisive");
        } else {
            o.putObject("decisive").put("claim", decisive.claim()).put("kind", decisive.kind().key())
                    .put("metric", decisive.metric()).put("test", decisive.test()).put("margin", decisive.margin());
        }
        if (Double.isNaN(margin)) {
            o.putNull("margin");
        } else {
            o.put("margin", margin);
        }
        o.put("tests_run", testsRun).put("tests_failed", testsFailed).put("seconds", Math.round(seconds * 100) / 100.0);
        return JsonTrees.write(o);
    }

    private static void reading(ObjectNode o, String name, EvidenceValues.Reading r) {
        if (r == null) {
            o.putNull(name);
            return;
        }
        ObjectNode reading = o.putObject(name).put("value", r.value()).put("limit", r.limit()).put("passed", r.passed());
        if (r.cmp() != null) {
            reading.put("cmp", r.cmp().symbol());
        }
    }
}
