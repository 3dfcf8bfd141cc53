package io.attnproof.conformance.corpus;

import io.attnproof.conformance.cases.CaseException;
import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The seal of a corpus (claim F2): {@code seal.json} holds the export parameters (seed, scale, claims, dtypes, size
 * budget) and the SHA-256 of every file export wrote. {@link #verify} refuses a corpus with a file missing, added or
 * changed, or whose files differ from what this version of attnproof regenerates from the sealed parameters, so an
 * edited manifest or case cannot pass even with its digest rewritten. Every refusal names the file and the field.
 */
public final class Seal {
    /** The file name inside the corpus folder. */
    public static final String FILE = "seal.json";
    /** The format tag written and required. */
    public static final String FORMAT = "attnproof-seal/1";

    private Seal() {
    }

    /** What {@code corpus export} was asked for: enough to regenerate every byte. */
    public record Params(long seed, boolean small, List<String> claims, List<String> dtypes, long maxBytes) {
    }

    /** Writes {@code dir/seal.json} over the files export wrote there. */
    static void write(Path dir, Params p) {
        Map<String, String> digests = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path f : walk.filter(Files::isRegularFile).toList()) {
                String rel = relative(dir, f);
                if (!rel.equals(FILE)) {
                    digests.put(rel, sha256(Files.readAllBytes(f)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot seal " + dir, e);
        }
        StringBuilder s = new StringBuilder("{\n");
        s.append("  \"format\": ").append(JsonTrees.quote(FORMAT)).append(",\n");
        s.append("  \"seed\": ").append(p.seed()).append(",\n");
        s.append("  \"scale\": ").append(JsonTrees.quote(p.small() ? "small" : "full")).append(",\n");
        s.append("  \"claims\": ").append(strings(p.claims())).append(",\n");
        s.append("  \"dtypes\": ").append(strings(p.dtypes())).append(",\n");
        s.append("  \"max_bytes\": ").append(p.maxBytes()).append(",\n");
        s.append("  \"sha256\": {\n");
        int i = 0;
        for (Map.Entry<String, String> e : digests.entrySet()) {
            s.append("    ").append(JsonTrees.quote(e.getKey())).append(": ").append(JsonTrees.quote(e.getValue()))
                    .append(++i < digests.size() ? ",\n" : "\n");
        }
        s.append("  }\n}\n");
        try {
            Files.writeString(dir.resolve(FILE), s, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve(FILE), e);
        }
    }

    /**
     * Refuses the corpus in {@code dir} unless every file matches its digest in the seal and every sealed file is
     * byte for byte what this attnproof regenerates from the sealed parameters.
     *
     * @return the sealed parameters
     * @throws CaseException naming the file and the field at fault
     */
    public static Params verify(Path dir) {
        Path sealFile = dir.resolve(FILE);
        Map<String, Object> root;
        com.fasterxml.jackson.databind.JsonNode exact;
        try {
            String text = Files.readString(sealFile, StandardCharsets.UTF_8);
            root = JsonTrees.parseObject(text);
            exact = JsonTrees.MAPPER.readTree(text);
        } catch (NoSuchFileException e) {
            throw new CaseException(sealFile, null, "no seal: corpus check judges only a corpus as `attnproof corpus"
                    + " export` wrote it (manifest.json, cases/, seal.json)");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new CaseException(sealFile, null, "malformed JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new CaseException(sealFile, null, "cannot read: " + e);
        } catch (IllegalArgumentException e) {
            throw new CaseException(sealFile, null, "malformed JSON: " + e.getMessage());
        }
        if (!FORMAT.equals(root.get("format"))) {
            throw new CaseException(sealFile, "format", root.get("format") + " must be " + FORMAT);
        }
        Params p = new Params(longOf(sealFile, exact, "seed"), scale(sealFile, root), stringsOf(sealFile, root, "claims"),
                stringsOf(sealFile, root, "dtypes"), longOf(sealFile, exact, "max_bytes"));
        if (!(root.get("sha256") instanceof Map<?, ?> sealed)) {
            throw new CaseException(sealFile, "sha256", "missing or not an object of file: digest");
        }
        // 1. The files on disk against the seal's digests.
        Map<String, String> actual = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path f : walk.filter(Files::isRegularFile).toList()) {
                String rel = relative(dir, f);
                if (rel.equals(FILE)) {
                    continue;
                }
                if (!sealed.containsKey(rel)) {
                    throw new CaseException(f, null, "not in the seal: a sealed corpus holds only the files export"
                            + " wrote");
                }
                actual.put(rel, sha256(Files.readAllBytes(f)));
            }
        } catch (IOException e) {
            throw new CaseException(dir, null, "cannot read the corpus: " + e);
        }
        for (Object k : sealed.keySet()) {
            if (!actual.containsKey(String.valueOf(k))) {
                throw new CaseException(dir.resolve(String.valueOf(k)), null, "missing: the seal lists it");
            }
        }
        // 2. What this attnproof regenerates from the sealed parameters.
        CorpusExport.Plan plan;
        try {
            plan = CorpusExport.plan(p);
        } catch (IllegalArgumentException e) {
            throw new CaseException(sealFile, null, e.getMessage());
        }
        Map<String, byte[]> expected = new TreeMap<>();
        expected.put(Manifest.FILE, plan.manifest().toJson().getBytes(StandardCharsets.UTF_8));
        for (CaseSpec c : plan.cases()) {
            c.files().forEach((name, bytes) -> expected.put("cases/" + c.id() + "/" + name, bytes));
        }
        String from = "from seed " + p.seed() + " (" + (p.small() ? "small" : "full") + ")";
        for (String rel : expected.keySet()) {
            if (!actual.containsKey(rel)) {
                throw new CaseException(dir.resolve(rel), null, "missing: attnproof regenerates it " + from);
            }
        }
        List<String> order = new ArrayList<>(actual.keySet());
        order.remove(Manifest.FILE);
        order.addFirst(Manifest.FILE);  // the manifest first: its diff names the field
        for (String rel : order) {
            Path f = dir.resolve(rel);
            byte[] want = expected.get(rel);
            if (want == null) {
                throw new CaseException(f, null, "not a file attnproof regenerates " + from);
            }
            String wantDigest = sha256(want);
            if (!wantDigest.equals(actual.get(rel))) {
                throw changed(dir, rel, want, actual.get(rel), wantDigest, sealed.get(rel), from, plan.manifest());
            }
            if (!wantDigest.equals(sealed.get(rel))) {
                throw new CaseException(sealFile, "sha256." + rel, sealed.get(rel) + ", but the file and what"
                        + " attnproof regenerates " + from + " hash to " + wantDigest);
            }
        }
        return p;
    }

    /** The refusal of a file that differs from what attnproof regenerates, naming the field that differs. */
    private static CaseException changed(Path dir, String rel, byte[] want, String gotDigest, String wantDigest,
            Object sealDigest, String from, Manifest regenerated) {
        Path f = dir.resolve(rel);
        String why = !gotDigest.equals(sealDigest) ? " (its SHA-256 differs from the seal's)" : "";
        try {
            if (rel.equals(Manifest.FILE)) {
                String field = ManifestDiff.first(Manifest.read(dir), regenerated);
                if (field != null) {
                    return new CaseException(f, field.substring(0, field.indexOf('\u0000')),
                            field.substring(field.indexOf('\u0000') + 1) + " " + from + why);
                }
            } else if (rel.endsWith(".json")) {
                String[] d = jsonDiff("", JsonTrees.parse(Files.readString(f, StandardCharsets.UTF_8)),
                        JsonTrees.parse(new String(want, StandardCharsets.UTF_8)));
                if (d != null) {
                    return new CaseException(f, d[0], d[1] + ", but attnproof regenerates " + d[2] + " " + from + why);
                }
            }
        } catch (IOException | IllegalArgumentException | CaseException e) {
            // fall through: the digest names the change
        }
        return new CaseException(f, "sha256", gotDigest + ", but attnproof regenerates " + wantDigest + " " + from
                + why);
    }

    /** The first key path where two JSON trees differ: {path, actual, expected}; null when equal. */
    private static String[] jsonDiff(String path, Object a, Object b) {
        if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
            for (Object k : mb.keySet()) {
                String[] d = jsonDiff(path.isEmpty() ? String.valueOf(k) : path + "." + k, ma.get(k), mb.get(k));
                if (d != null) {
                    return d;
                }
            }
            for (Object k : ma.keySet()) {
                if (!mb.containsKey(k)) {
                    return new String[] {path.isEmpty() ? String.valueOf(k) : path + "." + k, String.valueOf(ma.get(k)),
                        "no such field"};
                }
            }
            return null;
        }
        return Objects.equals(a, b) ? null : new String[] {path, String.valueOf(a), String.valueOf(b)};
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }

    private static String relative(Path dir, Path f) {
        return dir.relativize(f).toString().replace('\\', '/');
    }

    private static String strings(List<String> l) {
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < l.size(); i++) {
            s.append(i == 0 ? "" : ", ").append(JsonTrees.quote(l.get(i)));
        }
        return s.append(']').toString();
    }

    private static long longOf(Path file, com.fasterxml.jackson.databind.JsonNode root, String key) {
        com.fasterxml.jackson.databind.JsonNode n = root.get(key);
        if (n == null || !n.canConvertToExactIntegral() || !n.canConvertToLong()) {
            throw new CaseException(file, key, n + " must be a 64-bit integer");
        }
        return n.asLong();
    }

    private static boolean scale(Path file, Map<String, Object> root) {
        Object s = root.get("scale");
        if (!"small".equals(s) && !"full".equals(s)) {
            throw new CaseException(file, "scale", s + " must be small or full");
        }
        return "small".equals(s);
    }

    private static List<String> stringsOf(Path file, Map<String, Object> root, String key) {
        if (!(root.get(key) instanceof List<?> l) || !l.stream().allMatch(String.class::isInstance)) {
            throw new CaseException(file, key, root.get(key) + " must be an array of strings");
        }
        return l.stream().map(String.class::cast).toList();
    }

    /** The first field where a manifest differs from the regenerated one. */
    static final class ManifestDiff {
        private ManifestDiff() {
        }

        /** {@code field + '\0' + what differs}, or null when the two manifests are equal field by field. */
        static String first(Manifest got, Manifest want) {
            if (got.seed() != want.seed()) {
                return "seed\u0000" + got.seed() + ", but the seal's corpus is";
            }
            if (!got.scale().equals(want.scale())) {
                return "scale\u0000" + got.scale() + ", but the seal's corpus is";
            }
            Map<String, Manifest.Entry> cases = new LinkedHashMap<>();
            got.cases().forEach(e -> cases.put(e.id(), e));
            for (Manifest.Entry w : want.cases()) {
                Manifest.Entry g = cases.remove(w.id());
                String at = "cases[" + w.id() + "]";
                if (g == null) {
                    return at + "\u0000missing: attnproof regenerates this case";
                }
                String d = differs(at, List.of("claim", "kind", "dtype", "seed", "case", "output_shape", "description"),
                        List.of(g.claim(), g.kind(), g.dtype(), g.seed(), g.caseFile(), Arrays.toString(g.outputShape()),
                            g.description()),
                        List.of(w.claim(), w.kind(), w.dtype(), w.seed(), w.caseFile(), Arrays.toString(w.outputShape()),
                            w.description()));
                if (d != null) {
                    return d;
                }
            }
            if (!cases.isEmpty()) {
                return "cases[" + cases.keySet().iterator().next() + "]\u0000not a case attnproof regenerates";
            }
            Map<String, CheckSpec> checks = new LinkedHashMap<>();
            got.checks().forEach(c -> checks.put(c.id(), c));
            for (CheckSpec w : want.checks()) {
                CheckSpec g = checks.remove(w.id());
                String at = "checks[" + w.id() + "]";
                if (g == null) {
                    return at + "\u0000missing: attnproof regenerates this check";
                }
                List<String> names = List.of("claim", "type", "expect", "a", "b", "against", "note");
                String d = differs(at, names, fields(g), fields(w));
                if (d != null) {
                    return d;
                }
            }
            if (!checks.isEmpty()) {
                return "checks[" + checks.keySet().iterator().next() + "]\u0000not a check attnproof regenerates";
            }
            List<String> gotOrder = got.checks().stream().map(CheckSpec::id).toList();
            List<String> wantOrder = want.checks().stream().map(CheckSpec::id).toList();
            if (!gotOrder.equals(wantOrder)) {
                return "checks\u0000the checks are reordered against what attnproof regenerates";
            }
            return null;
        }

        private static List<Object> fields(CheckSpec c) {
            List<Object> l = new ArrayList<>();
            l.add(c.claim());
            l.add(c.type());
            l.add(c.expect());
            l.add(String.valueOf(c.a()));
            l.add(String.valueOf(c.b()));
            l.add(String.valueOf(c.against()));
            l.add(c.note());
            return l;
        }

        private static String differs(String at, List<String> names, List<Object> got, List<Object> want) {
            for (int i = 0; i < names.size(); i++) {
                if (!Objects.equals(got.get(i), want.get(i))) {
                    return at + "." + names.get(i) + "\u0000" + got.get(i) + ", but attnproof regenerates " + want.get(i);
                }
            }
            return null;
        }
    }
}
