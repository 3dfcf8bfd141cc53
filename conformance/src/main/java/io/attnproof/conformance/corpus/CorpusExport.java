package io.attnproof.conformance.corpus;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code attnproof corpus export}: selects the generator's checks by claim and dtype, keeps whole checks in order
 * while the corpus stays under {@code maxBytes}, and writes {@code DIR/manifest.json} plus {@code DIR/cases/<id>/}.
 */
public final class CorpusExport {
    private CorpusExport() {
    }

    /** What was written. */
    public record Result(Manifest manifest, long bytes, List<String> droppedChecks) {
        /** Cases per claim (the claim each case was made for). */
        public Map<String, Integer> casesPerClaim() {
            Map<String, Integer> out = new LinkedHashMap<>();
            for (String c : CorpusGenerator.CLAIMS) {
                int n = (int) manifest.cases().stream().filter(e -> e.claim().equals(c)).count();
                if (n > 0) {
                    out.put(c, n);
                }
            }
            return out;
        }
    }

    /** A corpus before it is written: the manifest, its cases in manifest order and the checks the budget dropped. */
    public record Plan(Manifest manifest, List<CaseSpec> cases, List<String> droppedChecks) {
    }

    /**
     * Writes the corpus of {@code seed} into {@code dir}, sealed ({@link Seal}).
     *
     * @param claims   the claims to keep (empty: all)
     * @param dtypes   the dtypes to keep (empty: all)
     * @param maxBytes the size budget of the case files
     * @throws IllegalArgumentException naming an unknown claim or dtype, or a folder that is not empty and not a corpus
     */
    public static Result export(Path dir, long seed, boolean small, Set<String> claims, Set<String> dtypes,
            long maxBytes) {
        Seal.Params params = new Seal.Params(seed, small, List.copyOf(claims), List.copyOf(dtypes), maxBytes);
        Plan plan = plan(params);
        prepare(dir);
        for (CaseSpec c : plan.cases()) {
            c.write(dir.resolve("cases").resolve(c.id()));
        }
        try {
            Files.writeString(dir.resolve(Manifest.FILE), plan.manifest().toJson(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve(Manifest.FILE), e);
        }
        Seal.write(dir, params);
        return new Result(plan.manifest(), size(dir), plan.droppedChecks());
    }

    /**
     * The corpus that {@code params} select, in memory: the same bytes every time for the same parameters and the
     * same version of attnproof.
     *
     * @throws IllegalArgumentException naming an unknown claim or dtype
     */
    public static Plan plan(Seal.Params params) {
        for (String c : params.claims()) {
            if (!CorpusGenerator.CLAIMS.contains(c)) {
                throw new IllegalArgumentException("--claims " + c + ": the corpus covers " + CorpusGenerator.CLAIMS);
            }
        }
        for (String t : params.dtypes()) {
            if (!List.of("F32", "F16", "BF16").contains(t)) {
                throw new IllegalArgumentException("--dtype " + t + ": must be F32, F16 or BF16");
            }
        }
        CorpusGenerator g = CorpusGenerator.build(params.seed(), params.small());
        Map<String, CaseSpec> byId = new LinkedHashMap<>();
        for (CaseSpec c : g.cases()) {
            byId.put(c.id(), c);
        }
        Set<String> kept = new LinkedHashSet<>();
        List<CheckSpec> checks = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        long bytes = 0;
        for (CheckSpec check : g.checks()) {
            List<String> ids = caseIds(check);
            CaseSpec first = byId.get(ids.getFirst());
            if ((!params.claims().isEmpty() && !params.claims().contains(check.claim()))
                    || (!params.dtypes().isEmpty() && !params.dtypes().contains(first.dtype()))) {
                continue;
            }
            long more = ids.stream().filter(id -> !kept.contains(id)).distinct().mapToLong(id -> byId.get(id).bytes())
                    .sum();
            if (bytes + more > params.maxBytes()) {
                dropped.add(check.id());
                continue;
            }
            bytes += more;
            kept.addAll(ids);
            checks.add(check);
        }
        List<Manifest.Entry> entries = new ArrayList<>();
        List<CaseSpec> cases = new ArrayList<>();
        for (CaseSpec c : g.cases()) {
            if (!kept.contains(c.id())) {
                continue;
            }
            cases.add(c);
            entries.add(new Manifest.Entry(c.id(), c.claim(), c.kind(), c.dtype(), c.seed(),
                    "cases/" + c.id() + "/case.json", c.outputShape(), c.description()));
        }
        Manifest m = new Manifest(params.seed(), params.small() ? "small" : "full", List.copyOf(entries),
                List.copyOf(checks));
        return new Plan(m, List.copyOf(cases), List.copyOf(dropped));
    }

    /** The case ids a check reads. */
    static List<String> caseIds(CheckSpec c) {
        List<String> ids = new ArrayList<>();
        ids.add(c.a().caseId());
        if (c.b() != null) {
            ids.add(c.b().caseId());
        }
        if (c.against() != null) {
            ids.add(c.against());
        }
        return ids;
    }

    /** An empty folder, or a corpus whose old cases are removed; anything else is refused. */
    private static void prepare(Path dir) {
        try {
            if (Files.isDirectory(dir)) {
                try (Stream<Path> s = Files.list(dir)) {
                    List<Path> entries = s.toList();
                    boolean corpus = Files.isRegularFile(dir.resolve(Manifest.FILE));
                    if (!entries.isEmpty() && !corpus) {
                        throw new IllegalArgumentException("DIR = " + dir + " must be empty or an earlier corpus (it"
                                + " holds " + entries.size() + " entries and no " + Manifest.FILE + ")");
                    }
                }
                Path cases = dir.resolve("cases");
                if (Files.isDirectory(cases)) {
                    try (Stream<Path> walk = Files.walk(cases)) {
                        for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                            Files.delete(p);
                        }
                    }
                }
            }
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare " + dir, e);
        }
    }

    /** Bytes of every file under {@code dir}. */
    public static long size(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).sum();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot size " + dir, e);
        }
    }
}
