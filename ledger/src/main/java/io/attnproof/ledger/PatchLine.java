package io.attnproof.ledger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a curated mutant strikes: the first changed line of the first file its patch edits, as
 * {@code path:line} relative to the repository root, numbered in the file as it is in the repository (the
 * patch's old side: a removed line is that line; an added line is the line it is inserted before). The hunk header
 * gives the line; where the file under the root has moved since, the hunk's old lines are looked up in it.
 */
public final class PatchLine {
    private static final Pattern HUNK = Pattern.compile("^@@ -(\\d+)(?:,\\d+)? \\+(\\d+)(?:,\\d+)? @@.*");

    private PatchLine() {
    }

    /**
     * The first changed line of {@code patch} (a unified git diff, optionally after {@code #} header lines), from its
     * hunk header alone.
     *
     * @throws IllegalArgumentException naming the patch when it has no file header, no hunk or no changed line
     * @throws IOException when it cannot be read
     */
    public static String of(Path patch) throws IOException {
        return of(Files.readAllLines(patch, StandardCharsets.UTF_8), patch.toString(), null);
    }

    /**
     * The same, checked against the file under {@code root}: where the code has moved since the patch was written
     * (the hunk's old lines no longer at its header's line), the line is where those old lines are now, nearest the
     * header's line, as {@code git apply} finds an offset hunk; where they are nowhere (or the file is absent), the
     * header's line.
     */
    public static String of(Path patch, Path root) throws IOException {
        return of(Files.readAllLines(patch, StandardCharsets.UTF_8), patch.toString(), root);
    }

    /** The same from the patch's lines; {@code name} names it in errors; {@code root} may be null (header only). */
    static String of(List<String> lines, String name, Path root) {
        String oldPath = null;
        String newPath = null;
        int i = 0;
        for (; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.startsWith("--- ")) {
                oldPath = path(l.substring(4));
            } else if (l.startsWith("+++ ")) {
                newPath = path(l.substring(4));
            } else if (l.startsWith("@@") && (oldPath != null || newPath != null)) {
                break;
            }
        }
        String file = newPath != null ? newPath : oldPath;
        if (i >= lines.size() || file == null) {
            throw new IllegalArgumentException(name + ": no file header (--- a/..., +++ b/...) followed by a hunk"
                    + " (@@ -a,b +c,d @@)");
        }
        Matcher m = HUNK.matcher(lines.get(i));
        if (!m.matches()) {
            throw new IllegalArgumentException(name + ":" + (i + 1) + ": malformed hunk header: " + lines.get(i));
        }
        int oldStart = Integer.parseInt(m.group(1));
        int newStart = Integer.parseInt(m.group(2));
        // The hunk's old side (context and removed lines) and how many context lines precede its first change.
        List<String> oldSide = new ArrayList<>();
        int before = -1;
        for (int j = i + 1; j < lines.size(); j++) {
            String l = lines.get(j);
            if (l.startsWith("@@") || l.startsWith("diff ")) {
                break;
            }
            if ((l.startsWith("-") || l.startsWith("+")) && before < 0) {
                before = oldSide.size();
            }
            if (l.startsWith("-")) {
                oldSide.add(l.substring(1));
            } else if (!l.startsWith("+") && !l.startsWith("\\")) {   // "\ No newline at end of file" is no line
                oldSide.add(l.isEmpty() ? "" : l.substring(1));
            }
        }
        if (before < 0) {
            throw new IllegalArgumentException(name + ":" + (i + 1) + ": the first hunk changes no line");
        }
        if (oldStart == 0) {
            return file + ":" + newStart;        // a new file: its first line
        }
        int at = oldStart;
        if (root != null && !oldSide.isEmpty()) {
            Integer found = locate(root.resolve(file), oldSide, oldStart);
            if (found != null) {
                at = found;
            }
        }
        return file + ":" + (at + before);
    }

    /** The 1-based line nearest {@code hint} where {@code block} starts in {@code file}; null if nowhere or unreadable. */
    private static Integer locate(Path file, List<String> block, int hint) {
        List<String> text;
        try {
            text = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException | java.io.UncheckedIOException e) {
            return null;
        }
        int last = text.size() - block.size() + 1;
        for (int d = 0; d <= Math.max(hint, last); d++) {
            for (int start : d == 0 ? new int[] {hint} : new int[] {hint - d, hint + d}) {
                if (start >= 1 && start <= last && matches(text, block, start - 1)) {
                    return start;
                }
            }
        }
        return null;
    }

    private static boolean matches(List<String> text, List<String> block, int from) {
        for (int k = 0; k < block.size(); k++) {
            if (!text.get(from + k).equals(block.get(k))) {
                return false;
            }
        }
        return true;
    }

    /** "a/native/cuda/x.cu" (or "b/...", or with a tab and a date after it) to "native/cuda/x.cu"; null for /dev/null. */
    private static String path(String header) {
        String p = header.strip();
        int tab = p.indexOf('\t');
        if (tab >= 0) {
            p = p.substring(0, tab);
        }
        if (p.equals("/dev/null")) {
            return null;
        }
        return p.startsWith("a/") || p.startsWith("b/") ? p.substring(2) : p;
    }
}
