package io.attnproof.mutants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Header and diff parsing: a good patch reads back field by field; every malformed one fails with a clear message. */
class PatchParserTest {
    static final String P = PatchParser.SOURCE_ROOT + "io/attnproof/attention/mask/Example.java";
    static final String DIFF = "diff --git a/" + P + " b/" + P + "\n"
            + "index 1111111..2222222 100644\n"
            + "--- a/" + P + "\n"
            + "+++ b/" + P + "\n"
            + "@@ -3,4 +3,3 @@ class Example {\n"
            + "     int a() {\n"
            + "-        return 1;\n"
            + "-    }\n"
            + "+        return 2; }\n"
            + " }\n";

    static String message(String name, String text) {
        PatchFormatException e = assertThrows(PatchFormatException.class,
                () -> PatchParser.parse(Path.of(name), text));
        return e.getMessage();
    }

    @Test
    void readsTheHeaderAndTheHunks() throws Exception {
        Mutant m = PatchParser.parse(Path.of("07-x.patch"),
                "# id: 07-x\n# claims: R1,  R4\n# breaks: breaks a thing\n# origin: ragged-mask wire PR\n" + DIFF);
        assertEquals("07-x", m.id());
        assertEquals(List.of("R1", "R4"), m.claims());
        assertEquals("breaks a thing", m.breaks());
        assertEquals("ragged-mask wire PR", m.origin());
        assertEquals(null, m.interleaving(), "no race unless the header says so");
        Mutant race = PatchParser.parse(Path.of("07-x.patch"), "# id: 07-x\n# claims: R1\n# breaks: b\n# origin: o\n"
                + "# interleaving: counts depend on the threads\n" + DIFF);
        assertEquals("counts depend on the threads", race.interleaving());
        assertFalse(m.sweep(), "the default tier unless the header says so");
        assertTrue(PatchParser.parse(Path.of("07-x.patch"), "# id: 07-x\n# claims: R1\n# breaks: b\n# origin: o\n"
                + "# tier: sweep\n" + DIFF).sweep());
        assertEquals("07-x.patch:5: '# tier: nightly' must be '# tier: sweep' (without the line a mutant is in the"
                + " default tier)", message("07-x.patch", "# id: 07-x\n# claims: R1\n# breaks: b\n# origin: o\n"
                + "# tier: nightly\n" + DIFF));
        assertEquals(1, m.files().size());
        Mutant.FilePatch f = m.files().getFirst();
        assertEquals(P, f.path());
        Mutant.Hunk h = f.hunks().getFirst();
        assertEquals(List.of(3, 4, 3, 3), List.of(h.oldStart(), h.oldCount(), h.newStart(), h.newCount()));
        assertEquals(List.of("    int a() {", "        return 1;", "    }", "}"), h.before());
        assertEquals(List.of("    int a() {", "        return 2; }", "}"), h.after());
    }

    @Test
    void headerErrorsNameTheFileTheLineAndTheRule() {
        String ok = "# id: 07-x\n# claims: R1\n# breaks: b\n# origin: o\n";
        assertEquals("07-x.patch: the header lacks '# breaks:' (required: [id, claims, breaks, origin])",
                message("07-x.patch", "# id: 07-x\n# claims: R1\n# origin: o\n" + DIFF));
        assertEquals("07-x.patch:1: id \"07-y\" must equal the file name without .patch (\"07-x\")",
                message("07-x.patch", ok.replace("07-x", "07-y") + DIFF));
        assertTrue(message("07-x.patch", ok.replace("R1", "R1, Z9") + DIFF)
                .startsWith("07-x.patch:2: claims: \"Z9\" is not a claim id of the catalog"));
        assertEquals("07-x.patch:2: claims: \"R1\" is listed twice",
                message("07-x.patch", ok.replace("R1", "R1, R1") + DIFF));
        assertEquals("07-x.patch:2: claims \"R1,\" must be a comma-separated list of claim ids such as \"R1, R4\""
                + " (an entry is empty)", message("07-x.patch", ok.replace("R1", "R1,") + DIFF));
        assertEquals("07-x.patch:5: '# id:' given twice (first on line 1)",
                message("07-x.patch", ok + "# id: 07-x\n" + DIFF));
        assertEquals("07-x.patch:3: '# breaks:' is empty", message("07-x.patch", ok.replace("# breaks: b", "# breaks:")
                + DIFF));
        assertEquals("07-x.patch:5: header line \"# author: me\" must be '# key: value' with key one of"
                + " [id, claims, breaks, origin] or [interleaving, tier, detects, builds]",
                message("07-x.patch", ok + "# author: me\n" + DIFF));
        assertEquals("07-x.patch:6: '# detects:' given twice (first on line 5)", message("07-x.patch",
                ok + "# detects: a\n# detects: b\n" + DIFF));
        assertEquals("07-x.patch:6: '# interleaving:' given twice (first on line 5)", message("07-x.patch",
                ok + "# interleaving: a\n# interleaving: b\n" + DIFF));
        assertEquals("07-x.patch:5: unexpected text before the diff: \"some prose\" (the header is '# key: value'"
                + " lines, keys [id, claims, breaks, origin])", message("07-x.patch", ok + "some prose\n" + DIFF));
        assertEquals("07-x.patch: no diff after the header (expected 'diff --git a/... b/...')",
                message("07-x.patch", ok));
    }

