package io.attnproof.mutants;

import java.nio.file.Path;
import java.util.List;

/**
 * One curated mutant: its header ({@code # id}, {@code # claims}, {@code # breaks}, {@code # origin}, and
 * {@code # interleaving} for a race whose kill counts depend on thread scheduling, else null; {@code # tier: sweep}
 * for a mutant of the sweep tier, {@link PatchParser#TIER}; {@code # builds}, the build groups an emulator patch
 * changes, else empty, {@link PatchParser#BUILDS}) and the
 * file patches of its unified diff, all against {@code system-under-test/src/main/java}, or one kernel source under
 * {@code native/} (a native mutant).
 */
public record Mutant(String id, List<String> claims, String breaks, String origin, String interleaving,
        boolean sweep, List<String> builds, Path patchFile, List<FilePatch> files) {

    public Mutant {
        claims = List.copyOf(claims);
        builds = List.copyOf(builds);
        files = List.copyOf(files);
    }

    /**
     * The emulated lane a native mutant runs on ({@code cuda-emu} for {@code native/cuda/*.cu}, {@code metal-emu}
     * for {@code native/metal/*.metal}, {@link PatchParser#EMULATOR} for the emulator's own files), or null for a
     * mutant of the Java sources.
     */
    public String nativeLane() {
        return files.isEmpty() ? null : PatchParser.nativeLane(files.getFirst().path());
    }

    /** The changes to one file: {@code path} relative to the repository root, hunks in file order. */
    public record FilePatch(String path, List<Hunk> hunks) {
        public FilePatch {
            hunks = List.copyOf(hunks);
        }
    }

    /**
     * One hunk {@code @@ -oldStart,oldCount +newStart,newCount @@}: {@code lines} keep their first character
     * ({@code ' '} context, {@code '-'} removed, {@code '+'} added).
     */
    public record Hunk(int oldStart, int oldCount, int newStart, int newCount, List<String> lines) {
        public Hunk {
            lines = List.copyOf(lines);
        }

        /** The lines this hunk expects in the original file: context and removed lines. */
        public List<String> before() {
            return lines.stream().filter(l -> l.charAt(0) != '+').map(l -> l.substring(1)).toList();
        }

        /** The lines this hunk leaves in their place: context and added lines. */
        public List<String> after() {
            return lines.stream().filter(l -> l.charAt(0) != '-').map(l -> l.substring(1)).toList();
        }

        /** The hunk's header line as written in the patch. */
        public String header() {
            return "@@ -" + oldStart + "," + oldCount + " +" + newStart + "," + newCount + " @@";
        }
    }
}
