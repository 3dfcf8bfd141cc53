package io.attnproof.conformance.corpus;

import io.attnproof.fixtures.json.JsonTrees;
import io.attnproof.conformance.cases.CaseException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code manifest.json} of a corpus: the format tag, seed, scale, every case (id, claim, kind, dtype, seed, its
 * {@code case.json} relative to the corpus folder, output shape, description) and every check ({@link CheckSpec}).
 */
public record Manifest(long seed, String scale, List<Entry> cases, List<CheckSpec> checks) {
    /** The format tag written and required. */
    public static final String FORMAT = "attnproof-corpus/1";
    /** The file name inside the corpus folder. */
    public static final String FILE = "manifest.json";

    /** One case of the manifest. */
    public record Entry(String id, String claim, String kind, String dtype, long seed, String caseFile,
            int[] outputShape, String description) {
    }

    /** The manifest text: deterministic (no dates, no paths outside the corpus). */
    public String toJson() {
        StringBuilder s = new StringBuilder("{\n");
        s.append("  \"format\": ").append(JsonTrees.quote(FORMAT)).append(",\n");
        s.append("  \"seed\": ").append(seed).append(",\n");
        s.append("  \"scale\": ").append(JsonTrees.quote(scale)).append(",\n");
        s.append("  \"outputs\": ").append(JsonTrees.quote("<case id>.npy, float16/32/64 of output_shape, row-major")).append(",\n");
        s.append("  \"tolerance\": ").append(JsonTrees.quote("max_abs_err <= 2 x (naive same-precision error) + 2 x noise"
                + " floor; F16/BF16 also <= 2 x (error of a reference keeping logits and probabilities in f32) + 2 x"
                + " noise floor; NaN/inf positions must match the oracle's")).append(",\n");
        s.append("  \"cases\": [\n");
        for (int i = 0; i < cases.size(); i++) {
            Entry e = cases.get(i);
            s.append("    {\"id\": ").append(JsonTrees.quote(e.id())).append(", \"claim\": ").append(JsonTrees.quote(e.claim()))
                    .append(", \"kind\": ").append(JsonTrees.quote(e.kind())).append(", \"dtype\": ")
                    .append(JsonTrees.quote(e.dtype())).append(", \"seed\": ").append(e.seed()).append(", \"case\": ")
                    .append(JsonTrees.quote(e.caseFile())).append(", \"output_shape\": ").append(CaseSpec.ints(e.outputShape()))
                    .append(", \"description\": ").append(JsonTrees.quote(e.description())).append('}')
                    .append(i + 1 < cases.size() ? ",\n" : "\n");
        }
        s.append("  ],\n  \"checks\": [\n");
        for (int i = 0; i < checks.size(); i++) {
            CheckSpec c = checks.get(i);
            s.append("    {\"id\": ").append(JsonTrees.quote(c.id())).append(", \"claim\": ").append(JsonTrees.quote(c.claim()))
                    .append(", \"type\": ").append(JsonTrees.quote(c.type())).append(", \"expect\": ")
                    .append(JsonTrees.quote(c.expect())).append(", \"a\": ").append(sel(c.a()));
            if (c.b() != null) {
                s.append(", \"b\": ").append(sel(c.b()));
            }
            if (c.against() != null) {
                s.append(", \"against\": ").append(JsonTrees.quote(c.against()));
            }
            s.append(", \"note\": ").append(JsonTrees.quote(c.note())).append('}').append(i + 1 < checks.size() ? ",\n" : "\n");
        }
        s.append("  ]\n}\n");
        return s.toString();
    }

    private static String sel(CheckSpec.Sel x) {
        StringBuilder s = new StringBuilder("{\"case\": ").append(JsonTrees.quote(x.caseId()));
        if (x.b0() >= 0) {
            s.append(", \"b\": [").append(x.b0()).append(", ").append(x.b1()).append(']');
        }
        if (x.r0() >= 0) {
            s.append(", \"r\": [").append(x.r0()).append(", ").append(x.r1()).append(']');
        }
        return s.append('}').toString();
    }

