package io.attnproof.mutants;

import static io.attnproof.mutants.TestPatches.TINY;
import static io.attnproof.mutants.TestPatches.TINY_SOURCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.json.JsonTrees;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The campaign's paths that CampaignStaleTest does not reach, over a throw-away repository and the claim-test fixtures
 * of RunPathFixtures (RunnerTest runs real mutants, outside PIT): the longest mutants start first by the normal run's
 * test times (both modules' surefire reports), each mutant's console line names its first killer and how many more,
 * a native mutant builds (stub build script) and sees its own native directory while a Java mutant sees the base one,
 * the claim tests run on a daemon thread, a mutant past its limit is interrupted and waited for, an interrupted caller
 * keeps its interrupt, a conformance mutant compiles against the conformance class path, and the times written are
 * the run's own.
 */
class CampaignRunPathsTest {
    @TempDir
    Path dir;

    private static final String CU = "native/cuda/sinks_attn.cu";
    private static final String KERNEL = "__global__ void k() {\n    int x = 1;\n}\n";
    private static final List<String> FIXTURES = List.of("CudaEmuObserverFixture", "OneKillerFixture",
            "ClaimRunFixture", "SleeperFixture");

    private String gate;
    private Path catalog;

    @BeforeEach
    void repository() throws Exception {
        gate = System.getProperty(ClaimRunFixture.GATE);
        System.setProperty(ClaimRunFixture.GATE, "on");
        CudaEmuObserverFixture.SEEN.clear();
        SleeperFixture.reset();
        Files.createDirectories(dir.resolve("classes"));
        Path tests = Files.createDirectories(dir.resolve("test-classes/io/attnproof/mutants"));
        for (String c : FIXTURES) {
            try (var in = getClass().getResourceAsStream(c + ".class")) {
                Files.write(tests.resolve(c + ".class"), in.readAllBytes());
            }
        }
        Files.createDirectories(dir.resolve(TINY).getParent());
        Files.writeString(dir.resolve(TINY), TINY_SOURCE);
        Files.createDirectories(dir.resolve(CU).getParent());
        Files.writeString(dir.resolve(CU), KERNEL);
        Files.createDirectories(dir.resolve("native/emu"));
        Files.writeString(dir.resolve("native/emu/build.sh"), "exit 0\n");
        catalog = Files.createDirectories(dir.resolve("catalog"));
    }

    @AfterEach
    void restore() throws Exception {
        if (gate == null) {
            System.clearProperty(ClaimRunFixture.GATE);
        } else {
            System.setProperty(ClaimRunFixture.GATE, gate);
        }
        // Never leave a sleeper behind for the next test: it unwinds within UNWIND_MS of its interrupt.
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (SleeperFixture.started.getCount() == 0 && !SleeperFixture.unwound && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        Thread.interrupted();
    }

    private Campaign.Config config(Path out, Duration timeout) {
        return new Campaign.Config(dir, catalog, dir.resolve("classes"), dir.resolve("test-classes"),
                dir.resolve("evidence"), out, Shard.ALL, Set.of(), 1, timeout, dir.resolve("c/classes"),
                dir.resolve("c/test-classes"), dir.resolve("c/evidence"), true);
    }

    private static void report(Path folder, String testClass, String seconds) throws Exception {
        Files.createDirectories(folder);
        Files.writeString(folder.resolve("TEST-" + testClass + ".xml"), "<?xml version=\"1.0\"?>\n<testsuite "
                + "xmlns:xsi=\"x\" name=\"" + testClass + "\" time=\"" + seconds + "\" tests=\"1\">\n</testsuite>\n");
    }


    /** Runs the campaign with System.out captured; returns the [mutants] lines in the order they were printed. */
    private static List<String> printed(Campaign campaign, List<Campaign.Result> result) throws Exception {
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            result.add(campaign.run());
        } finally {
            System.setOut(saved);
        }
        return bytes.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("[mutants] ")).toList();
    }

    @Test
    void theLongestMutantsStartFirstAndEachLineNamesItsFirstKillerAndHowManyMore() throws Exception {
        String p = "io.attnproof.mutants.";
        // The normal run's times: 2 s for K1's class and 1 s for R1's (the system under test's reports), 3 s for
        // K2's (the conformance kit's reports, merged in).
        report(dir.resolve("surefire-reports"), p + "CudaEmuObserverFixture", "2.0");
        report(dir.resolve("surefire-reports"), p + "ClaimRunFixture", "1.0");
        report(dir.resolve("c/surefire-reports"), p + "OneKillerFixture", "3.0");
        TestPatches.write(catalog, "01-observer", "K1", TestPatches.tiny("2"));
        TestPatches.write(catalog, "02-one", "K2", TestPatches.tiny("3"));
        TestPatches.write(catalog, "03-many", "R1", TestPatches.tiny("4"));
        TestPatches.write(catalog, "04-native", "K1", TestPatches.diff(CU, KERNEL, KERNEL.replace("1;", "2;")));
        Path out = dir.resolve("out");
        List<Campaign.Result> holder = new ArrayList<>();
        long t0 = System.nanoTime();
        List<String> lines = printed(new Campaign(config(out, Duration.ofSeconds(60))), holder);
        double elapsed = (System.nanoTime() - t0) / 1e9;
        Campaign.Result r = holder.getFirst();

        // Longest estimate first (3, 2, 2, 1 s), a tie in catalog order; one thread runs them in that order.
        List<String> order = List.of("02-one", "01-observer", "04-native", "03-many");
        assertEquals(order, lines.stream().map(l -> l.substring("[mutants] ".length()).split(" ")[0]).toList(),
                String.join("\n", lines));
        assertEquals(List.of("01-observer", "02-one", "03-many", "04-native"),
                r.mutants().stream().map(MutantResult::id).toList(), "results stay in catalog order");

        // Each line: id, status, seconds, margin, then " by" the first killer and "(+n)" more, or the detail.
        Map<String, String> tail = Map.of(
                "01-observer", " — every claim test of [K1] passed (1 of 1)",
                "02-one", " by OneKillerFixture#fails",
                "03-many", " by " + r.mutants().get(2).killers().getFirst().test() + " (+4)",
                "04-native", " — every claim test of [K1] passed (1 of 1)");
        assertEquals(5, r.mutants().get(2).killers().size(), "ClaimRunFixture's five failures");
        assertEquals(1, r.mutants().get(1).killers().size());
        for (String line : lines) {
            String id = line.substring("[mutants] ".length()).split(" ")[0];
            MutantResult m = r.mutants().stream().filter(x -> x.id().equals(id)).findFirst().orElseThrow();
            assertEquals(String.format(Locale.ROOT, "[mutants] %-40s %-8s %6.1f s, margin %s%s", id,
                    m.status().json(), m.seconds(), ResultsFiles.formatMargin(m.margin()), tail.get(id)), line);
        }
        assertEquals(List.of(MutantResult.Status.SURVIVED, MutantResult.Status.KILLED, MutantResult.Status.KILLED,
                MutantResult.Status.SURVIVED), r.mutants().stream().map(MutantResult::status).toList());

        // The claim tests ran on daemon threads; the native mutant saw its own library folder, the Java one the
        // runner's own setting (whatever it is), in the order they ran.
        Path nativeDir = out.resolve("native/04-native");
        assertEquals(List.of("01-observer daemon=true native=" + System.getProperty(NativeBuild.DIR_PROPERTY),
                "04-native daemon=true native=" + nativeDir), CudaEmuObserverFixture.SEEN);
        assertEquals(KERNEL.replace("1;", "2;"), Files.readString(nativeDir.resolve("src/sinks_attn.cu")),
                "the native mutant's patched kernel, written by its build");

        // Times: each mutant's and the wall are the run's own (>= 0, within what the test measured around it), and
        // campaign.json rounds the wall to one decimal.
        for (MutantResult m : r.mutants()) {
            assertTrue(m.seconds() >= 0 && m.seconds() <= elapsed, m.id() + ": " + m.seconds() + " s of " + elapsed);
        }
        double slowest = r.mutants().stream().mapToDouble(MutantResult::seconds).max().orElseThrow();
        assertTrue(r.wallSeconds() >= slowest && r.wallSeconds() <= elapsed,
                "wall " + r.wallSeconds() + " s: at least the slowest mutant's " + slowest + ", at most " + elapsed);
        Map<?, ?> campaign = (Map<?, ?>) JsonTrees.parse(Files.readString(out.resolve("campaign.json")));
        double written = ((Number) campaign.get("wall_seconds")).doubleValue();
        assertTrue(Math.abs(written - r.wallSeconds()) <= 0.05 + 1e-9
                && Math.abs(written * 10 - Math.rint(written * 10)) < 1e-9,
                "wall_seconds " + written + " = " + r.wallSeconds() + " to one decimal");
    }

    @Test
    void aMutantPastItsLimitIsInterruptedAndItsTestsGetToUnwind() throws Exception {
        TestPatches.write(catalog, "05-sleeper", "B1", TestPatches.tiny("2"));
        Campaign.Result r = new Campaign(config(dir.resolve("out"), Duration.ofMillis(1000))).run();
        MutantResult m = r.mutants().getFirst();
        assertEquals(MutantResult.Status.TIMEOUT, m.status());
        assertEquals("the claim tests ran past 1 s ([io.attnproof.mutants.SleeperFixture])", m.detail());
        assertTrue(SleeperFixture.unwound, "the runner was interrupted and waited for (" + SleeperFixture.UNWIND_MS
                + " ms to unwind, within the grace of " + Campaign.TIMEOUT_GRACE + ")");
    }

    @Test
    void anInterruptedCallerGetsATimeoutAndKeepsItsInterrupt() throws Exception {
        Path patch = TestPatches.write(catalog, "05-sleeper", "B1", TestPatches.tiny("2"));
        Campaign campaign = new Campaign(config(dir.resolve("out"), Duration.ofSeconds(60)));
        Interrupted<MutantResult> run = interruptOnceTheSleeperStarts(
                () -> campaign.runOne(PatchParser.parse(patch), List.of()));
        MutantResult m = run.value();
        assertTrue(run.interrupted(), "the caller's interrupt survives both waits");
        assertEquals(MutantResult.Status.TIMEOUT, m.status());
        assertEquals("the claim tests ran past 60 s ([io.attnproof.mutants.SleeperFixture])", m.detail());
    }

    @Test
    void aCampaignInterruptedWhileWaitingForItsMutantsStopsAndKeepsItsInterrupt() throws Exception {
        TestPatches.write(catalog, "05-sleeper", "B1", TestPatches.tiny("2"));
        Campaign campaign = new Campaign(config(dir.resolve("out"), Duration.ofSeconds(60)));
        Interrupted<IllegalStateException> run = interruptOnceTheSleeperStarts(
                () -> org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, campaign::run));
        assertEquals("interrupted", run.value().getMessage());
        assertTrue(run.interrupted(), "the campaign's caller keeps its interrupt");
    }

    @Test
    void aConformanceMutantCompilesAgainstTheConformanceClassPath() throws Exception {
        // A kit class only the conformance class path holds (compiled here into c/classes).
        String helper = PatchParser.CONFORMANCE_ROOT + "io/attnproof/conformance/Helper.java";
        byte[] bytes = new MutantCompiler(List.of()).compile(Map.of(helper,
                "package io.attnproof.conformance;\n\npublic class Helper {\n}\n"))
                .get("io.attnproof.conformance.Helper");
        Path classes = Files.createDirectories(dir.resolve("c/classes/io/attnproof/conformance"));
        Files.write(classes.resolve("Helper.class"), bytes);
        String kit = PatchParser.CONFORMANCE_ROOT + "io/attnproof/conformance/Kit.java";
        String text = "package io.attnproof.conformance;\n\nclass Kit {\n    Object a() {\n"
                + "        return 1;\n    }\n}\n";
        Files.createDirectories(dir.resolve(kit).getParent());
        Files.writeString(dir.resolve(kit), text);
        TestPatches.write(catalog, "06-kit", "F3", TestPatches.diff(kit, text, text.replace("1;", "new Helper();")));
        MutantResult m = new Campaign(config(dir.resolve("out"), Duration.ofSeconds(60))).run().mutants().getFirst();
        // It compiled (against the system under test's classes alone Helper is missing): only the claim has no test.
        assertEquals("no claim test proves [F3] under [" + dir.resolve("test-classes") + "]", m.detail());
    }

    /** What {@link #interruptOnceTheSleeperStarts} saw: the call's value and whether this thread's interrupt survived. */
    record Interrupted<T>(T value, boolean interrupted) {}

    /** Runs {@code call} on this thread, interrupted from another once the sleeper fixture has started. */
    static <T> Interrupted<T> interruptOnceTheSleeperStarts(java.util.concurrent.Callable<T> call) throws Exception {
        Thread caller = Thread.currentThread();
        Thread interrupter = new Thread(() -> {
            try {
                if (SleeperFixture.started.await(30, TimeUnit.SECONDS)) {
                    caller.interrupt();
                }
            } catch (InterruptedException ignored) {
                // the test is over
            }
        });
        interrupter.start();
        T value;
        boolean interrupted;
        try {
            value = call.call();
        } finally {
            interrupted = Thread.interrupted();
            interrupter.interrupt();
            interrupter.join();
        }
        return new Interrupted<>(value, interrupted);
    }
}
