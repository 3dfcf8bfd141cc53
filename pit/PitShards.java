// PIT across CI runners: which classes shard k of n mutates, and the merge of the shards' mutations.xml into one.
// A single-file program (JDK only, no build): java pit/PitShards.java plan k/n | merge OUT.xml n SHARD_DIR...
//
//   plan k/n [MODULE]
//               prints two lines, the targetClasses and the targetTests of shard k of n of one module's run (MODULE:
//               sut, the default, or conformance; a unit's module is its glob's package, as in pit/run-scope.sh).
//               The units are the packages listed in pit/units.tsv (unit, classes glob, measured seconds of its
//               scoped run); a module's units are dealt to n shards by longest-first greedy (each to the least
//               loaded shard), so shards are even and every unit is in exactly one shard. The same k/n always gives
//               the same plan. The tests of a system-under-test shard are those that cover its classes
//               (pit/test-scope.tsv; all tests when a class of it is not there); a conformance shard takes the
//               module's tests (PIT runs only those that cover a mutation; its coverage phase is short there).
//   merge OUT.xml n DIR...
//               reads DIR/mutations.xml, DIR/shard.txt ("k/n", written by pit/run-shard.sh) and DIR/module (written by
//               pit/run-scope.sh) of every shard, checks that all are of one module, that shards 1..n are each there
//               exactly once, that no mutation is in two shards and that every mutated class belongs to its shard's
//               plan, then writes the union as one mutations.xml (PIT's format, the ledger reads it) and prints its
//               totals. Exit 0, or 2 when the shards do not make one run.
//   verify MERGED.xml WHOLE.xml
//               compares two mutations.xml mutation by mutation (status, killing test); exit 0 when identical.
//   tests CLASS...
//               the test classes that cover these classes (pit/test-scope.tsv, from the baseline's linecoverage.xml);
//               every test of the system under test when one class is not in it (a new class).
//   scope LINECOVERAGE.xml...
//               (re)writes pit/test-scope.tsv from PIT's line coverage (-Dpit.exportLineCoverage=true, which
//               pit/run-scope.sh sets): per class of the system under test, the test classes whose tests run it.
//               Classes of other files keep their rows.
// The triage check (every open mutation triaged, no stale row) and the committed summary are PitTriage's, in the
// reports module (it reads the triage with Commons CSV): docs/mutants.md.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class PitShards {
    record Unit(String name, String classes, double seconds) {
        /** The module whose PIT run mutates this unit: {@code conformance} or {@code sut} (pit/run-scope.sh's keys). */
        String module() {
            return classes.startsWith("io.attnproof.conformance.") ? "conformance" : "sut";
        }
    }

    static final List<String> MODULES = List.of("sut", "conformance");

    static final Path UNITS = Path.of("pit", "units.tsv");
    static final Pattern MUTATION = Pattern.compile("<mutation\\b[^>]*>.*?</mutation>", Pattern.DOTALL);
    static final Pattern STATUS = Pattern.compile("\\bstatus=['\"]([A-Z_]+)['\"]");
    static final Pattern DETECTED = Pattern.compile("\\bdetected=['\"](true|false)['\"]");

    public static void main(String[] args) throws IOException {
        try {
            if ((args.length == 2 || args.length == 3) && args[0].equals("plan")) {
                int[] kn = parse(args[1]);
                String module = module(args.length == 3 ? args[2] : "sut");
                List<Unit> units = units(module);
                if (module.equals("conformance")) {
                    requireEachClassInOneUnit(units, Path.of("conformance", "src", "main", "java"));
                }
                List<Unit> mine = plan(units, kn[0], kn[1]);
                System.out.println(String.join(",", mine.stream().map(Unit::classes).toList()));
                System.out.println(module.equals("sut") ? tests(sourcesOf(mine)) : CONFORMANCE_TESTS);
            } else if (args.length >= 3 && args[0].equals("merge")) {
                int n = Integer.parseInt(args[2]);
                List<Path> dirs = new ArrayList<>();
                for (int i = 3; i < args.length; i++) {
                    dirs.add(Path.of(args[i]));
                }
                merge(Path.of(args[1]), n, dirs);
            } else if (args.length >= 2 && args[0].equals("tests")) {
                System.out.println(tests(List.of(args).subList(1, args.length)));
            } else if (args.length >= 2 && args[0].equals("scope")) {
                List<Path> files = new ArrayList<>();
                for (int i = 1; i < args.length; i++) {
                    files.add(Path.of(args[i]));
                }
                scope(files);
            } else if (args.length == 3 && args[0].equals("verify")) {
                System.exit(verify(Path.of(args[1]), Path.of(args[2])) ? 0 : 1);
            } else {
                System.err.println("usage: java pit/PitShards.java plan k/n [sut|conformance] | merge OUT.xml n SHARD_DIR... | verify A.xml B.xml");
                System.exit(2);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("pit shards: " + e.getMessage());
            System.exit(2);
        }
    }

    static int[] parse(String kn) {
        Matcher m = Pattern.compile("(\\d+)/(\\d+)").matcher(kn.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("shard = \"" + kn + "\": must be k/n with 1 <= k <= n, e.g. 2/4");
        }
        int k = Integer.parseInt(m.group(1));
        int n = Integer.parseInt(m.group(2));
        if (n < 1 || k < 1 || k > n) {
            throw new IllegalArgumentException("shard = " + kn + ": must be k/n with 1 <= k <= n");
        }
        return new int[] {k, n};
    }

    static String module(String name) {
        if (!MODULES.contains(name)) {
            throw new IllegalArgumentException("module = \"" + name + "\": must be one of " + MODULES
                    + " (the modules pit/units.tsv shards)");
        }
        return name;
    }

    /**
     * Every class of {@code sources} lies in exactly one unit: a unit may list classes rather than a package, and a
     * class added to no unit would never be mutated, one in two would be mutated twice.
     */
    static void requireEachClassInOneUnit(List<Unit> units, Path sources) throws IOException {
        try (var files = Files.walk(sources)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                String rel = sources.relativize(f).toString().replace(java.io.File.separatorChar, '/');
                String clazz = rel.substring(0, rel.length() - ".java".length()).replace('/', '.');
                List<String> in = units.stream().filter(u -> inUnit(clazz, u)).map(Unit::name).toList();
                if (in.size() != 1) {
                    throw new IllegalArgumentException(clazz + " is in " + in.size() + " units of " + UNITS + " "
                            + in + ": every class of " + sources + " must be in exactly one");
                }
            }
        }
    }

    /** The units of pit/units.tsv that one module's run mutates. */
    static List<Unit> units(String module) throws IOException {
        List<Unit> out = new ArrayList<>();
        for (String line : Files.readAllLines(UNITS, StandardCharsets.UTF_8)) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t");
            if (f.length != 3) {
                throw new IllegalArgumentException(UNITS + ": \"" + line + "\": needs 3 tab-separated fields");
            }
            Unit u = new Unit(f[0], f[1], Double.parseDouble(f[2]));
            if (u.module().equals(module)) {
                out.add(u);
            }
        }
        return out;
    }

    /** Longest-first greedy: units by measured seconds (then name), each to the least loaded shard (then lowest k). */
    static List<Unit> plan(List<Unit> units, int k, int n) {
        List<Unit> sorted = new ArrayList<>(units);
        sorted.sort(Comparator.comparingDouble(Unit::seconds).reversed().thenComparing(Unit::name));
        double[] load = new double[n];
        List<List<Unit>> shards = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            shards.add(new ArrayList<>());
        }
        for (Unit u : sorted) {
            int best = 0;
            for (int i = 1; i < n; i++) {
                if (load[i] < load[best]) {
                    best = i;
                }
            }
            load[best] += u.seconds();
            shards.get(best).add(u);
        }
        if (shards.get(k - 1).isEmpty()) {
            throw new IllegalArgumentException("shard " + k + "/" + n + " has no unit: " + units.size()
                    + " units of this module in " + UNITS + ", so n must be at most " + units.size());
        }
        return shards.get(k - 1);
    }

    static boolean inUnit(String clazz, Unit u) {
        for (String glob : u.classes().split(",")) {
            String regex = Pattern.quote(glob.strip()).replace("*", "\\E.*\\Q");
            if (clazz.matches(regex)) {
                return true;
            }
        }
        return false;
    }

    static String tag(String mutation, String name) {
        Matcher m = Pattern.compile("<" + name + ">(.*?)</" + name + ">", Pattern.DOTALL).matcher(mutation);
        return m.find() ? unescape(m.group(1)) : "";
    }

    /** XML's five predefined entities (PIT writes {@code &lt;init&gt;} for constructors). */
    static String unescape(String s) {
        return s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'")
                .replace("&amp;", "&");
    }

    /** The identity of a mutation: class, method, descriptor, line, mutator, indexes, blocks. */
    static String key(String mutation) {
        return String.join("|", tag(mutation, "mutatedClass"), tag(mutation, "mutatedMethod"),
                tag(mutation, "methodDescription"), tag(mutation, "lineNumber"), tag(mutation, "mutator"),
                tag(mutation, "indexes"), tag(mutation, "blocks"));
    }

    static List<String> mutations(Path xml) throws IOException {
        List<String> out = new ArrayList<>();
        Matcher m = MUTATION.matcher(Files.readString(xml, StandardCharsets.UTF_8));
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    static void merge(Path out, int n, List<Path> dirs) throws IOException {
        String module = null;
        Map<Integer, Path> byK = new TreeMap<>();
        for (Path d : dirs) {
            Path m = d.resolve("module");
            String mine = module(Files.isRegularFile(m) ? Files.readString(m).strip() : "sut");
            if (module != null && !module.equals(mine)) {
                throw new IllegalArgumentException(d + " is a shard of " + mine + "'s run, the others of " + module
                        + "'s: merge one module's shards at a time");
            }
            module = mine;
            Path marker = d.resolve("shard.txt");
            if (!Files.isRegularFile(marker) || !Files.isRegularFile(d.resolve("mutations.xml"))) {
                throw new IllegalArgumentException(d + ": needs shard.txt and mutations.xml (a finished shard)");
            }
            int[] kn = parse(Files.readString(marker).strip());
            if (kn[1] != n) {
                throw new IllegalArgumentException(d + " is shard " + kn[0] + "/" + kn[1] + ", not one of " + n);
            }
            if (byK.put(kn[0], d) != null) {
                throw new IllegalArgumentException("shard " + kn[0] + "/" + n + " is there twice (again in " + d + ")");
            }
        }
        List<Unit> units = units(module == null ? "sut" : module);
        List<Integer> missing = new ArrayList<>();
        for (int k = 1; k <= n; k++) {
            if (!byK.containsKey(k)) {
                missing.add(k);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("shards " + missing + " of " + n + " are missing");
        }
        Map<String, String> all = new LinkedHashMap<>();
        Map<String, Integer> counts = new TreeMap<>();
        for (Map.Entry<Integer, Path> e : byK.entrySet()) {
            List<Unit> plan = plan(units, e.getKey(), n);
            for (String mu : mutations(e.getValue().resolve("mutations.xml"))) {
                String clazz = tag(mu, "mutatedClass");
                if (plan.stream().noneMatch(u -> inUnit(clazz, u))) {
                    throw new IllegalArgumentException(clazz + " was mutated by shard " + e.getKey() + "/" + n
                            + ", whose plan does not hold it (stale pit/units.tsv or a foreign report)");
                }
                if (all.put(key(mu), mu) != null) {
                    throw new IllegalArgumentException("mutation " + key(mu) + " is in two shards");
                }
                Matcher s = STATUS.matcher(mu);
                counts.merge(s.find() ? s.group(1) : "?", 1, Integer::sum);
            }
        }
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<mutations partial=\"false\">\n");
        all.values().forEach(mu -> xml.append(mu).append('\n'));
        xml.append("</mutations>\n");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, xml, StandardCharsets.UTF_8);
        long detected = all.values().stream().filter(mu -> {
            Matcher d = DETECTED.matcher(mu);
            return d.find() && d.group(1).equals("true");
        }).count();
        int survived = counts.getOrDefault("SURVIVED", 0);
        System.out.printf(java.util.Locale.ROOT, "pit merge: %d shards, %d mutations, %d killed, %d survived, %d no coverage;"
                + " score %.1f%%, strength %.1f%% -> %s%n", n, all.size(), detected, survived,
                counts.getOrDefault("NO_COVERAGE", 0), 100.0 * detected / Math.max(1, all.size()),
                100.0 * detected / Math.max(1, detected + survived), out);
    }

    static boolean verify(Path a, Path b) throws IOException {
        Map<String, String> left = new TreeMap<>();
        Map<String, String> right = new TreeMap<>();
        for (String mu : mutations(a)) {
            left.put(key(mu), verdict(mu));
        }
        for (String mu : mutations(b)) {
            right.put(key(mu), verdict(mu));
        }
        int diffs = 0;
        for (String k : left.keySet()) {
            if (!left.get(k).equals(right.get(k))) {
                diffs++;
                System.out.println("pit verify: " + k + ": " + left.get(k) + " vs " + right.get(k));
            }
        }
        for (String k : right.keySet()) {
            if (!left.containsKey(k)) {
                diffs++;
                System.out.println("pit verify: " + k + ": absent vs " + right.get(k));
            }
        }
        System.out.println("pit verify: " + left.size() + " vs " + right.size() + " mutations, " + diffs + " differences");
        return diffs == 0;
    }

    static String verdict(String mu) {
        Matcher s = STATUS.matcher(mu);
        return (s.find() ? s.group(1) : "?") + " by " + tag(mu, "killingTest");
    }

    static final Path TEST_SCOPE = Path.of("pit", "test-scope.tsv");
    static final String ALL_TESTS = "io.attnproof.attention.*";
    static final String CONFORMANCE_TESTS = "io.attnproof.conformance.*";

    static String tests(List<String> classes) throws IOException {
        if (!Files.isRegularFile(TEST_SCOPE)) {
            return ALL_TESTS;
        }
        Map<String, String> scope = new TreeMap<>();
        for (String line : Files.readAllLines(TEST_SCOPE, StandardCharsets.UTF_8)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                String[] f = line.split("\t");
                scope.put(f[0], f.length > 1 ? f[1] : "");
            }
        }
        java.util.TreeSet<String> out = new java.util.TreeSet<>();
        for (String c : classes) {
            String t = scope.get(c);
            if (t == null || t.isBlank()) {
                return ALL_TESTS;
            }
            for (String test : t.split(",")) {
                out.add(test);
                out.add(test + "$*");
            }
        }
        return String.join(",", out);
    }

    static final Path MAIN_SOURCES = Path.of("system-under-test", "src", "main", "java");
    static final Pattern BLOCK = Pattern.compile("<block classname='([^']+)'");
    static final Pattern TEST_CLASS = Pattern.compile("<test name='[^']*?\\[class:([^\\]]+)\\]");

    static void scope(List<Path> files) throws IOException {
        Map<String, java.util.TreeSet<String>> scope = new TreeMap<>();
        if (Files.isRegularFile(TEST_SCOPE)) {
            for (String line : Files.readAllLines(TEST_SCOPE, StandardCharsets.UTF_8)) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    String[] f = line.split("\t");
                    scope.put(f[0], new java.util.TreeSet<>(f.length > 1 && !f[1].isBlank()
                            ? List.of(f[1].split(",")) : List.of()));
                }
            }
        }
        Map<String, java.util.TreeSet<String>> fresh = new TreeMap<>();
        for (Path f : files) {
            String current = null;
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                Matcher b = BLOCK.matcher(line);
                if (b.find()) {
                    String c = b.group(1);
                    current = c.contains("$") ? c.substring(0, c.indexOf('$')) : c;
                    if (!Files.isRegularFile(MAIN_SOURCES.resolve(current.replace('.', '/') + ".java"))) {
                        current = null; // a test class (PIT instruments those too): not a mutation target
                        continue;
                    }
                    fresh.computeIfAbsent(current, k -> new java.util.TreeSet<>());
                }
                Matcher t = TEST_CLASS.matcher(line);
                while (current != null && t.find()) {
                    String test = t.group(1);
                    fresh.get(current).add(test.contains("$") ? test.substring(0, test.indexOf('$')) : test);
                }
            }
        }
        scope.putAll(fresh);
        StringBuilder out = new StringBuilder("# class<TAB>the test classes whose tests run it (PIT line coverage;"
                + " java pit/PitShards.java scope pit/target/runs/*/linecoverage.xml)\n");
        scope.forEach((c, tests) -> out.append(c).append('\t').append(String.join(",", tests)).append('\n'));
        Files.writeString(TEST_SCOPE, out, StandardCharsets.UTF_8);
        System.out.println("pit scope: " + fresh.size() + " classes from " + files.size() + " file(s), "
                + scope.size() + " in " + TEST_SCOPE);
    }

    /** The classes (one per source file under system-under-test/src/main/java) of these units. */
    static List<String> sourcesOf(List<Unit> units) throws IOException {
        List<String> out = new ArrayList<>();
        Unit excluded = new Unit("excluded", excludedClasses(), 0);
        try (var files = Files.walk(MAIN_SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                String rel = MAIN_SOURCES.relativize(f).toString().replace(java.io.File.separatorChar, '/');
                String clazz = rel.substring(0, rel.length() - ".java".length()).replace('/', '.');
                if (units.stream().anyMatch(u -> inUnit(clazz, u)) && !inUnit(clazz, excluded)) {
                    out.add(clazz);
                }
            }
        }
        return out;
    }

    /** The parent pom's {@code pit.excludedClasses} (device-only code PIT does not mutate). */
    static String excludedClasses() throws IOException {
        Matcher m = Pattern.compile("<pit.excludedClasses>([^<]*)</pit.excludedClasses>")
                .matcher(Files.readString(Path.of("pom.xml"), StandardCharsets.UTF_8));
        return m.find() ? m.group(1).strip() : "";
    }
}