    /**
     * Reads {@code dir/manifest.json}.
     *
     * @throws CaseException naming the manifest and the field at fault
     */
    public static Manifest read(Path dir) {
        Path file = dir.resolve(FILE);
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new CaseException(file, null, "no manifest: is " + dir + " a corpus (attnproof corpus export)?");
        } catch (IOException e) {
            throw new CaseException(file, null, "cannot read: " + e);
        }
        Map<String, Object> root;
        try {
            root = JsonTrees.parseObject(text);
        } catch (IllegalArgumentException e) {
            throw new CaseException(file, null, "malformed JSON: " + e.getMessage());
        }
        if (!FORMAT.equals(root.get("format"))) {
            throw new CaseException(file, "format", root.get("format") + " must be " + FORMAT);
        }
        // Seeds are 64-bit: read them exactly (the plain tree holds every number as a double).
        com.fasterxml.jackson.databind.JsonNode exact;
        try {
            exact = JsonTrees.MAPPER.readTree(text);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new CaseException(file, null, "malformed JSON: " + e.getOriginalMessage());
        }
        List<Entry> cases = new ArrayList<>();
        Map<String, Entry> byId = new LinkedHashMap<>();
        for (Object o : list(file, root, "cases")) {
            Map<String, Object> m = map(file, o, "cases[]");
            String caseId = str(file, m, "id", "cases[].id");
            int[] shape = ints(file, m.get("output_shape"), "cases[" + caseId + "].output_shape");
            if (shape.length != 4 || Arrays.stream(shape).anyMatch(x -> x <= 0)) {
                throw new CaseException(file, "cases[" + caseId + "].output_shape", CaseSpec.ints(shape)
                        + " must be 4 positive integers [B, H, T, D]");
            }
            Entry e = new Entry(caseId, str(file, m, "claim"), str(file, m, "kind"), str(file, m, "dtype"),
                    seed(file, m, exact.get("cases").get(cases.size()), "cases[" + caseId + "].seed"), str(file, m,
                    "case"), shape,
                    String.valueOf(m.getOrDefault("description", "")));
            if (byId.put(e.id(), e) != null) {
                throw new CaseException(file, "cases[" + caseId + "].id", "case id " + caseId + " appears twice");
            }
            cases.add(e);
        }
        List<CheckSpec> checks = new ArrayList<>();
        Map<String, CheckSpec> checkIds = new LinkedHashMap<>();
        for (Object o : list(file, root, "checks")) {
            Map<String, Object> m = map(file, o, "checks[]");
            String id = str(file, m, "id");
            String at = "checks[" + id + "].";
            if (checkIds.containsKey(id)) {
                throw new CaseException(file, at + "id", "check id " + id + " appears twice");
            }
            String type = str(file, m, "type");
            if (!List.of("oracle", "same-bits", "same-within-rule", "degenerate").contains(type)) {
                throw new CaseException(file, at + "type", type + " must be oracle, same-bits, same-within-rule or"
                        + " degenerate");
            }
            String expect = str(file, m, "expect");
            if (!expect.equals("pass") && !expect.equals("fail")) {
                throw new CaseException(file, at + "expect", expect + " must be pass or fail");
            }
            boolean pair = type.startsWith("same");
            CheckSpec.Sel a = sel(file, at + "a", m.get("a"), byId, !pair);
            CheckSpec.Sel b = m.get("b") == null ? null : sel(file, at + "b", m.get("b"), byId, !pair);
            if (pair && b == null) {
                throw new CaseException(file, at + "b", "missing: a " + type + " check names two outputs, a and b");
            }
            if (!pair && b != null) {
                throw new CaseException(file, at + "b", "a " + type + " check reads one output, a; b is for"
                        + " same-bits and same-within-rule");
            }
            if (pair) {
                long na = elements(byId.get(a.caseId()), a);
                long nb = elements(byId.get(b.caseId()), b);
                if (na != nb) {
                    throw new CaseException(file, at + "b", "the slices of " + a.caseId() + " and " + b.caseId()
                            + " hold " + na + " and " + nb + " elements: a pair compares equal slices");
                }
            }
            String against = m.get("against") == null ? null : String.valueOf(m.get("against"));
            if (against != null && !byId.containsKey(against)) {
                throw new CaseException(file, at + "against", against + " is not a case of the manifest");
            }
            boolean control = expect.equals("fail");
            if (!pair && control && against == null) {
                throw new CaseException(file, at + "against", "missing: a control (expect fail) of type " + type
                        + " names the case whose oracle its output must miss");
            }
            if (against != null && !Arrays.equals(byId.get(against).outputShape(), byId.get(a.caseId()).outputShape())) {
                throw new CaseException(file, at + "against", against + " has output_shape "
                        + CaseSpec.ints(byId.get(against).outputShape()) + ", " + a.caseId() + " "
                        + CaseSpec.ints(byId.get(a.caseId()).outputShape()) + ": a control misses an oracle of its own"
                        + " shape");
            }
            if (against != null && (pair || !control)) {
                throw new CaseException(file, at + "against", against + ": only a " + "control (expect fail) of type"
                        + " oracle or degenerate names a case to miss");
            }
            CheckSpec c = new CheckSpec(id, str(file, m, "claim"), type, expect, a, b, against,
                    String.valueOf(m.getOrDefault("note", "")));
            checkIds.put(id, c);
            checks.add(c);
        }
        return new Manifest(seed(file, root, exact, "seed"), String.valueOf(root.get("scale")),
                List.copyOf(cases), List.copyOf(checks));
    }

    private static CheckSpec.Sel sel(Path file, String field, Object o, Map<String, Entry> byId, boolean whole) {
        Map<String, Object> m = map(file, o, field);
        String id = str(file, m, "case", field + ".case");
        Entry e = byId.get(id);
        if (e == null) {
            throw new CaseException(file, field + ".case", id + " is not a case of the manifest");
        }
        if (whole && (m.get("b") != null || m.get("r") != null)) {
            throw new CaseException(file, field + "." + (m.get("b") != null ? "b" : "r"), "an oracle or degenerate"
                    + " check judges the whole output: slices are for same-bits and same-within-rule");
        }
        int[] b = range(file, field + ".b", m.get("b"), e, 0, "batch");
        int[] r = range(file, field + ".r", m.get("r"), e, 2, "query-row");
        return new CheckSpec.Sel(id, b[0], b[1], r[0], r[1]);
    }

    /** A slice bound [from, to): absent is {-1, -1} (all); else 0 <= from < to <= the output's extent on {@code axis}. */
    private static int[] range(Path file, String field, Object o, Entry e, int axis, String what) {
        if (o == null) {
            return new int[] {-1, -1};
        }
        int[] x = ints(file, o, field);
        int n = e.outputShape().length > axis ? e.outputShape()[axis] : 0;
        if (x.length != 2 || x[0] < 0 || x[0] >= x[1] || x[1] > n) {
            throw new CaseException(file, field, CaseSpec.ints(x) + " must be [from, to) with 0 <= from < to <= " + n
                    + ", the " + what + " extent of case " + e.id() + "'s output_shape " + CaseSpec.ints(e.outputShape()));
        }
        return x;
    }

    /** Elements in the slice {@code s} of case {@code e}'s output. */
    private static long elements(Entry e, CheckSpec.Sel s) {
        int[] o = e.outputShape();
        long b = s.b0() < 0 ? o[0] : s.b1() - s.b0();
        long r = s.r0() < 0 ? o[2] : s.r1() - s.r0();
        return b * o[1] * r * o[3];
    }

    /** The integer {@code node.seed}, exactly; 0 when absent. */
    private static long seed(Path file, Map<String, Object> m, com.fasterxml.jackson.databind.JsonNode node,
            String field) {
        if (!m.containsKey("seed")) {
            return 0;
        }
        com.fasterxml.jackson.databind.JsonNode n = node.get("seed");
        if (n == null || !n.canConvertToExactIntegral() || !n.canConvertToLong()) {
            throw new CaseException(file, field, m.get("seed") + " must be a 64-bit integer");
        }
        return n.asLong();
    }

    private static List<?> list(Path file, Map<String, Object> root, String key) {
        if (!(root.get(key) instanceof List<?> l)) {
            throw new CaseException(file, key, "missing or not an array");
        }
        return l;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Path file, Object o, String field) {
        if (!(o instanceof Map<?, ?> m)) {
            throw new CaseException(file, field, "must be an object");
        }
        return (Map<String, Object>) m;
    }

    private static String str(Path file, Map<String, Object> m, String key) {
        return str(file, m, key, key);
    }

    private static String str(Path file, Map<String, Object> m, String key, String field) {
        if (!(m.get(key) instanceof String s) || s.isBlank()) {
            throw new CaseException(file, field, "missing or not a string");
        }
        return s;
    }

    private static int[] ints(Path file, Object o, String field) {
        if (!(o instanceof List<?> l)) {
            throw new CaseException(file, field, "must be an array of integers");
        }
        int[] out = new int[l.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(l.get(i) instanceof Double d) || d != Math.rint(d)) {
                throw new CaseException(file, field, "entry " + i + " = " + l.get(i) + " must be an integer");
            }
            out[i] = d.intValue();
        }
        return out;
    }
}
