package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each detection path of the emulator's checkers, with its own exact expectation (races: claim N1; bounds per
 * allocation: N6; launch limits: N2): the three kinds
 * of shared-memory race, each with the count derived by hand from the probe kernel (fidelity.cu, race_kinds) and the
 * element and threads of the first report, and the same kernels with barriers between the accesses reporting none;
 * out-of-bounds reads and writes on global and on shared memory (out_of_bounds); each launch limit, with its whole
 * message.
 */
class CheckerPathsTest {

    static EmuRunner cuda() {
        return WarpSemanticsTest.cuda();
    }

    /** race_kinds(kind, barrier) on one block of 64: the exception (or null) and the races the checker counted. */
    record Races(NativeKernelException error, long counted, float[] out) {
    }

    static Races raceKinds(int kind, int barrier) {
        EmuRunner r = cuda();
        long before = r.races("race_kinds").races();
        DeviceBuffer out = DeviceBuffer.output("out", 64);
        NativeKernelException error = null;
        try {
            r.run(List.of(new KernelLaunch("race_kinds", new int[] {1, 1, 1}, new int[] {64, 1, 1},
                    List.of(KernelArg.of(out), KernelArg.i32(kind), KernelArg.i32(barrier)))));
        } catch (NativeKernelException e) {
            error = e;
        }
        return new Races(error, r.races("race_kinds").races() - before, out.floats());
    }

    /**
     * race_kinds(kind) reports exactly {@code count} races, the first naming {@code first}; with barriers between the
     * accesses, none. Evidence first (the counts a checker mutant changes), then the message's own details.
     */
    static void expectRaces(int kind, String path, long count, String first, Evidence ev) {
        Evidence e = ev.backend("cuda-emu");
        e.seed(kind);
        long checkedBefore = cuda().races("race_kinds").sharedAccesses();
        Races got = raceKinds(kind, 0);
        Races control = raceKinds(kind, 1);
        e.degeneracy("shared_elements_checked[race_kinds " + path + "]", cuda().races("race_kinds").sharedAccesses()
                - checkedBefore, Comparison.GT, 0, "both launches touch shared memory");
        e.checkEqual("races_reported[" + path + "]", got.counted(), count);
        e.checkEqual("races_reported_with_barriers[" + path + "]", control.counted(), 0);
        e.controlAtLeast("races_reported_without_barriers[" + path + "]", got.counted(), 1);
        assertTrue(got.error() != null, "kind " + kind + ": no race reported");
        assertEquals("EMU_SHARED_MEMORY_RACE", got.error().errorName(), got.error().getMessage());
        String detail = "shared-memory race in kernel race_kinds, block (0,0,0): " + first
                + " with no barrier between them (barrier interval 0 of the block) (and " + (count - 1)
                + " more in this launch)";
        assertTrue(got.error().getMessage().contains(count > 1 ? detail : detail.substring(0,
                detail.indexOf(" (and "))), got.error().getMessage());
        assertEquals(null, control.error(), "kind " + kind + " with barriers");
    }

    /**
     * Write after write: thread t writes sh[t % 8]; the threads of an element after its first writer each overwrite
     * another thread's write of the same interval: 8 elements x 7 later writers = 56 races. The first: thread 8
     * over thread 0's sh[0].
     */
    @Test
    @Claim("N1")
    void writeAfterWriteIsReportedWithItsCountAndElement(Evidence ev) {
        expectRaces(0, "write-after-write", 56, "sh[0] written by thread 0 and written by thread 8", ev);
    }

    /** Read after write: thread 0 writes sh[3]; threads 1..63 read it: 63 races, the first by thread 1. */
    @Test
    @Claim("N1")
    void readAfterWriteIsReportedWithItsCountAndElement(Evidence ev) {
        expectRaces(1, "read-after-write", 63, "sh[3] written by thread 0 and read by thread 1", ev);
    }

    /**
     * Write after read: thread 0 reads sh[5], thread 63 then writes it: one race, seen at the write (a checker that
     * stops recording reads reports none here).
     */
    @Test
    @Claim("N1")
    void writeAfterReadIsReportedWithItsCountAndElement(Evidence ev) {
        expectRaces(2, "write-after-read", 1, "sh[5] read by thread 0 and written by thread 63", ev);
    }

    /** out_of_bounds(kind) on one block of 32 (thread 7 makes the access; kind 4 makes none): the fault, or null. */
    static NativeKernelException outOfBounds(int kind) {
        DeviceBuffer g = DeviceBuffer.input("g", new float[10]);
        try {
            cuda().run(List.of(new KernelLaunch("out_of_bounds", new int[] {1, 1, 1}, new int[] {32, 1, 1},
                    List.of(KernelArg.of(g), KernelArg.i32(10), KernelArg.i32(kind)))));
            return null;
        } catch (NativeKernelException e) {
            return e;
        }
    }

