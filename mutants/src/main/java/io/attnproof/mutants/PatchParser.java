package io.attnproof.mutants;

import io.attnproof.fixtures.claim.ClaimId;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a catalog patch: a header block of {@code # key: value} lines ({@code id} equal to the file name without
 * {@code .patch}, {@code claims} a comma-separated list of catalog claim ids, {@code breaks} and {@code origin} one
 * line each), then a {@code git diff}-style unified diff whose files all lie under
 * {@code system-under-test/src/main/java}, or that changes one kernel source ({@code native/cuda/*.cu} or
 * {@code native/metal/*.metal}: a native mutant, run on its emulated lane; {@code examples/kernels/cuda/*.cu} or
 * {@code examples/kernels/metal/*.metal}: a standard-dialect kernel built through the front end) or one file of the emulator itself
 * ({@code native/emu/*.h} or {@code native/emu/build.sh}: an emulator mutant, every emulated library rebuilt through
 * it). Every error names the file, the line and what was expected.
 */
public final class PatchParser {
    /** The system under test's Java sources (paths are relative to the repository root). */
    public static final String SOURCE_ROOT = "system-under-test/src/main/java/";
    /** The conformance kit's Java sources (the corpus checker, the seal, the kernel lane and its shrinker). */
    public static final String CONFORMANCE_ROOT = "conformance/src/main/java/";
    /** Every Java source root a curated mutant may change. */
    public static final List<String> JAVA_ROOTS = List.of(SOURCE_ROOT, CONFORMANCE_ROOT);

    /** The Java source root holding {@code path}, or null when it is not a .java file under one of {@link #JAVA_ROOTS}. */
    public static String javaRoot(String path) {
        if (!path.endsWith(".java") || path.contains("..")) {
            return null;
        }
        for (String root : JAVA_ROOTS) {
            if (path.startsWith(root) && path.length() > root.length()) {
                return root;
            }
        }
        return null;
    }
    /** The "lane" of an emulator mutant: the emulator's own headers or build, under every emulated lane. */
    public static final String EMULATOR = "emu";
    /** The kernel sources a native mutant may change: directory, file suffix and the emulated lane that runs it. */
    public static final List<List<String>> NATIVE_SOURCES = List.of(List.of("native/cuda/", ".cu", "cuda-emu"),
            List.of("native/metal/", ".metal", "metal-emu"), List.of("native/emu/", ".h", EMULATOR),
            List.of("native/emu/", "build.sh", EMULATOR),
            // Standard-dialect kernel families built through the front end (native/emu/frontend/build-cu.sh).
            List.of("examples/kernels/cuda/", ".cu", "cuda-frontend"),
            // Standard MSL kernel families built through the MSL front end (native/emu/frontend/build-metal.sh).
            List.of("examples/kernels/metal/", ".metal", "metal-frontend"));

    /** The emulated lane that runs kernel source {@code path}, or null when it is not a kernel source. */
    public static String nativeLane(String path) {
        for (List<String> n : NATIVE_SOURCES) {
            String rest = path.startsWith(n.get(0)) ? path.substring(n.get(0).length()) : "";
            if (!rest.isEmpty() && rest.endsWith(n.get(1)) && !rest.contains("/") && !path.contains("..")) {
                return n.get(2);
            }
        }
        return null;
    }
    /** The header keys, each required exactly once. */
    public static final List<String> KEYS = List.of("id", "claims", "breaks", "origin");
    /**
     * The optional header key, at most once: {@code interleaving}, why the numbers of this mutant's kill depend on how
     * threads interleave (a race), so that two campaigns compare its verdict, not its counts.
     */
    public static final String INTERLEAVING = "interleaving";
    /**
     * The optional header key, at most once: {@code tier: sweep} puts a mutant in the sweep tier, run by the campaigns
     * workflow and {@code -Dmutants.tier=all} but not by every {@code mvn verify}; without it a mutant is in the
     * default tier. {@code CatalogTiersTest} keeps every (claim, lane) pair and every checker of the catalog's
     * detection paths in the default tier.
     */
    public static final String TIER = "tier";
    /** The one value of {@link #TIER}. */
    public static final String SWEEP = "sweep";
    /**
     * The optional header key, at most once: {@code detects}, the emulator detection paths an emulator or kernel
     * mutant proves (comma-separated keys); read by the ledger (io.attnproof.ledger.DetectionPaths), not the runner.
     */
    public static final String DETECTS = "detects";
    /**
     * The optional header key, at most once, of an emulator mutant only: {@code builds}, the groups of
     * native/emu/build.sh its patch changes (comma-separated, of {@link #BUILD_GROUPS}), rebuilt in place of the
     * groups its claims' tests load; the other libraries are the normal build's.
     */
    public static final String BUILDS = "builds";
    /** native/emu/build.sh's groups ({@code ATTNPROOF_EMU_ONLY}). */
    public static final List<String> BUILD_GROUPS = List.of("cuda-emu", "cuda-emu-fma", "metal-emu", "plain",
            "fidelity");
    private static final List<String> OPTIONAL = List.of(INTERLEAVING, TIER, DETECTS, BUILDS);

    private static final Pattern HEADER = Pattern.compile("#\\s*([A-Za-z_-]+)\\s*:(.*)");
    private static final Pattern HUNK = Pattern.compile("@@ -(\\d+)(?:,(\\d+))? \\+(\\d+)(?:,(\\d+))? @@.*");

    private PatchParser() {
    }

    /** Parses {@code file}. */
    public static Mutant parse(Path file) throws IOException, PatchFormatException {
        return parse(file, Files.readString(file, StandardCharsets.UTF_8));
    }

    /** Parses {@code text} as the content of {@code file} (the file name gives the expected id). */
    public static Mutant parse(Path file, String text) throws PatchFormatException {
        List<String> lines = text.lines().toList();
        Map<String, String> header = new LinkedHashMap<>();
        Map<String, Integer> headerLine = new LinkedHashMap<>();
        int i = 0;
        for (; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("diff --git ") || line.startsWith("--- ")) {
                break;
            }
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.equals("#")) {
                continue;
            }
            if (!trimmed.startsWith("#")) {
                throw new PatchFormatException(file, i + 1, "unexpected text before the diff: \"" + abbreviate(line)
                        + "\" (the header is '# key: value' lines, keys " + KEYS + ")");
            }
            Matcher m = HEADER.matcher(trimmed);
            if (!m.matches() || !(KEYS.contains(m.group(1)) || OPTIONAL.contains(m.group(1)))) {
                throw new PatchFormatException(file, i + 1, "header line \"" + abbreviate(line)
                        + "\" must be '# key: value' with key one of " + KEYS + " or " + OPTIONAL);
            }
            String key = m.group(1);
            if (header.containsKey(key)) {
                throw new PatchFormatException(file, i + 1, "'# " + key + ":' given twice (first on line "
                        + headerLine.get(key) + ")");
            }
            String value = m.group(2).strip();
            if (value.isEmpty()) {
                throw new PatchFormatException(file, i + 1, "'# " + key + ":' is empty");
            }
            if (key.equals(TIER) && !value.equals(SWEEP)) {
                throw new PatchFormatException(file, i + 1, "'# " + TIER + ": " + value + "' must be '# " + TIER + ": "
                        + SWEEP + "' (without the line a mutant is in the default tier)");
            }
            header.put(key, value);
            headerLine.put(key, i + 1);
        }
        for (String key : KEYS) {
            if (!header.containsKey(key)) {
                throw new PatchFormatException(file, 0, "the header lacks '# " + key + ":' (required: " + KEYS + ")");
            }
        }
        String stem = file.getFileName().toString();
        if (!stem.endsWith(".patch")) {
            throw new PatchFormatException(file, 0, "a catalog patch file name must end in .patch");
        }
        stem = stem.substring(0, stem.length() - ".patch".length());
        if (!header.get("id").equals(stem)) {
            throw new PatchFormatException(file, headerLine.get("id"), "id \"" + header.get("id")
                    + "\" must equal the file name without .patch (\"" + stem + "\")");
        }
        List<String> claims = claims(file, headerLine.get("claims"), header.get("claims"));
        List<Mutant.FilePatch> files = diff(file, lines, i);
        List<String> builds = List.of();
        if (header.containsKey(BUILDS)) {
            int at = headerLine.get(BUILDS);
            if (!EMULATOR.equals(nativeLane(files.getFirst().path()))) {
                throw new PatchFormatException(file, at, "'# " + BUILDS + ":' is for a mutant of the emulator"
                        + " (native/emu/), not of " + files.getFirst().path());
            }
            builds = List.of(header.get(BUILDS).split("\\s*,\\s*"));
            for (String g : builds) {
                if (!BUILD_GROUPS.contains(g)) {
                    throw new PatchFormatException(file, at, "'# " + BUILDS + ":' group \"" + g + "\" is not one of "
                            + BUILD_GROUPS);
                }
            }
        }
        return new Mutant(header.get("id"), claims, header.get("breaks"), header.get("origin"),
                header.get(INTERLEAVING), header.containsKey(TIER), builds, file, files);
    }

    private static List<String> claims(Path file, int line, String value) throws PatchFormatException {
        List<String> out = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String id = part.strip();
            if (id.isEmpty()) {
                throw new PatchFormatException(file, line, "claims \"" + value
                        + "\" must be a comma-separated list of claim ids such as \"R1, R4\" (an entry is empty)");
            }
            try {
                ClaimId.of(id);
            } catch (IllegalArgumentException e) {
                throw new PatchFormatException(file, line, "claims: \"" + id + "\" is not a claim id of the catalog ("
                        + e.getMessage() + ")");
            }
            if (out.contains(id)) {
                throw new PatchFormatException(file, line, "claims: \"" + id + "\" is listed twice");
            }
            out.add(id);
        }
        return out;
    }

    private static List<Mutant.FilePatch> diff(Path file, List<String> lines, int start) throws PatchFormatException {
        if (start >= lines.size()) {
            throw new PatchFormatException(file, 0, "no diff after the header (expected 'diff --git a/... b/...')");
        }
        List<Mutant.FilePatch> files = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        int i = start;
        while (i < lines.size()) {
            String line = lines.get(i);
            String gitPath = null;
            if (line.startsWith("diff --git ")) {
                String[] parts = line.substring("diff --git ".length()).split(" ");
                if (parts.length != 2 || !parts[0].startsWith("a/") || !parts[1].startsWith("b/")) {
                    throw new PatchFormatException(file, i + 1, "malformed 'diff --git a/PATH b/PATH' line");
                }
                if (!parts[0].substring(2).equals(parts[1].substring(2))) {
                    throw new PatchFormatException(file, i + 1, "renames are not supported (" + parts[0] + " -> "
                            + parts[1] + ")");
                }
                gitPath = parts[0].substring(2);
                i++;
                while (i < lines.size() && !lines.get(i).startsWith("--- ") && !lines.get(i).startsWith("diff --git ")) {
                    String ext = lines.get(i);
                    if (ext.startsWith("new file mode") || ext.startsWith("deleted file mode")) {
                        throw new PatchFormatException(file, i + 1, "a curated mutant may not create or delete a file");
                    }
                    if (!(ext.startsWith("index ") || ext.startsWith("old mode") || ext.startsWith("new mode"))) {
                        throw new PatchFormatException(file, i + 1, "unexpected line in the diff header: \""
                                + abbreviate(ext) + "\"");
                    }
                    i++;
                }
            } else if (!line.startsWith("--- ")) {
                if (line.isBlank()) {
                    i++;
                    continue;
                }
                throw new PatchFormatException(file, i + 1, "unexpected line between file diffs: \"" + abbreviate(line)
                        + "\" (expected 'diff --git a/... b/...')");
            }
            if (i >= lines.size() || !lines.get(i).startsWith("--- ")) {
                throw new PatchFormatException(file, i + 1, "expected '--- a/PATH'");
            }
            String oldPath = path(file, i + 1, lines.get(i).substring(4), "a/");
            i++;
            if (i >= lines.size() || !lines.get(i).startsWith("+++ ")) {
                throw new PatchFormatException(file, i + 1, "expected '+++ b/PATH' after '--- a/" + oldPath + "'");
            }
            String newPath = path(file, i + 1, lines.get(i).substring(4), "b/");
            if (!oldPath.equals(newPath) || (gitPath != null && !gitPath.equals(oldPath))) {
                throw new PatchFormatException(file, i + 1, "the old and new paths differ (" + oldPath + " vs " + newPath
                        + "): renames are not supported");
            }
            boolean java = javaRoot(oldPath) != null;
            if (!java && nativeLane(oldPath) == null) {
                throw new PatchFormatException(file, i + 1, "path " + oldPath + " must be a .java file under "
                        + String.join(" or ", JAVA_ROOTS) + ", a kernel source native/cuda/*.cu, native/metal/*.metal or"
                        + " examples/kernels/cuda/*.cu, examples/kernels/metal/*.metal, or an emulator file native/emu/*.h or native/emu/build.sh"
                        + " (curated mutants change the main sources of the system under test or of the conformance"
                        + " kit, its kernels or the emulator that runs them)");
            }
            if (!seen.isEmpty() && (nativeLane(oldPath) != null || nativeLane(seen.iterator().next()) != null)) {
                throw new PatchFormatException(file, i + 1, oldPath + ": a native mutant changes exactly one kernel"
                        + " source or emulator file and nothing else (its libraries are rebuilt and run per mutant)");
            }
            if (!seen.add(oldPath)) {
                throw new PatchFormatException(file, i + 1, oldPath + " is patched twice; merge its hunks into one diff");
            }
            i++;
            List<Mutant.Hunk> hunks = new ArrayList<>();
            while (i < lines.size() && lines.get(i).startsWith("@@")) {
                int headerAt = i + 1;
                Matcher m = HUNK.matcher(lines.get(i));
                if (!m.matches()) {
                    throw new PatchFormatException(file, headerAt, "malformed hunk header \"" + abbreviate(lines.get(i))
                            + "\" (expected '@@ -START,COUNT +START,COUNT @@')");
                }
                int oldStart = Integer.parseInt(m.group(1));
                int oldCount = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
                int newStart = Integer.parseInt(m.group(3));
                int newCount = m.group(4) == null ? 1 : Integer.parseInt(m.group(4));
                i++;
                int oldSeen = 0;
                int newSeen = 0;
                List<String> body = new ArrayList<>();
                while (oldSeen < oldCount || newSeen < newCount) {
                    if (i >= lines.size()) {
                        throw new PatchFormatException(file, headerAt, "hunk " + lines.get(headerAt - 1).split(" @@")[0]
                                + " @@ is truncated: the file ends after " + oldSeen + " of " + oldCount + " old and "
                                + newSeen + " of " + newCount + " new lines");
                    }
                    String b = lines.get(i);
                    char kind = b.isEmpty() ? ' ' : b.charAt(0);
                    String content = b.isEmpty() ? "" : b.substring(1);
                    switch (kind) {
                        case ' ' -> {
                            oldSeen++;
                            newSeen++;
                        }
                        case '-' -> oldSeen++;
                        case '+' -> newSeen++;
                        case '\\' -> {
                            i++;
                            continue;
                        }
                        default -> throw new PatchFormatException(file, i + 1, "hunk line \"" + abbreviate(b)
                                + "\" must start with ' ', '-' or '+' (the hunk header promised " + oldCount
                                + " old and " + newCount + " new lines; " + oldSeen + " and " + newSeen + " so far)");
                    }
                    if (oldSeen > oldCount || newSeen > newCount) {
                        throw new PatchFormatException(file, i + 1, "hunk at line " + headerAt + " holds more lines than"
                                + " its header promises (" + oldCount + " old, " + newCount + " new)");
                    }
                    body.add(kind + content);
                    i++;
                }
                while (i < lines.size() && lines.get(i).startsWith("\\")) {
                    i++;
                }
                if (body.stream().noneMatch(l -> l.charAt(0) != ' ')) {
                    throw new PatchFormatException(file, headerAt, "hunk changes nothing (context lines only)");
                }
                hunks.add(new Mutant.Hunk(oldStart, oldCount, newStart, newCount, body));
            }
            if (hunks.isEmpty()) {
                throw new PatchFormatException(file, i + 1, oldPath + " has no hunk (expected '@@ -START,COUNT +START,COUNT @@')");
            }
            files.add(new Mutant.FilePatch(oldPath, hunks));
        }
        if (files.isEmpty()) {
            throw new PatchFormatException(file, 0, "no file diff after the header");
        }
        return files;
    }

    private static String path(Path file, int line, String raw, String prefix) throws PatchFormatException {
        String p = raw;
        int tab = p.indexOf('\t');
        if (tab >= 0) {
            p = p.substring(0, tab);
        }
        p = p.strip();
        if (p.equals("/dev/null")) {
            throw new PatchFormatException(file, line, "a curated mutant may not create or delete a file (/dev/null)");
        }
        if (!p.startsWith(prefix)) {
            throw new PatchFormatException(file, line, "path \"" + p + "\" must start with " + prefix
                    + " (git diff style, relative to the repository root)");
        }
        return p.substring(prefix.length());
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
