package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import io.attnproof.fixtures.claim.ClaimId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything the ledger shows, read from a repository root: the evidence lines of every
 * {@code <root>/<module>/target/evidence/*.jsonl} (plus extra directories), grouped into claim × backend rows; the
 * mutant campaign's {@code mutants/target/mutants/results.json}; PIT's
 * {@code system-under-test/target/pit-reports/mutations.xml}; the R8 series; and the pictures.
 */
public record Ledger(String generatedAt, Path root, List<Path> evidenceDirs, List<EvidenceLine> lines,
        List<EvidenceLine> stale, Map<Path, String> runs,
        List<ClaimRow> rows, List<String> missing, List<String> problems, MutantReport mutants, String mutantsNote,
        PitReport pit, String pitNote, R8Series r8, String r8Note, List<Pictures.Picture> pictures,
        List<ClaimMutants> perClaim, List<PitModule> pitModules) {

    /** Where the mutant campaign writes its results, relative to the root. */
    public static final Path MUTANTS = Path.of("mutants", "target", "mutants", "results.json");
    /** Where PIT writes its XML report, relative to the root. */
    public static final Path PIT = Path.of("system-under-test", "target", "pit-reports", "mutations.xml");
    /**
     * Every module's PIT report, relative to the root (mvn -Ppit verify; pit/README.md): the system under test, and
     * the verdict code. The oracles and the fixtures are mutated from system-under-test, where the claim tests run.
     */
    public static final Map<String, Path> PIT_MODULES = pitReports();

    private static Map<String, Path> pitReports() {
        Map<String, Path> m = new LinkedHashMap<>();
        m.put("system-under-test", PIT);
        m.put("oracles", Path.of("system-under-test", "target", "pit-reports-oracles", "mutations.xml"));
        m.put("fixtures", Path.of("system-under-test", "target", "pit-reports-fixtures", "mutations.xml"));
        for (String module : List.of("mutants", "ledger", "conformance")) {
            m.put(module, Path.of(module, "target", "pit-reports", "mutations.xml"));
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    /** One module's PIT report (null when absent or unreadable) and its one-line note. */
    public record PitModule(String module, Path file, PitReport report, String note) {
    }

    /** The R8 series file name inside an evidence directory. */
    public static final String R8_CSV = "R8-dead-prefix.csv";

    /** Reads everything under {@code root} (plus {@code extraEvidenceDirs}) and renders the pictures. */
    public static Ledger build(Path root, List<Path> extraEvidenceDirs) {
        List<Path> own = evidenceDirs(root);
        Set<Path> dirs = new LinkedHashSet<>(own);
        for (Path extra : extraEvidenceDirs) {
            dirs.add(extra);
        }
        List<String> problems = new ArrayList<>();
        List<EvidenceLine> lines = new ArrayList<>();
        List<EvidenceLine> stale = new ArrayList<>();
        Map<Path, String> runs = new LinkedHashMap<>();
        Path r8File = null;
        // The repository's own module directories are one build; each extra directory is a build of its own.
        List<List<Path>> groups = new ArrayList<>();
        groups.add(own);
        for (Path extra : dirs) {
            if (!own.contains(extra)) {
                groups.add(List.of(extra));
            }
        }
        for (List<Path> group : groups) {
            List<EvidenceLine> read = new ArrayList<>();
            for (Path dir : group) {
                if (!Files.isDirectory(dir)) {
                    problems.add(dir + ": not a directory");
                    continue;
                }
                for (Path file : list(dir, "*.jsonl")) {
                    readLines(file, read, problems);
                }
            }
            // Only the latest run counts; older lines (a removed test, a -Dtest run) are stale, never PASS.
            String latest = read.stream().map(EvidenceLine::run).filter(r -> r != null)
                    .max(Comparator.naturalOrder()).orElse(null);
            for (EvidenceLine line : read) {
                (latest != null && latest.equals(line.run()) ? lines : stale).add(line);
            }
            for (Path dir : group) {
                runs.put(dir, latest == null ? "none" : latest);
                if (r8File == null && latest != null && Files.isRegularFile(dir.resolve(R8_CSV))
                        && read.stream().anyMatch(l -> latest.equals(l.run()) && l.source().startsWith(dir.toString()))) {
                    r8File = dir.resolve(R8_CSV);
                }
            }
        }
        List<ClaimRow> rows = ClaimRow.of(lines);
        Set<String> seen = new LinkedHashSet<>();
        rows.forEach(r -> seen.add(r.claim()));
        List<String> missing = new ArrayList<>();
        for (ClaimId id : ClaimId.values()) {
            if (!seen.contains(id.name())) {
                missing.add(id.name());
            }
        }

        MutantReport mutants = null;
        String mutantsNote;
        Path mutantsFile = root.resolve(MUTANTS);
        if (!Files.isRegularFile(mutantsFile)) {
            mutantsNote = "mutants: not run (no " + MUTANTS + ")";
        } else {
            try {
                mutants = MutantReport.read(mutantsFile, root);
                mutantsNote = mutants.summary();
            } catch (IOException | IllegalArgumentException e) {
                mutantsNote = "mutants: results unreadable: " + e.getMessage();
            }
        }
        PitReport pit = null;
        String pitNote;
        Path pitFile = root.resolve(PIT);
        if (!Files.isRegularFile(pitFile)) {
            pitNote = "PIT: not run (no " + PIT + "; mvn -Ppit verify writes it)";
        } else {
            try {
                pit = PitReport.read(pitFile);
                pitNote = pit.summary();
            } catch (IOException | IllegalArgumentException e) {
                pitNote = "PIT: report unreadable: " + e.getMessage();
            }
        }
        List<PitModule> pitModules = new ArrayList<>();
        for (Map.Entry<String, Path> e : PIT_MODULES.entrySet()) {
            Path file = root.resolve(e.getValue());
            if (e.getValue().equals(PIT)) {
                pitModules.add(new PitModule(e.getKey(), e.getValue(), pit, pitNote));
            } else if (!Files.isRegularFile(file)) {
                pitModules.add(new PitModule(e.getKey(), e.getValue(), null, "PIT: not run (no " + e.getValue() + ")"));
            } else {
                try {
                    PitReport r = PitReport.read(file);
                    pitModules.add(new PitModule(e.getKey(), e.getValue(), r, r.summary()));
                } catch (IOException | IllegalArgumentException ex) {
                    pitModules.add(new PitModule(e.getKey(), e.getValue(), null,
                            "PIT: report unreadable: " + ex.getMessage()));
                }
            }
        }
        Map<String, List<String>> scope = null;
        try {
            scope = ClaimMutants.readTestScope(root.resolve(ClaimMutants.TEST_SCOPE));
        } catch (IOException | IllegalArgumentException e) {
            pitNote = pitNote + " (" + ClaimMutants.TEST_SCOPE + " unreadable: " + e.getMessage() + ")";
        }
        R8Series r8 = null;
        String r8Note;
        if (r8File == null) {
            r8Note = "no " + R8_CSV + " in the evidence directories (DeadPrefixGrowthTest writes it)";
        } else {
            try {
                r8 = R8Series.read(r8File);
                r8Note = r8File.toString();
                // The same test under the curated mutant that restores the shared cache_len: measured, not simulated.
                Path mutantEvidence = root.resolve("mutants").resolve("target").resolve("mutants").resolve("evidence");
                if (Files.isDirectory(mutantEvidence)) {
                    for (Path dir : list(mutantEvidence, "*shared-cache-len-use-4*")) {
                        if (Files.isRegularFile(dir.resolve(R8_CSV))) {
                            r8 = r8.withShared(R8Series.read(dir.resolve(R8_CSV)));
                            r8Note = r8Note + " and " + dir.resolve(R8_CSV);
                        }
                    }
                }
            } catch (IOException | IllegalArgumentException e) {
                r8Note = "R8 series unreadable: " + e.getMessage();
                problems.add(r8Note);
            }
        }

        List<Pictures.Picture> pictures = new ArrayList<>(Pictures.uniformMasks());
        pictures.add(Pictures.raggedMask());
        if (r8 != null) {
            pictures.add(Pictures.r8Plot(r8));
        }
        pictures.addAll(Pictures.errorHistograms(lines));
        String now = OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS)
                .format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        return new Ledger(now, root, List.copyOf(dirs), List.copyOf(lines), List.copyOf(stale),
                java.util.Collections.unmodifiableMap(runs), List.copyOf(rows), List.copyOf(missing),
                List.copyOf(problems), mutants, mutantsNote, pit, pitNote, r8, r8Note, List.copyOf(pictures),
                ClaimMutants.of(lines, mutants, pit, scope), List.copyOf(pitModules));
    }

    /** {@code <root>/target/evidence} and every {@code <root>/<child>/target/evidence} that exists, children by name. */
    public static List<Path> evidenceDirs(Path root) {
        List<Path> dirs = new ArrayList<>();
        Path own = root.resolve("target").resolve("evidence");
        if (Files.isDirectory(own)) {
            dirs.add(own);
        }
        if (!Files.isDirectory(root)) {
            return dirs;
        }
        for (Path child : list(root, "*")) {
            Path evidence = child.resolve("target").resolve("evidence");
            if (Files.isDirectory(evidence)) {
                dirs.add(evidence);
            }
        }
        return dirs;
    }

    private static List<Path> list(Path dir, String glob) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, glob)) {
            stream.forEach(out::add);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
        out.sort(Comparator.naturalOrder());
        return out;
    }

    private static void readLines(Path file, List<EvidenceLine> lines, List<String> problems) {
        List<String> text;
        try {
            text = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            problems.add(file + ": cannot read: " + e);
            return;
        }
        for (int i = 0; i < text.size(); i++) {
            if (text.get(i).isBlank()) {
                continue;
            }
            String source = file + ":" + (i + 1);
            try {
                lines.add(EvidenceLine.parse(text.get(i), source));
            } catch (IllegalArgumentException e) {
                problems.add(file + ":" + (i + 1) + ": malformed evidence: " + e.getMessage());
            }
        }
    }

    public long count(ClaimRow.Status status) {
        return rows.stream().filter(r -> r.status() == status).count();
    }

    /**
     * The one-line summary: "38 claims × backends: all pass (873 evidence lines; no evidence yet: X1)", or the
     * FAIL/PASS/SKIP counts naming the failing rows.
     */
    public String summaryLine() {
        if (lines.isEmpty()) {
            return "no evidence found under " + (evidenceDirs.isEmpty() ? root + "/*/target/evidence" : evidenceDirs)
                    + (problems.isEmpty() ? "" : " (" + problems.size() + " unreadable)");
        }
        long fail = count(ClaimRow.Status.FAIL) + count(ClaimRow.Status.INCONSISTENT);
        long pass = count(ClaimRow.Status.PASS);
        long skip = count(ClaimRow.Status.SKIP);
        StringBuilder s = new StringBuilder().append(rows.size()).append(" claims × backends: ");
        if (fail == 0) {
            s.append("all pass");
            if (skip > 0) {
                s.append(" (").append(pass).append(" PASS, ").append(skip).append(" SKIP)");
            }
        } else {
            s.append(fail).append(" FAIL (");
            s.append(String.join(", ", rows.stream().filter(r -> r.status().failing())
                    .map(r -> r.claim() + " " + r.backend()).toList()));
            s.append("), ").append(pass).append(" PASS, ").append(skip).append(" SKIP");
        }
        s.append("; ").append(lines.size()).append(" evidence lines");
        if (!problems.isEmpty()) {
            s.append(", ").append(problems.size()).append(" unreadable");
        }
        if (!stale.isEmpty()) {
            s.append(", ").append(stale.size()).append(" stale (older runs, not counted)");
        }
        if (!missing.isEmpty()) {
            s.append("; no evidence yet: ").append(String.join(", ", missing));
        }
        return s.toString();
    }

    /** 2 when no evidence was read, 1 when a row failed or evidence was unreadable, else 0. */
    public int exitStatus() {
        if (lines.isEmpty()) {
            return 2;
        }
        return rows.stream().anyMatch(r -> r.status().failing()) || !problems.isEmpty() ? 1 : 0;
    }
}