    @Test
    void theConformanceKitsMainSourcesAreASecondJavaRoot() throws Exception {
        String c = PatchParser.CONFORMANCE_ROOT + "io/attnproof/conformance/corpus/Seal.java";
        Mutant m = PatchParser.parse(Path.of("07-x.patch"), "# id: 07-x\n# claims: F2\n# breaks: b\n# origin: o\n"
                + DIFF.replace(P, c));
        assertEquals(c, m.files().getFirst().path());
        assertEquals(null, m.nativeLane(), "a Java mutant, compiled and loaded, not a rebuilt library");
        assertEquals(PatchParser.CONFORMANCE_ROOT, PatchParser.javaRoot(c));
        assertEquals(PatchParser.SOURCE_ROOT, PatchParser.javaRoot(P));
        // One mutant may change both modules' sources (one compilation against the conformance class path).
        Mutant both = PatchParser.parse(Path.of("07-x.patch"), "# id: 07-x\n# claims: F2\n# breaks: b\n# origin: o\n"
                + DIFF + DIFF.replace(P, c));
        assertEquals(List.of(P, c), both.files().stream().map(Mutant.FilePatch::path).toList());
    }

    @Test
    void diffErrorsAreClear() {
        String ok = "# id: 07-x\n# claims: R1\n# breaks: b\n# origin: o\n";
        String outside = DIFF.replace(P, "fixtures/src/main/java/X.java");
        assertTrue(message("07-x.patch", ok + outside).contains("path fixtures/src/main/java/X.java must be a .java file"
                + " under system-under-test/src/main/java/ or conformance/src/main/java/"));
        // The conformance kit's tests and resources, a path climbing out of a root, and a non-Java file stay refused.
        for (String bad : List.of("conformance/src/test/java/io/attnproof/conformance/corpus/SealTest.java",
                "conformance/src/main/java/../../../fixtures/src/main/java/X.java",
                "conformance/src/main/resources/x.json", "conformance/src/main/java/")) {
            assertTrue(message("07-x.patch", ok + DIFF.replace(P, bad)).contains("path " + bad + " must be a .java file"
                    + " under system-under-test/src/main/java/ or conformance/src/main/java/"), bad);
        }
        String truncated = DIFF.substring(0, DIFF.lastIndexOf(" }\n"));
        assertEquals("07-x.patch:9: hunk @@ -3,4 +3,3 @@ is truncated: the file ends after 3 of 4 old and 2 of 3 new"
                + " lines", message("07-x.patch", ok + truncated));
        String badLine = DIFF.replace("-        return 1;", "*        return 1;");
        assertTrue(message("07-x.patch", ok + badLine).startsWith("07-x.patch:11: hunk line \"*        return 1;\""
                + " must start with ' ', '-' or '+'"));
        assertTrue(message("07-x.patch", ok + DIFF.replace("@@ -3,4 +3,3 @@", "@@ -3,x +3,3 @@"))
                .startsWith("07-x.patch:9: malformed hunk header"));
        assertTrue(message("07-x.patch", ok + DIFF.replace("--- a/" + P, "--- /dev/null"))
                .contains("may not create or delete a file"));
        assertTrue(message("07-x.patch", ok + DIFF + DIFF).contains("is patched twice"));
    }

    @Test
    void theCatalogHoldsAtLeastThirtyWellFormedMutants() throws Exception {
        Path catalog = TestPatches.repoRoot().resolve("mutants/catalog");
        List<Mutant> all = Campaign.loadCatalog(catalog);
        assertTrue(all.size() >= 30, "catalog size " + all.size());
        Set<String> ids = new HashSet<>();
        for (Mutant m : all) {
            assertTrue(ids.add(m.id()), "duplicate id " + m.id());
            assertTrue(m.id().matches("\\d{2,3}-[a-z0-9-]+"), "id " + m.id()
                    + " must be NN-short-name or NNN-short-name");
            assertFalse(m.claims().isEmpty());
            assertFalse(m.breaks().lines().count() != 1, m.id() + ": breaks is one line");
        }
    }

