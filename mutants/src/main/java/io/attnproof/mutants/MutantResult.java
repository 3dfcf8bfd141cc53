package io.attnproof.mutants;

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
        JsonOut o = new JsonOut();
        o.begin().field("id", id).field("claims", claims).field("breaks", breaks).field("origin", origin);
        if (interleaving != null) {
            o.field("interleaving", interleaving);
        }
        o.field("patch", patch).field("status", status.json()).field("detail", detail);
        o.key("killers").beginArray();
        for (ClaimTests.Killer k : killers) {
            o.item().begin().field("test", k.test()).field("message", k.message()).end();
        }
        o.endArray();
        o.key("values").beginArray();
        for (EvidenceValues.Value v : values) {
            o.item().begin().field("claim", v.claim()).field("kind", v.kind()).field("metric", v.metric())
                    .field("test", v.test());
            if (v.seed() != null) {
                o.field("seed", v.seed().longValue());
            }
            reading(o, "fix", v.fix());
            reading(o, "mutant", v.mutant());
            o.field("margin", v.margin()).end();
        }
        o.endArray();
        if (decisive == null) {
            o.fieldNull("decisive");
        } else {
            o.key("decisive").begin().field("claim", decisive.claim()).field("kind", decisive.kind())
                    .field("metric", decisive.metric()).field("test", decisive.test())
                    .field("margin", decisive.margin()).end();
        }
        if (Double.isNaN(margin)) {
            o.fieldNull("margin");
        } else {
            o.field("margin", margin);
        }
        o.field("tests_run", testsRun).field("tests_failed", testsFailed)
                .field("seconds", Math.round(seconds * 100) / 100.0).end();
        return o.toString();
    }

    private static void reading(JsonOut o, String name, EvidenceValues.Reading r) {
        if (r == null) {
            o.fieldNull(name);
            return;
        }
        o.key(name).begin().field("value", r.value()).field("limit", r.limit()).field("passed", r.passed());
        if (r.cmp() != null) {
            o.field("cmp", r.cmp());
        }
        o.end();
    }
}
