package io.attnproof.ledger;

import io.attnproof.fixtures.json.JsonTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The mutant campaign's results ({@code mutants/target/mutants/results.json}): an array of
 * {@code {id, claims, breaks, origin, status: killed|survived|stale|timeout, killers: [{test, message}],
 * values: [{claim, metric, test, fix: {value, limit, passed}, mutant: {value, limit, passed}, margin}], seconds}}.
 * A kill's margin is observed ÷ allowed on its decisive value (the largest margin among the values the mutant
 * failed); kills below {@link #FLAG_BELOW} are flagged. {@code notRun}: the catalog's mutants ({@code
 * mutants/catalog/*.patch} of the repository the results belong to) that the results do not hold: the sweep tier after
 * a default campaign, or the rest of a partial one.
 */
public record MutantReport(Path file, List<Mutant> mutants, List<String> notRun,
        Map<String, List<String>> notRunDetects) {
    /** {@code notRunDetects}: the detection paths the headers of the {@code notRun} mutants name, by id. */
    public MutantReport {
        notRunDetects = Map.copyOf(notRunDetects);
    }

    /** A report whose not-run mutants name no detection path. */
    public MutantReport(Path file, List<Mutant> mutants, List<String> notRun) {
        this(file, mutants, notRun, Map.of());
    }

    /** A report whose results hold every catalog mutant (nothing not run). */
    public MutantReport(Path file, List<Mutant> mutants) {
        this(file, mutants, List.of());
    }

    /** Kills with a margin below this are flagged. */
    public static final double FLAG_BELOW = 2.0;

    /** One side (fix or mutant) of a measured value. */
    public record Side(double value, double limit, boolean passed) {
        String text() {
            return Fmt.num(value) + " vs " + Fmt.num(limit) + (passed ? " ✓" : " ✗");
        }
    }

    /** One evidence value measured with the fix and with the mutant; {@code kind} is check, control or degeneracy. */
    public record Value(String claim, String kind, String metric, String test, Side fix, Side mutant, double margin) {
        /** A failing check or control line: a claim's own teeth (a degeneracy line or an exception is not). */
        public boolean decisive() {
            return (kind.equals("check") || kind.equals("control")) && mutant != null && !mutant.passed()
                    && !Double.isNaN(margin);
        }

        /** "U5 max_abs_err: fix 3.7e-06 vs 7.9e-06 ✓ → mutant 0.21 vs 7.9e-06 ✗ (2.7e+04×)". */
        public String text() {
            return claim + " " + metric + ": fix " + (fix == null ? "—" : fix.text()) + " → mutant "
                    + (mutant == null ? "—" : mutant.text()) + (Double.isNaN(margin) ? "" : " (" + Fmt.times(margin) + ")");
        }
    }

    /** A failing test of a killed mutant. */
    public record Killer(String test, String message) {
    }

    /**
     * One curated mutant's result; {@code patch} is its patch file relative to the repository root, {@code source}
     * the first line it changes ({@link PatchLine}: {@code path:line} relative to the root), null when the patch
     * could not be read ({@code sourceNote} says why); {@code detects} the emulator detection paths its catalog header
     * names ({@code # detects:}, {@link DetectionPaths}), empty for most mutants.
     */
    public record Mutant(String id, List<String> claims, String breaks, String origin, String status,
            List<Killer> killers, List<Value> values, double seconds, String patch, String source,
            String sourceNote, List<String> detects) {

        public boolean killed() {
            return status.equals("killed");
        }

        /**
         * The decisive kill: the failing check or control line of one of the mutant's claims with the largest
         * margin; null when it failed none (killed only by a degeneracy line or an exception elsewhere).
         */
        public Value decisive() {
            Value best = null;
            for (Value v : values) {
                if (v.decisive() && claims.contains(v.claim()) && (best == null || v.margin() > best.margin())) {
                    best = v;
                }
            }
            return best;
        }

        /** The kill margin: the decisive line's observed ÷ allowed; NaN without a decisive line. */
        public double killMargin() {
            Value d = decisive();
            return d == null ? Double.NaN : d.margin();
        }

        /** Killed without a decisive check line, or with a decisive margin below {@link #FLAG_BELOW}. */
        public boolean flagged() {
            double m = killMargin();
            return killed() && (Double.isNaN(m) || m < FLAG_BELOW);
        }

        /** The strongest failing check or control line of {@code claim} (any claim its tests record), or null. */
        public Value strongest(String claim) {
            Value best = null;
            for (Value v : values) {
                if (v.decisive() && v.claim().equals(claim) && (best == null || v.margin() > best.margin())) {
                    best = v;
                }
            }
            return best;
        }
    }

    /**
     * The claim × mutant kill matrix: for each claim, the killed mutants with a failing check or control line of
     * that claim and that line's margin; a claim has teeth when one such margin is at least {@link #FLAG_BELOW}.
     */
    public Map<String, Map<String, Double>> killMatrix() {
        Map<String, Map<String, Double>> matrix = new java.util.TreeMap<>(ClaimRow::compareClaims);
        for (Mutant m : mutants) {
            if (!m.killed()) {
                continue;
            }
            for (Value v : m.values()) {
                Value best = v.decisive() ? m.strongest(v.claim()) : null;
                if (best != null) {
                    matrix.computeIfAbsent(v.claim(), k -> new java.util.TreeMap<>()).put(m.id(), best.margin());
                }
            }
        }
        return matrix;
    }

    /**
     * Catalog claims no curated mutant has decisively killed with a margin of at least {@link #FLAG_BELOW}; the
     * P family (performance, judged by the bench, not by a mutant) is left out.
     */
    public List<String> claimsWithoutTeeth() {
        Map<String, Map<String, Double>> matrix = killMatrix();
        List<String> out = new ArrayList<>();
        for (io.attnproof.fixtures.claim.ClaimId id : io.attnproof.fixtures.claim.ClaimId.values()) {
            if (id.name().startsWith("P")) {
                continue;
            }
            boolean teeth = matrix.getOrDefault(id.name(), Map.of()).values().stream().anyMatch(x -> x >= FLAG_BELOW);
            if (!teeth) {
                out.add(id.name());
            }
        }
        return out;
    }

    /** The mutants by id. */
    public Map<String, Mutant> byId() {
        Map<String, Mutant> out = new java.util.LinkedHashMap<>();
        mutants.forEach(m -> out.put(m.id(), m));
        return out;
    }

    /**
     * Reads {@code file}, finding each mutant's patch under the repository whose results it is
     * ({@code ROOT/mutants/target/mutants/results.json}: {@code ROOT}; a file elsewhere: the working directory).
     */
    public static MutantReport read(Path file) throws IOException {
        Path abs = file.toAbsolutePath().normalize();
        Path root = Path.of("");
        if (abs.endsWith(Ledger.MUTANTS)) {
            root = abs;
            for (int i = 0; i < Ledger.MUTANTS.getNameCount(); i++) {
                root = root.getParent();
            }
        }
        return read(file, root);
    }

    /**
     * Reads {@code file}; each mutant's patch ({@code "patch"} of its entry, else {@code mutants/catalog/<id>.patch})
     * is resolved against {@code root}.
     *
     * @throws IllegalArgumentException naming the file and the entry for malformed content
     * @throws IOException when the file cannot be read
     */
    public static MutantReport read(Path file, Path root) throws IOException {
        Object parsed;
        try {
            parsed = JsonTrees.parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": malformed JSON: " + e.getMessage(), e);
        }
        if (!(parsed instanceof List<?> entries)) {
            throw new IllegalArgumentException(file + ": must be a JSON array of mutant results");
        }
        List<Mutant> mutants = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            try {
                mutants.add(mutant(entries.get(i), root));
            } catch (IllegalArgumentException | ClassCastException e) {
                throw new IllegalArgumentException(file + ": entry " + i + ": " + e.getMessage(), e);
            }
        }
        mutants.sort(Comparator.comparing(Mutant::id));
        Set<String> ran = new java.util.HashSet<>();
        mutants.forEach(m -> ran.add(m.id()));
        List<String> notRun = new ArrayList<>();
        Path catalog = root.resolve("mutants/catalog");
        if (Files.isDirectory(catalog)) {
            try (var s = Files.list(catalog)) {
                s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".patch"))
                        .map(n -> n.substring(0, n.length() - ".patch".length())).filter(id -> !ran.contains(id))
                        .sorted().forEach(notRun::add);
            }
        }
        Map<String, List<String>> notRunDetects = new java.util.TreeMap<>();
        for (String id : notRun) {
            List<String> paths = detects(Files.readAllLines(catalog.resolve(id + ".patch"), StandardCharsets.UTF_8),
                    "mutants/catalog/" + id + ".patch");
            if (!paths.isEmpty()) {
                notRunDetects.put(id, paths);
            }
        }
        return new MutantReport(file, List.copyOf(mutants), List.copyOf(notRun), notRunDetects);
    }

    /** Counts by status, the smallest kill margin and the flagged kills, in one line. */
    public String summary() {
        long killed = count("killed");
        StringBuilder s = new StringBuilder("mutants: ").append(killed).append(" of ").append(mutants.size())
                .append(" killed");
        List<String> others = new ArrayList<>();
        for (String status : List.of("survived", "stale", "timeout")) {
            long n = count(status);
            if (n > 0) {
                others.add(n + " " + status);
            }
        }
        long unknown = mutants.size() - killed - count("survived") - count("stale") - count("timeout");
        if (unknown > 0) {
            others.add(unknown + " with another status");
        }
        if (!others.isEmpty()) {
            s.append(" (").append(String.join(", ", others)).append(')');
        }
        if (!notRun.isEmpty()) {
            s.append("; ").append(notRun.size()).append(" catalog mutant").append(notRun.size() == 1 ? "" : "s")
                    .append(" not in this run (the sweep tier: -Dmutants.tier=all, the campaigns workflow)");
        }
        Mutant smallest = mutants.stream().filter(m -> m.killed() && !Double.isNaN(m.killMargin()))
                .min(Comparator.comparingDouble(Mutant::killMargin)).orElse(null);
        if (smallest != null) {
            s.append(String.format(Locale.ROOT, "; smallest kill margin %s (%s)", Fmt.times(smallest.killMargin()),
                    smallest.id()));
        }
        long flagged = mutants.stream().filter(Mutant::flagged).count();
        s.append("; ").append(flagged).append(flagged == 1 ? " kill" : " kills").append(" below ")
                .append(Fmt.times(FLAG_BELOW)).append(" or without a decisive check line");
        List<String> toothless = claimsWithoutTeeth();
        s.append("; claims without teeth: ").append(toothless.isEmpty() ? "none" : String.join(", ", toothless));
        return s.toString();
    }

    public long count(String status) {
        return mutants.stream().filter(m -> m.status().equals(status)).count();
    }

    private static Mutant mutant(Object entry, Path root) {
        if (!(entry instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("must be an object");
        }
        String id = string(m, "id", true);
        List<String> claims = new ArrayList<>();
        if (m.get("claims") instanceof List<?> cs) {
            for (Object c : cs) {
                claims.add(String.valueOf(c));
            }
        } else if (m.get("claims") instanceof String c) {
            claims.add(c);
        }
        String status = string(m, "status", true).toLowerCase(Locale.ROOT);
        List<Killer> killers = new ArrayList<>();
        if (m.get("killers") instanceof List<?> ks) {
            for (Object k : ks) {
                if (k instanceof Map<?, ?> km) {
                    killers.add(new Killer(string(km, "test", false), string(km, "message", false)));
                }
            }
        }
        List<Value> values = new ArrayList<>();
        if (m.get("values") instanceof List<?> vs) {
            for (Object v : vs) {
                if (v instanceof Map<?, ?> vm) {
                    values.add(new Value(string(vm, "claim", false), string(vm, "kind", false),
                            string(vm, "metric", false),
                            string(vm, "test", false), side(vm.get("fix")), side(vm.get("mutant")),
                            number(vm.get("margin"))));
                }
            }
        }
        String patch = string(m, "patch", false);
        if (patch.isEmpty()) {
            patch = "mutants/catalog/" + id + ".patch";
        }
        String source = null;
        String sourceNote;
        List<String> detects = List.of();
        Path patchFile = root.resolve(patch);
        if (!Files.isRegularFile(patchFile)) {
            sourceNote = "no patch at " + patch;
        } else {
            List<String> header = null;
            try {
                source = PatchLine.of(patchFile, root);
                sourceNote = "first changed line of " + patch;
                header = Files.readAllLines(patchFile, StandardCharsets.UTF_8);
            } catch (IOException | IllegalArgumentException e) {
                sourceNote = "patch unreadable: " + e.getMessage();
            }
            if (header != null) {
                detects = detects(header, patch);
            }
        }
        return new Mutant(id, List.copyOf(claims), string(m, "breaks", false), string(m, "origin", false), status,
                List.copyOf(killers), List.copyOf(values), number(m.get("seconds")), patch, source, sourceNote,
                detects);
    }

    /**
     * The detection paths of a patch's {@code # detects: key, key} header line (before the diff), each a key of
     * {@link DetectionPaths#ALL}; none when the header has no such line.
     *
     * @throws IllegalArgumentException naming the patch and the key for a key that names no path
     */
    static List<String> detects(List<String> lines, String patch) {
        List<String> out = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("diff --git ") || line.startsWith("--- ")) {
                break;
            }
            java.util.regex.Matcher h = DETECTS.matcher(line.strip());
            if (h.matches()) {
                for (String key : h.group(1).split(",", -1)) {
                    try {
                        out.add(DetectionPaths.of(key.strip()).key());
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(patch + ": " + e.getMessage(), e);
                    }
                }
            }
        }
        return List.copyOf(out);
    }

    private static final java.util.regex.Pattern DETECTS = java.util.regex.Pattern.compile("#\\s*detects\\s*:(.*)");

    private static Side side(Object o) {
        if (!(o instanceof Map<?, ?> s)) {
            return null;
        }
        return new Side(number(s.get("value")), number(s.get("limit")), Boolean.TRUE.equals(s.get("passed")));
    }

    private static double number(Object o) {
        if (o == null) {
            return Double.NaN;
        }
        return JsonTrees.toDouble(o);
    }

    private static String string(Map<?, ?> m, String key, boolean required) {
        Object v = m.get(key);
        if (v == null) {
            if (required) {
                throw new IllegalArgumentException("\"" + key + "\" is missing");
            }
            return "";
        }
        return v.toString();
    }

    /**
     * A claim's killing mutants with their margins (⚑ below {@link #FLAG_BELOW}), each linked to the line its patch
     * changes; {@code escape} and {@code link} are the output format's.
     */
    String killCells(Map<String, Double> cells, java.util.function.UnaryOperator<String> escape,
            java.util.function.UnaryOperator<String> link) {
        Map<String, Mutant> byId = byId();
        List<String> out = new ArrayList<>();
        cells.forEach((id, margin) -> {
            Mutant m = byId.get(id);
            String text = id + " " + Fmt.times(margin) + (margin < FLAG_BELOW ? " ⚑" : "");
            String src = m == null ? null : m.source();
            out.add(escape.apply(text) + (src == null ? "" : " " + link.apply(src)));
        });
        return String.join(", ", out);
    }
}
