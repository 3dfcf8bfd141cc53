package io.attnproof.ledger;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import javax.xml.stream.XMLInputFactory;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVPrinter;
import org.apache.commons.csv.CSVRecord;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

/**
 * PIT's {@code mutations.xml} summarised: mutations, killed (PIT's "detected": KILLED, TIMED_OUT, MEMORY_ERROR,
 * RUN_ERROR), survived, no coverage; mutation score = killed ÷ mutations; test strength = killed ÷ (killed +
 * survived); the surviving mutations (class:line mutator — description); and every open mutation (survived or no
 * coverage) with its verdict from the triage, {@code pit/triage.csv} of the repository whose report it is. A triage
 * row names its mutation by what does not move with the code: class, method, method descriptor, mutator, PIT's
 * instruction index within the method and the description (never the line), then gives a verdict
 * ({@code equivalent}, {@code killed-now} or {@code accepted}) and a reason. An open mutation without a row, or whose
 * row says {@code killed-now} although it is still open, is untriaged; a row that names no mutation of the report,
 * or an {@code equivalent} / {@code accepted} row whose mutation a test killed (KILLED, not a time-out, memory error or
 * run error, which name no test), is stale.
 */
public record PitReport(Path file, int mutations, int killed, int survived, int noCoverage, int timedOut,
        List<String> survivors, List<Open> open, Path triageFile, List<Row> staleRows, List<Mutation> all) {

    /** Where the triage lies, relative to the repository root. */
    public static final Path TRIAGE = Path.of("pit", "triage.csv");

    /** The columns of the triage, in order (its header line). */
    public static final List<String> TRIAGE_COLUMNS = List.of("class", "method", "descriptor", "mutator", "index",
            "description", "verdict", "reason");

    /** The verdicts a triage row may give. */
    public static final List<String> VERDICTS = List.of("equivalent", "killed-now", "accepted");

    /** One survived or uncovered mutation; {@code verdict} and {@code reason} are null when it is untriaged. */
    public record Open(String clazz, String method, String descriptor, int line, String mutator, String index,
            String status, String description, String sourceFile, String verdict, String reason) {
        /** Whether a triage row settles it (a {@code killed-now} row that did not kill it does not). */
        public boolean triaged() {
            return verdict != null && !verdict.equals("killed-now");
        }

        /** The source line, relative to the repository root. */
        public String source() {
            return PitReport.source(clazz, sourceFile, line);
        }

        /** "UnionMaskMemo.java:61 get ConditionalsBoundaryMutator (SURVIVED) — changed conditional boundary". */
        public String text() {
            return sourceFile + ":" + line + " " + method + " " + mutator + " (" + status + ") — " + description;
        }
    }

    /**
     * One mutation of the report, whatever its status. {@code killingTests} are PIT's test names (its
     * {@code <killingTest>}, or every name of {@code <killingTests>} under the full mutation matrix);
     * {@code coveringTests} is null without the full mutation matrix, else every test that ran against it (the
     * union of {@code <coveringTests>}, {@code <killingTests>} and {@code <succeedingTests>}).
     */
    public record Mutation(String clazz, String method, String descriptor, int line, String mutator, String index,
            String status, boolean detected, String description, String sourceFile, List<String> killingTests,
            List<String> coveringTests) {
        public Mutation {
            killingTests = List.copyOf(killingTests);
            coveringTests = coveringTests == null ? null : List.copyOf(coveringTests);
        }

        /** The source line, relative to the repository root. */
        public String source() {
            return PitReport.source(clazz, sourceFile, line);
        }

        /** Survived or without coverage: what the triage has to settle. */
        public boolean open() {
            return status.equals("SURVIVED") || status.equals("NO_COVERAGE");
        }

        /** What names this mutation in the triage, independent of its line. */
        public String key() {
            return triageKey(clazz, method, descriptor, mutator, index, description);
        }
    }

    public PitReport {
        staleRows = List.copyOf(staleRows);
        survivors = List.copyOf(survivors);
        open = List.copyOf(open);
        all = List.copyOf(all);
    }

    /**
     * Where the source line of a mutation of {@code clazz} lies, relative to the repository root:
     * {@code <module>/src/main/java/<package path>/<sourceFile>:<line>}, the module by the package
     * ({@link #moduleDir}).
     */
    public static String source(String clazz, String sourceFile, int line) {
        int dollar = clazz.indexOf('$');
        String outer = dollar < 0 ? clazz : clazz.substring(0, dollar);
        String dir = outer.contains(".") ? outer.substring(0, outer.lastIndexOf('.')).replace('.', '/') + "/" : "";
        return moduleDir(outer) + "/src/main/java/" + dir + sourceFile + ":" + line;
    }

    /** The module directory whose sources hold {@code clazz}: io.attnproof.{oracles,fixtures,mutants,ledger,conformance} by name, everything else the system under test. */
    static String moduleDir(String clazz) {
        for (String m : List.of("oracles", "fixtures", "mutants", "ledger", "conformance")) {
            if (clazz.startsWith("io.attnproof." + m + ".")) {
                return m;
            }
        }
        return "system-under-test";
    }

    /** How many triage rows are stale ({@link #staleRows}). */
    public int staleTriageRows() {
        return staleRows.size();
    }

    /** Whether the report carries PIT's full mutation matrix (the tests that covered each mutation). */
    public boolean matrix() {
        return all.stream().anyMatch(m -> m.coveringTests() != null);
    }

    /** killed ÷ mutations, NaN when there are none. */
    public double score() {
        return mutations == 0 ? Double.NaN : (double) killed / mutations;
    }

    /** killed ÷ (killed + survived), NaN when both are 0. */
    public double strength() {
        return killed + survived == 0 ? Double.NaN : (double) killed / (killed + survived);
    }

    /** "PIT: 900 mutations, 800 killed, 60 survived, 40 no coverage; mutation score 88.9%, test strength 93.0%". */
    public String summary() {
        return String.format(Locale.ROOT, "PIT: %d mutations, %d killed, %d survived, %d no coverage;"
                + " mutation score %s, test strength %s", mutations, killed, survived, noCoverage, pct(score()),
                pct(strength()));
    }

    /** The open mutations no triage row settles. */
    public List<Open> untriaged() {
        return open.stream().filter(o -> !o.triaged()).toList();
    }

    /**
     * Open mutations per verdict given ("untriaged" for those without one, always present), in the order of
     * {@link #VERDICTS}; a killed-now row counts only once its mutation is no longer open, so never here.
     */
    public Map<String, Integer> verdictCounts() {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (String v : VERDICTS) {
            out.put(v, 0);
        }
        out.put("untriaged", 0);
        for (Open o : open) {
            out.merge(o.triaged() ? o.verdict() : "untriaged", 1, Integer::sum);
        }
        out.entrySet().removeIf(e -> e.getValue() == 0 && !e.getKey().equals("untriaged"));
        return out;
    }

    /** "triage (pit/triage.csv): 12 open mutations, 10 triaged (equivalent 3, accepted 7), 2 untriaged ⚑". */
    public String triageNote() {
        Map<String, Integer> counts = verdictCounts();
        int untriaged = counts.get("untriaged");
        List<String> parts = new ArrayList<>();
        counts.forEach((v, n) -> {
            if (!v.equals("untriaged") && n > 0) {
                parts.add(v + " " + n);
            }
        });
        String where = triageFile == null ? "no " + TRIAGE : TRIAGE.toString();
        return String.format(Locale.ROOT, "triage (%s): %d open mutations (survived or no coverage), %d triaged%s, "
                + "%s%s", where, open.size(), open.size() - untriaged, parts.isEmpty() ? "" : " ("
                + String.join(", ", parts) + ")", untriaged == 0 ? "none untriaged" : untriaged + " untriaged ⚑",
                staleTriageRows() == 0 ? "" : "; " + staleTriageRows() + " stale triage rows (no such mutation, or"
                + " equivalent or accepted but killed by a test)");
    }

    /** The open mutations grouped by class (classes with untriaged ones first, then by name). */
    public Map<String, List<Open>> byClass() {
        Map<String, List<Open>> grouped = new TreeMap<>();
        for (Open o : open) {
            grouped.computeIfAbsent(o.clazz(), c -> new ArrayList<>()).add(o);
        }
        Map<String, List<Open>> out = new LinkedHashMap<>();
        grouped.entrySet().stream().sorted((a, b) -> {
            long ua = a.getValue().stream().filter(o -> !o.triaged()).count();
            long ub = b.getValue().stream().filter(o -> !o.triaged()).count();
            return ua != ub ? Long.compare(ub, ua) : a.getKey().compareTo(b.getKey());
        }).forEach(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }

    /**
     * The test names of one {@code <killingTest>}, {@code <killingTests>}, {@code <succeedingTests>} or
     * {@code <coveringTests>} element: PIT separates several by {@code |}; an absent or empty element has none.
     */
    static List<String> tests(String element) {
        if (element == null || element.isBlank()) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String t : element.split("\\|")) {
            if (!t.isBlank() && !out.contains(t.strip())) {
                out.add(t.strip());
            }
        }
        return out;
    }

    static String pct(double x) {
        return Double.isNaN(x) ? "n/a" : String.format(Locale.ROOT, "%.1f%%", 100 * x);
    }

    /**
     * The triage of the repository whose report {@code file} is: {@code ROOT/pit/triage.csv} when {@code file} is one
     * of the modules' reports under ROOT ({@link Ledger#PIT_MODULES}) and the triage exists,
     * else null (a report elsewhere is read without one, never with a triage found further up).
     */
    static Path findTriage(Path file) {
        Path abs = file.toAbsolutePath().normalize();
        for (Path report : Ledger.PIT_MODULES.values()) {
            if (abs.endsWith(report)) {
                Path root = abs;
                for (int i = 0; i < report.getNameCount(); i++) {
                    root = root.getParent();
                }
                Path candidate = root.resolve(TRIAGE);
                return Files.isRegularFile(candidate) ? candidate : null;
            }
        }
        return null;
    }

    /** The key a triage row and a mutation share: every identifying field, the line excluded. */
    static String triageKey(String clazz, String method, String descriptor, String mutator, String index,
            String description) {
        return String.join("\u0000", clazz, method, descriptor, mutator, index, description);
    }

    /** A triage row: what it matches and its verdict. */
    public record Row(String clazz, String method, String descriptor, String mutator, String index,
            String description, String verdict, String reason) {
        String key() {
            return triageKey(clazz, method, descriptor, mutator, index, description);
        }

        /** The row as CSV fields, in {@link #TRIAGE_COLUMNS} order. */
        public List<String> fields() {
            return List.of(clazz, method, descriptor, mutator, index, description, verdict, reason);
        }
    }

    /** The CSV dialect the triage is written in: RFC 4180 with the header line first, one row per line. */
    public static final CSVFormat TRIAGE_FORMAT = CSVFormat.RFC4180.builder()
            .setHeader(TRIAGE_COLUMNS.toArray(String[]::new)).setRecordSeparator('\n').get();

    /**
     * Reads a triage: the header line {@link #TRIAGE_COLUMNS}, then one row per mutation.
     *
     * @throws IllegalArgumentException naming the file and line for a wrong header, a malformed row, an unknown
     *         verdict, a missing reason or a mutation named twice
     */
    public static Map<String, Row> readTriage(Path csv) throws IOException {
        Map<String, Row> out = new LinkedHashMap<>();
        try (Reader in = Files.newBufferedReader(csv, StandardCharsets.UTF_8);
                CSVParser parser = CSVFormat.RFC4180.builder().setHeader().setSkipHeaderRecord(true).get()
                        .parse(in)) {
            if (!parser.getHeaderNames().equals(TRIAGE_COLUMNS)) {
                throw new IllegalArgumentException(csv + ":1: the header must be " + String.join(",", TRIAGE_COLUMNS)
                        + ", not " + String.join(",", parser.getHeaderNames()));
            }
            for (CSVRecord rec : parser) {
                long line = parser.getCurrentLineNumber();
                if (rec.size() != TRIAGE_COLUMNS.size() || !VERDICTS.contains(rec.get("verdict"))
                        || rec.get("reason").isBlank()) {
                    throw new IllegalArgumentException(csv + ":" + line + ": a row is " + String.join(",",
                            TRIAGE_COLUMNS) + " with a verdict of " + VERDICTS + " and a reason, not: " + rec.values().length
                            + " fields " + String.join(",", rec.values()));
                }
                Row r = new Row(rec.get("class"), rec.get("method"), rec.get("descriptor"), rec.get("mutator"),
                        rec.get("index"), rec.get("description"), rec.get("verdict"), rec.get("reason"));
                if (out.put(r.key(), r) != null) {
                    throw new IllegalArgumentException(csv + ":" + line + ": names the same mutation as an earlier row: "
                            + r.clazz() + " " + r.method() + r.descriptor() + " " + r.mutator() + " #" + r.index());
                }
            }
        } catch (java.io.UncheckedIOException e) {
            throw new IllegalArgumentException(csv + ": malformed CSV: " + e.getMessage(), e);
        }
        return out;
    }

    /** Writes {@code rows} as a triage file (header, then the rows in the order given). */
    public static void writeTriage(Path csv, List<Row> rows) throws IOException {
        try (java.io.Writer out = Files.newBufferedWriter(csv, StandardCharsets.UTF_8);
                CSVPrinter printer = new CSVPrinter(out, TRIAGE_FORMAT)) {
            for (Row r : rows) {
                printer.printRecord(r.fields());
            }
        }
    }

    /**
     * Reads {@code file} and the triage of its repository ({@link #findTriage}).
     *
     * @throws IllegalArgumentException naming the file for malformed XML or a malformed triage row
     * @throws IOException when it cannot be read
     */
    public static PitReport read(Path file) throws IOException {
        return read(file, findTriage(file));
    }

    /** Reads {@code file} with the triage {@code triageCsv} (null: none). */
    public static PitReport read(Path file, Path triageCsv) throws IOException {
        Map<String, Row> triage = triageCsv == null ? Map.of() : readTriage(triageCsv);
        Set<String> used = new LinkedHashSet<>();
        XMLInputFactory factory = XMLInputFactory.newFactory();
        factory.setProperty(XMLInputFactory.SUPPORT_DTD, false);
        factory.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
        int mutations = 0;
        int killed = 0;
        int survived = 0;
        int noCoverage = 0;
        int timedOut = 0;
        List<String> survivors = new ArrayList<>();
        List<Open> open = new ArrayList<>();
        List<Mutation> all = new ArrayList<>();
        try (InputStream in = Files.newInputStream(file)) {
            XMLStreamReader xml = factory.createXMLStreamReader(in);
            String status = null;
            boolean detected = false;
            Map<String, String> fields = new LinkedHashMap<>();
            StringBuilder text = new StringBuilder();
            while (xml.hasNext()) {
                int event = xml.next();
                if (event == XMLStreamReader.START_ELEMENT) {
                    text.setLength(0);
                    if (xml.getLocalName().equals("mutation")) {
                        mutations++;
                        status = xml.getAttributeValue(null, "status");
                        detected = "true".equals(xml.getAttributeValue(null, "detected"));
                        if (detected) {
                            killed++;
                        }
                        if ("TIMED_OUT".equals(status)) {
                            timedOut++;
                        }
                        fields.clear();
                    }
                } else if (event == XMLStreamReader.CHARACTERS || event == XMLStreamReader.CDATA) {
                    text.append(xml.getText());
                } else if (event == XMLStreamReader.END_ELEMENT) {
                    String name = xml.getLocalName();
                    switch (name) {
                        case "mutatedClass", "mutatedMethod", "methodDescription", "lineNumber", "mutator",
                                "description", "sourceFile", "killingTest", "killingTests", "succeedingTests",
                                "coveringTests" -> fields.put(name, text.toString().trim());
                        case "index" -> fields.merge("index", text.toString().trim(), (x, y) -> x + " " + y);
                        case "mutation" -> {
                            String clazz = fields.getOrDefault("mutatedClass", "");
                            String mutator = fields.getOrDefault("mutator", "");
                            String shortMutator = mutator.substring(mutator.lastIndexOf('.') + 1);
                            String line = fields.getOrDefault("lineNumber", "");
                            int lineNo = line.isEmpty() ? 0 : Integer.parseInt(line);
                            String method = fields.getOrDefault("mutatedMethod", "");
                            String descriptor = fields.getOrDefault("methodDescription", "");
                            String index = fields.getOrDefault("index", "");
                            String description = fields.getOrDefault("description", "");
                            String sourceFile = fields.getOrDefault("sourceFile", "");
                            if ("SURVIVED".equals(status)) {
                                survived++;
                                survivors.add(source(clazz, sourceFile, lineNo) + " " + method + " " + shortMutator
                                        + " — " + description);
                            } else if ("NO_COVERAGE".equals(status)) {
                                noCoverage++;
                            }
                            List<String> killers = new ArrayList<>(tests(fields.get("killingTest")));
                            for (String t : tests(fields.get("killingTests"))) {
                                if (!killers.contains(t)) {
                                    killers.add(t);
                                }
                            }
                            List<String> covering = null;
                            if (fields.containsKey("coveringTests") || fields.containsKey("succeedingTests")
                                    || fields.containsKey("killingTests")) {
                                Set<String> c = new LinkedHashSet<>(tests(fields.get("coveringTests")));
                                c.addAll(killers);
                                c.addAll(tests(fields.get("succeedingTests")));
                                covering = List.copyOf(c);
                            }
                            Mutation m = new Mutation(clazz, method, descriptor, lineNo, shortMutator, index,
                                    status == null ? "" : status, detected, description, sourceFile, killers, covering);
                            all.add(m);
                            Row r = triage.get(m.key());
                            if (m.open()) {
                                open.add(new Open(clazz, method, descriptor, lineNo, shortMutator, index, m.status(),
                                        description, sourceFile, r == null ? null : r.verdict(),
                                        r == null ? null : r.reason()));
                            }
                            // A row is used when its mutation is there, and, unless it records a kill, still open
                            // or detected by no test (a minion's time-out, memory error or crash, which a later run
                            // may not repeat: the row's verdict still stands).
                            if (r != null && (m.open() || !"KILLED".equals(m.status())
                                    || r.verdict().equals("killed-now"))) {
                                used.add(r.key());
                            }
                        }
                        default -> { }
                    }
                }
            }
        } catch (XMLStreamException | NumberFormatException e) {
            throw new IllegalArgumentException(file + ": malformed XML: " + e.getMessage(), e);
        }
        // One triage serves every module's report: a row of another module's classes is that report's business.
        Set<String> modules = new LinkedHashSet<>();
        all.forEach(m -> modules.add(moduleDir(m.clazz())));
        List<Row> stale = triage.values().stream()
                .filter(r -> !used.contains(r.key()) && modules.contains(moduleDir(r.clazz()))).toList();
        return new PitReport(file, mutations, killed, survived, noCoverage, timedOut, survivors, open, triageCsv,
                stale, all);
    }
}
