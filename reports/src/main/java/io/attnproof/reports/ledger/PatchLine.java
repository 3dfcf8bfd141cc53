package io.attnproof.reports.ledger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a curated mutant strikes: the first changed line of the first file its patch edits, as
 * {@code path:line} relative to the repository root, numbered in the file as it is in the repository (the
 * patch's old side: a removed line is that line; an added line is the line it is inserted before).
 */
public final class PatchLine {
    private static final Pattern HUNK = Pattern.compile("^@@ -(\\d+)(?:,\\d+)? \\+(\\d+)(?:,\\d+)? @@.*");

    private PatchLine() {
    }

    /**
     * The first changed line of {@code patch} (a unified git diff, optionally after {@code #} header lines).
     *
     * @throws IllegalArgumentException naming the patch when it has no file header, no hunk or no changed line
     * @throws IOException when it cannot be read
     */
    public static String of(Path patch) throws IOException {
        return of(Files.readAllLines(patch, StandardCharsets.UTF_8), patch.toString());
    }

    /** The same from the patch's lines; {@code name} names it in errors. */
    static String of(List<String> lines, String name) {
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
        int oldLine = Integer.parseInt(m.group(1));
        int newLine = Integer.parseInt(m.group(2));
        boolean created = oldLine == 0;
        for (int j = i + 1; j < lines.size(); j++) {
            String l = lines.get(j);
            if (l.startsWith("-") || l.startsWith("+")) {
                return file + ":" + (created ? newLine : oldLine);
            }
            if (l.startsWith("@@") || l.startsWith("diff ")) {
                break;
            }
            if (!l.startsWith("\\")) {      // "\ No newline at end of file" is no line
                oldLine++;
                newLine++;
            }
        }
        throw new IllegalArgumentException(name + ":" + (i + 1) + ": the first hunk changes no line");
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