    /** A standard MSL family under examples/kernels/metal is the metal-frontend lane, run by its own test classes. */
    @Test
    void metalKernelFamiliesAreTheMetalFrontEndLane() {
        assertEquals("metal-frontend", PatchParser.nativeLane("examples/kernels/metal/sinks_decode.metal"));
        assertEquals(null, PatchParser.nativeLane("examples/kernels/metal/sinks_decode.cu"));
        assertEquals(null, PatchParser.nativeLane("examples/kernels/metal/x/y.metal"));
        Set<String> classes = Set.of("a.MetalSinksDecodeTest", "a.MetalEmuLaneTest", "a.Fa2SinksEmuTest");
        assertEquals(Set.of("a.MetalSinksDecodeTest"), NativeBuild.laneClasses("metal-frontend", classes, List.of("N6")));
    }

    /** An emulator mutant may name the build groups its patch changes; another mutant, or another group, is refused. */
    @Test
    void anEmulatorMutantMayNameTheBuildGroupsItsPatchChanges() throws Exception {
        String b = "native/emu/build.sh";
        String emu = "diff --git a/" + b + " b/" + b + "\n--- a/" + b + "\n+++ b/" + b + "\n@@ -1,1 +1,1 @@\n-a\n+b\n";
        String head = "# id: 91-x\n# claims: N5\n# breaks: b\n# origin: o\n";
        assertEquals(List.of(), PatchParser.parse(Path.of("91-x.patch"), head + emu).builds(),
                "without the line, the groups of its claims");
        assertEquals(List.of("cuda-emu", "plain"), PatchParser.parse(Path.of("91-x.patch"),
                head + "# builds: cuda-emu, plain\n" + emu).builds());
        assertEquals("91-x.patch:5: '# builds:' group \"cuda\" is not one of [cuda-emu, cuda-emu-fma, metal-emu, plain,"
                + " fidelity]", message("91-x.patch", head + "# builds: cuda-emu,cuda\n" + emu));
        assertEquals("07-x.patch:5: '# builds:' is for a mutant of the emulator (native/emu/), not of " + P,
                message("07-x.patch", "# id: 07-x\n# claims: R1\n# breaks: b\n# origin: o\n# builds: cuda-emu\n"
                        + DIFF));
    }

    /** The emulator's own headers and build script are patchable (an emulator mutant); nothing else under native/emu. */
    @Test
    void emulatorFilesAreTheirOwnLaneAndBuildWhatTheirClaimsLoad() {
        assertEquals("cuda-emu", PatchParser.nativeLane("native/cuda/sinks_attn.cu"));
        assertEquals("emu", PatchParser.nativeLane("native/emu/emu_sched.h"));
        assertEquals("emu", PatchParser.nativeLane("native/emu/build.sh"));
        assertEquals(null, PatchParser.nativeLane("native/emu/metal/metal_stdlib"));
        assertEquals(null, PatchParser.nativeLane("native/emu/cuda_emu_host.cpp"));
        assertEquals(null, PatchParser.nativeLane("native/emu/../cuda/x.h"));
        assertEquals("fidelity", NativeBuild.emulatorBuilds(List.of("N4"), List.of()));
        assertEquals("cuda-emu,fidelity,metal-emu", NativeBuild.emulatorBuilds(List.of("N5", "N4"), List.of()));
        assertEquals("cuda-emu,fidelity,metal-emu", NativeBuild.emulatorBuilds(List.of("N1"), List.of()));
        assertEquals("cuda-emu,cuda-emu-fma,metal-emu,plain,fidelity",
                NativeBuild.emulatorBuilds(List.of("N4", "S1"), List.of()));
        assertEquals("cuda-emu", NativeBuild.emulatorBuilds(List.of("N5"), List.of("cuda-emu")),
                "a patch's # builds: groups replace its claims' groups");
        Set<String> classes = Set.of("a.CudaEmuLaneTest", "a.MetalEmuLaneTest", "a.WarpSemanticsTest");
        assertEquals(classes, NativeBuild.laneClasses("emu", classes, List.of("N4")));
        assertEquals(Set.of("a.CudaEmuLaneTest"), NativeBuild.laneClasses("cuda-emu", classes, List.of("S1")));
    }
}