    /**
     * Kinds 0-3: a read past the end and a write before the start of a global buffer, a read and a write one past a
     * shared array's end: each is one named fault with the element, the length, the kernel, block and thread. Control:
     * kind 4 (every access in bounds) faults nowhere.
     */
    @Test
    @Claim("N6")
    void outOfBoundsReadsAndWritesOnGlobalAndSharedMemoryAreNamed(Evidence ev) {
        Evidence e = ev.backend("cuda-emu");
        e.seed(0);
        String where = " in kernel out_of_bounds, block (0,0,0) thread (7,0,0)";
        String[] paths = {"global read", "global write", "shared read", "shared write"};
        String[] expected = {"out-of-bounds access g[10] (length 10)" + where,
            "out-of-bounds access g[-1] (length 10)" + where, "out-of-bounds access sh[16] (length 16)" + where,
            "out-of-bounds access sh[16] (length 16)" + where};
        long named = 0;
        for (int kind = 0; kind < 4; kind++) {
            NativeKernelException x = outOfBounds(kind);
            String m = x == null ? "(no fault)" : x.getMessage();
            long once = x != null && "EMU_OUT_OF_BOUNDS".equals(x.errorName()) && m.contains(expected[kind])
                    && !m.contains("more)") ? 1 : 0;
            e.checkEqual("faults_named_once[" + paths[kind] + "]", once, 1);
            named += once;
            assertEquals(1, once, "kind " + kind + ": " + m);
        }
        NativeKernelException inBounds = outOfBounds(4);
        e.checkEqual("faults_in_bounds", inBounds == null ? 0 : 1, 0);
        e.controlAtLeast("faults_named_out_of_bounds", named, 1);
        assertEquals(null, inBounds, "in bounds");
    }

    static String limitMessage(EmuRunner runner, KernelLaunch l) {
        NativeKernelException e = assertThrows(NativeKernelException.class, () -> runner.run(List.of(l)));
        assertEquals("EMU_INVALID_LAUNCH_CONFIG", e.errorName(), e.getMessage());
        return e.getMessage();
    }

    @Test
    void everyLaunchLimitIsRefusedWithItsWholeMessage() {
        for (Backend lane : List.of(Backend.cudaEmu(), Backend.metalEmu())) {
            EmuRunner runner = NativeFaultsTest.runner(lane);
            String api = lane instanceof CudaEmu ? "CUDA" : "Metal";
            String threads = limitMessage(runner, EmulationFidelityTest.probe(new int[] {1, 1, 1},
                    new int[] {1025, 1, 1}, 0));
            assertTrue(threads.contains("invalid launch configuration for attnproof_shared_probe: grid (1,1,1), block "
                    + "(1025,1,1): a block holds 1..1024 threads (" + api + "'s limit of 1024 threads per block) and "
                    + "a grid at least one block"), threads);
            // 4 bytes of `small` and 50176 of `big` (12544 floats).
            String shared = limitMessage(runner, EmulationFidelityTest.probe(new int[] {1, 1, 1},
                    new int[] {32, 1, 1}, 1));
            long limit = api.equals("CUDA") ? 48 * 1024 : 32 * 1024;
            assertTrue(shared.contains("invalid launch configuration for attnproof_shared_probe: its static shared "
                    + "memory is 50180 bytes (with big), over " + api + "'s limit of " + limit + " bytes ("
                    + limit / 1024 + " KiB) of static shared memory per block"), shared);
        }
        EmuRunner cuda = NativeFaultsTest.runner(Backend.cudaEmu());
        for (String axis : List.of("y", "z")) {
            int[] grid = axis.equals("y") ? new int[] {1, 65536, 1} : new int[] {1, 1, 65536};
            String m = limitMessage(cuda, EmulationFidelityTest.probe(grid, new int[] {32, 1, 1}, 0));
            assertTrue(m.contains("invalid launch configuration for attnproof_shared_probe: grid (" + grid[0] + ","
                    + grid[1] + "," + grid[2] + "), block (32,1,1): grid." + axis + " = 65536 exceeds CUDA's limit "
                    + "of 65535 blocks on that axis"), m);
        }
        // Metal's threadgroup memory: 36 KiB is refused there (CUDA's 48 KiB would hold it).
        DeviceBuffer out = DeviceBuffer.output("out", 32);
        String tg = limitMessage(WarpSemanticsTest.metal(), new KernelLaunch("threadgroup_36k", new int[] {1, 1, 1},
                new int[] {32, 1, 1}, List.of(KernelArg.of(out))));
        assertTrue(tg.contains("invalid launch configuration for threadgroup_36k: its static shared memory is 36864 "
                + "bytes (with big), over Metal's limit of 32768 bytes (32 KiB) of static shared memory per block"), tg);
    }

    /** The probes' data paths themselves: what the race-free variants read is what was written. */
    @Test
    void theRaceFreeProbesReadWhatWasWritten() {
        float[] raw = raceKinds(1, 1).out();
        float[] want = new float[64];
        for (int t = 1; t < 64; t++) {
            want[t] = 42;
        }
        assertArrayEquals(want, raw, 0f);
    }
}
