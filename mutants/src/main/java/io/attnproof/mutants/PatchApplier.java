package io.attnproof.mutants;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Applies one file's hunks the way {@code git apply} does without fuzz: each hunk's context and removed lines must
 * appear verbatim, at the stated line or shifted by an offset (the code above moved), never overlapping an earlier
 * hunk. A hunk that matches nowhere makes the mutant stale.
 */
public final class PatchApplier {
    private PatchApplier() {
    }

    /** {@code original} with every hunk of {@code patch} applied. */
    public static String apply(Mutant.FilePatch patch, String original) throws StaleException {
        boolean finalNewline = original.endsWith("\n");
        List<String> lines = new ArrayList<>(Arrays.asList(original.split("\n", -1)));
        if (finalNewline) {
            lines.removeLast();
        }
        List<String> out = new ArrayList<>();
        int copied = 0; // original lines [0, copied) are settled
        int drift = 0;
        List<Mutant.Hunk> hunks = patch.hunks();
        for (int h = 0; h < hunks.size(); h++) {
            Mutant.Hunk hunk = hunks.get(h);
            List<String> before = hunk.before();
            int preferred = before.isEmpty() ? hunk.oldStart() : hunk.oldStart() - 1 + drift;
            int at = find(lines, before, preferred, copied);
            if (at < 0) {
                throw new StaleException(describeMismatch(patch, h, lines, before, preferred, copied));
            }
            drift = at - (hunk.oldStart() - 1);
            out.addAll(lines.subList(copied, at));
            out.addAll(hunk.after());
            copied = at + before.size();
        }
        out.addAll(lines.subList(copied, lines.size()));
        return String.join("\n", out) + (finalNewline ? "\n" : "");
    }

    /** The match nearest to {@code preferred} at or after {@code from}, or -1. */
    private static int find(List<String> lines, List<String> before, int preferred, int from) {
        int max = lines.size() - before.size();
        if (before.isEmpty()) {
            return preferred >= from && preferred <= lines.size() ? preferred : -1;
        }
        for (int d = 0; d <= lines.size(); d++) {
            for (int at : new int[] {preferred - d, preferred + d}) {
                if (at >= from && at <= max && matches(lines, before, at)) {
                    return at;
                }
                if (d == 0) {
                    break;
                }
            }
        }
        return -1;
    }

    private static boolean matches(List<String> lines, List<String> before, int at) {
        for (int i = 0; i < before.size(); i++) {
            if (!lines.get(at + i).equals(before.get(i))) {
                return false;
            }
        }
        return true;
    }

    private static String describeMismatch(Mutant.FilePatch patch, int h, List<String> lines, List<String> before,
            int preferred, int from) {
        Mutant.Hunk hunk = patch.hunks().get(h);
        String where = "hunk " + (h + 1) + " of " + patch.hunks().size() + " (" + hunk.header() + ") of " + patch.path();
        int at = Math.max(preferred, from);
        for (int i = 0; i < before.size(); i++) {
            int line = at + i;
            String found = line < lines.size() ? "\"" + lines.get(line).strip() + "\"" : "the end of the file";
            if (line >= lines.size() || !lines.get(line).equals(before.get(i))) {
                return where + " does not apply: line " + (line + 1) + " is " + found + " where the patch expects \""
                        + before.get(i).strip() + "\", and its " + before.size()
                        + " context/removed lines match nowhere else in the file";
            }
        }
        return where + " does not apply: its " + before.size() + " context/removed lines match nowhere in the file";
    }
}
