package io.attnproof.mutants;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Writes catalog-style patches for runner tests, made from the current sources so they never go stale by accident. */
final class TestPatches {
    static final String RAGGED_ROWS = PatchParser.SOURCE_ROOT + "io/attnproof/attention/mask/RaggedRows.java";
    /** A one-method class the campaign tests write into a throw-away repository and patch. */
    static final String TINY = PatchParser.SOURCE_ROOT + "io/attnproof/attention/Tiny.java";
    static final String TINY_SOURCE = "package io.attnproof.attention;\n\nclass Tiny {\n    int a() {\n"
            + "        return 1;\n    }\n}\n";

    /** A patch of {@link #TINY} whose {@code a()} returns {@code value} instead of 1. */
    static String tiny(String value) {
        return diff(TINY, TINY_SOURCE, TINY_SOURCE.replace("1;", value + ";"));
    }

    private TestPatches() {
    }

    /** The repository root (the mutants module's parent under Maven). */
    static Path repoRoot() {
        String p = System.getProperty("mutants.repo.root");
        return (p == null || p.isBlank() ? Path.of("..") : Path.of(p)).toAbsolutePath().normalize();
    }

    static String source(String path) throws IOException {
        return Files.readString(repoRoot().resolve(path), StandardCharsets.UTF_8);
    }

    /** The header block of a catalog patch. */
    static String header(String id, String claims) {
        return "# id: " + id + "\n# claims: " + claims + "\n# breaks: a test mutant\n# origin: the runner's own tests\n";
    }

    /** A one-hunk {@code git diff} of {@code path} from {@code before} to {@code after}, three context lines. */
    static String diff(String path, String before, String after) {
        List<String> a = before.lines().toList();
        List<String> b = after.lines().toList();
        int first = 0;
        while (first < a.size() && first < b.size() && a.get(first).equals(b.get(first))) {
            first++;
        }
        int endA = a.size();
        int endB = b.size();
        while (endA > first && endB > first && a.get(endA - 1).equals(b.get(endB - 1))) {
            endA--;
            endB--;
        }
        if (first == a.size() && first == b.size()) {
            throw new IllegalArgumentException("no change to diff");
        }
        int from = Math.max(0, first - 3);
        int toA = Math.min(a.size(), endA + 3);
        int toB = toA - endA + endB;
        StringBuilder d = new StringBuilder()
                .append("diff --git a/").append(path).append(" b/").append(path).append('\n')
                .append("--- a/").append(path).append('\n')
                .append("+++ b/").append(path).append('\n')
                .append("@@ -").append(from + 1).append(',').append(toA - from)
                .append(" +").append(from + 1).append(',').append(toB - from).append(" @@\n");
        for (int i = from; i < first; i++) {
            d.append(' ').append(a.get(i)).append('\n');
        }
        for (int i = first; i < endA; i++) {
            d.append('-').append(a.get(i)).append('\n');
        }
        for (int i = first; i < endB; i++) {
            d.append('+').append(b.get(i)).append('\n');
        }
        for (int i = endA; i < toA; i++) {
            d.append(' ').append(a.get(i)).append('\n');
        }
        return d.toString();
    }

    /** A patch of {@code path} replacing the one occurrence of {@code old} by {@code replacement}. */
    static String mutation(String path, String old, String replacement) throws IOException {
        String before = source(path);
        if (before.indexOf(old) < 0 || before.indexOf(old) != before.lastIndexOf(old)) {
            throw new IllegalArgumentException(path + " must hold exactly one \"" + old + "\"");
        }
        return diff(path, before, before.replace(old, replacement));
    }

    /** Writes {@code id}.patch under {@code dir}. */
    static Path write(Path dir, String id, String claims, String diff) throws IOException {
        Path file = dir.resolve(id + ".patch");
        Files.writeString(file, header(id, claims) + diff, StandardCharsets.UTF_8);
        return file;
    }
}
