package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.tolerance.Diff;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Claim N4 on the emulator itself: warp operations synchronise their own warp only, barriers count generations, and
 * what cannot complete is a named deadlock. The probe kernels ({@code src/test/resources/emu-kernels/fidelity.cu}
 * and {@code fidelity.metal}, built by {@code native/emu/build.sh}) run through the emulated lanes' shims, and their
 * outputs are held against plain Java arithmetic of what the device computes (each lane's butterfly step by step, in
 * the kernel's order; no FMA, as the lanes are built with {@code -ffp-contract=off}).
 */
class WarpSemanticsTest {
    static final String CUDA_LIBRARY = "libattnproof_cuda_emu_fidelity.so";
    static final String METAL_LIBRARY = "libattnproof_metal_emu_fidelity.so";

    static EmuRunner cuda() {
        return EmuRunner.load("cuda-emu-fidelity", NativeFiles.library(CUDA_LIBRARY));
    }

    static EmuRunner metal() {
        return EmuRunner.load("metal-emu-fidelity", NativeFiles.library(METAL_LIBRARY));
    }

    static float[] gaussians(long seed, int n) {
        SplittableRandom rng = new SplittableRandom(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) rng.nextGaussian();
        }
        return x;
    }

    /** One warp's xor butterfly of {@code v} (32 lanes), summing: every lane adds its partner's value per step. */
    static float[] butterflySum(float[] v) {
        float[] cur = v.clone();
        for (int m = 16; m > 0; m /= 2) {
            float[] next = new float[32];
            for (int l = 0; l < 32; l++) {
                next[l] = cur[l] + cur[l ^ m];
            }
            cur = next;
        }
        return cur;
    }

    static float[] butterflyMax(float[] v) {
        float[] cur = v.clone();
        for (int m = 16; m > 0; m /= 2) {
            float[] next = new float[32];
            for (int l = 0; l < 32; l++) {
                next[l] = Math.max(cur[l], cur[l ^ m]);
            }
            cur = next;
        }
        return cur;
    }

    /**
     * What divergent_warps / divergent_simdgroups compute on a device (fidelity.cu): per warp w below qLen, w + 1
     * iterations of a butterfly sum over tile region (w - it) mod 4 scaled by it + 1; warp 0's max butterfly; then
     * out[t] = acc[(t + 32) % 128] - acc[t] from the rewritten tile.
     */
    static float[] divergentExpected(float[] x, int qLen) {
        float[] tile = x.clone();
        float[] acc = new float[128];
        for (int w = 0; w < 4; w++) {
            if (w >= qLen) {
                continue;
            }
            for (int it = 0; it <= w; it++) {
                float[] v = new float[32];
                for (int l = 0; l < 32; l++) {
                    v[l] = tile[l + 32 * ((w - it + 4) % 4)] * (float) (it + 1);
                }
                float[] s = butterflySum(v);
                for (int l = 0; l < 32; l++) {
                    acc[32 * w + l] += s[l];
                }
            }
        }
        float[] mx = new float[32];
        for (int l = 0; l < 32; l++) {
            mx[l] = acc[l] + tile[l];
        }
        float[] m = butterflyMax(mx);
        for (int l = 0; l < 32; l++) {
            acc[l] += m[l];
        }
        float[] out = new float[128];
        for (int t = 0; t < 128; t++) {
            out[t] = acc[(t + 32) % 128] - acc[t];
        }
        return out;
    }

    static float[] run(EmuRunner runner, String kernel, int threads, float[] x, int outLength, int... scalars) {
        DeviceBuffer in = DeviceBuffer.input("x", x);
        DeviceBuffer out = DeviceBuffer.output("out", outLength);
        List<KernelArg> args = new ArrayList<>(List.of(KernelArg.of(in), KernelArg.of(out)));
        for (int v : scalars) {
            args.add(KernelArg.i32(v));
        }
        runner.run(List.of(new KernelLaunch(kernel, new int[] {1, 1, 1}, new int[] {threads, 1, 1}, args)));
        return out.floats();
    }

    /**
     * Every q_len from 0 (no warp runs the loop) to 4 (every warp does, each a different number of times): the
     * output bits equal the Java computation of the device semantics, and the checker reports no race on this
     * race-free kernel. Control: the expectation of another q_len ((q_len + 1) mod 5) differs: the comparison sees the loops' shape.
     */
    static void divergentWarps(EmuRunner runner, String lane, String kernel, long seed, Evidence ev) {
        Evidence e = ev.backend(lane);
        e.seed(seed);
        EmuRunner.RaceStats before = runner.races(kernel);
        long controlBits = Long.MAX_VALUE;
        for (int qLen = 0; qLen <= 4; qLen++) {
            float[] x = gaussians(seed + qLen, 128);
            float[] got = run(runner, kernel, 128, x, 128, qLen, 0);
            e.checkBitIdentical("bits_differing_from_the_device_semantics[" + kernel + " q_len=" + qLen + "]",
                    Diff.bitsDiffering(divergentExpected(x, qLen), got));
            controlBits = Math.min(controlBits, Diff.bitsDiffering(divergentExpected(x, (qLen + 1) % 5), got));
        }
        EmuRunner.RaceStats after = runner.races(kernel);
        e.degeneracy("launches[" + kernel + "]", after.launches() - before.launches(),
                io.attnproof.fixtures.evidence.Comparison.EQ, 5, "one per q_len");
        e.degeneracy("shared_elements_checked[" + kernel + "]", after.sharedAccesses() - before.sharedAccesses(),
                io.attnproof.fixtures.evidence.Comparison.GT, 0, "the tile's reads and writes");
        e.checkEqual("races_reported[" + kernel + "]", after.races() - before.races(), 0);
        e.controlAtLeast("bits_differing_from_another_q_len_expectation[" + kernel + "]", controlBits, 1);
    }

    @Test
    @Claim("N4")
    void warpsRunningDifferentNumbersOfShufflesGiveTheDeviceNumbersOnCuda(Evidence ev) {
        divergentWarps(cuda(), "cuda-emu", "divergent_warps", 4100, ev);
    }

    @Test
    @Claim("N4")
    void simdGroupsRunningDifferentNumbersOfShufflesGiveTheDeviceNumbersOnMetal(Evidence ev) {
        divergentWarps(metal(), "metal-emu", "divergent_simdgroups", 4200, ev);
    }

    /**
     * The same kernels with the barrier before the tile rewrite left out: warp 0 leaves its loop first and rewrites
     * its tile region while warp 3 still reads it in its last iteration, between the same two barriers. The checker
     * must report it (a warp operation does not end a barrier interval).
     */
    @Test
    void anEarlyRewriteUnderAWarpStillShufflingIsAReportedRace() {
        for (EmuRunner runner : List.of(cuda(), metal())) {
            String kernel = runner.lane().startsWith("cuda") ? "divergent_warps" : "divergent_simdgroups";
            NativeKernelException e = assertThrows(NativeKernelException.class,
                    () -> run(runner, kernel, 128, gaussians(4500, 128), 128, 4, 1));
            assertEquals("EMU_SHARED_MEMORY_RACE", e.errorName(), e.getMessage());
            for (String field : List.of("shared-memory race in kernel " + kernel + ", block (0,0,0): tile[",
                    "by thread ", "with no barrier between them (barrier interval 1 of the block)")) {
                assertTrue(e.getMessage().contains(field), field + " in " + e.getMessage());
            }
        }
    }

    /** The other CUDA warp operations, with partial masks and widths, against their definitions (fidelity.cu). */
    @Test
    void cudaWarpOperationsFollowTheirMasksAndWidths() {
        float[] x = gaussians(4300, 64);
        float[] got = run(cuda(), "warp_ops", 64, x, 64 * 6);
        float[] want = new float[64 * 6];
        for (int t = 0; t < 64; t++) {
            int base = t - t % 32;
            int l = t % 32;
            int src;
            if (l < 16) {
                src = l + 1 >= 16 ? l : l + 1;            // down by 1 inside lanes 0-15
            } else {
                src = l - 2 < 16 ? l : l - 2;             // up by 2 inside lanes 16-31
            }
            want[t * 6] = x[base + src];
            want[t * 6 + 1] = x[base + 5];
            want[t * 6 + 2] = x[base + (l ^ 3)];
            int ballot = 0;
            for (int k = 0; k < 32; k++) {
                ballot |= x[base + k] > 0 ? 1 << k : 0;
            }
            want[t * 6 + 3] = ballot & 0xffff;
            want[t * 6 + 4] = ballot >>> 16;
            want[t * 6 + 5] = x[t];
        }
        assertArrayEquals(want, got, 0f);
    }

    /** simd_sum/max/min/broadcast/shuffle_down (dyadic inputs: every summation order gives the same bits). */
    @Test
    void metalSimdFunctionsFollowTheirDefinitions() {
        float[] x = new float[64];
        SplittableRandom rng = new SplittableRandom(4400);
        for (int i = 0; i < x.length; i++) {
            x[i] = (rng.nextInt(81) - 40) / 8f;
        }
        float[] got = run(metal(), "simd_ops", 64, x, 64 * 6);
        float[] want = new float[64 * 6];
        for (int t = 0; t < 64; t++) {
            int base = t - t % 32;
            int l = t % 32;
            float sum = 0;
            float max = Float.NEGATIVE_INFINITY;
            float min = Float.POSITIVE_INFINITY;
            for (int k = 0; k < 32; k++) {
                sum += x[base + k];
                max = Math.max(max, x[base + k]);
                min = Math.min(min, x[base + k]);
            }
            want[t * 6] = sum;
            want[t * 6 + 1] = max;
            want[t * 6 + 2] = min;
            want[t * 6 + 3] = x[base + 7];
            want[t * 6 + 4] = l + 3 < 32 ? x[t + 3] : x[t];
            want[t * 6 + 5] = t >= 32 ? sum : -1f;
        }
        assertArrayEquals(want, got, 0f);
    }

    /** The 1-based line of the first line of resource {@code name} containing {@code text}. */
    static int lineOf(String name, String text) {
        try (InputStream in = WarpSemanticsTest.class.getResourceAsStream("/emu-kernels/" + name)) {
            String[] lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                if (lines[i].contains(text)) {
                    return i + 1;
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        throw new IllegalStateException(name + " has no line containing " + text);
    }

    static NativeKernelException deadlock(EmuRunner runner, String kernel, int mode) {
        DeviceBuffer out = DeviceBuffer.output("out", 64);
        return assertThrows(NativeKernelException.class, () -> runner.run(List.of(new KernelLaunch(kernel,
                new int[] {1, 1, 1}, new int[] {64, 1, 1}, List.of(KernelArg.of(out), KernelArg.i32(mode))))));
    }

    static float[] completes(EmuRunner runner, String kernel, int mode) {
        DeviceBuffer out = DeviceBuffer.output("out", 64);
        runner.run(List.of(new KernelLaunch(kernel, new int[] {1, 1, 1}, new int[] {64, 1, 1},
                List.of(KernelArg.of(out), KernelArg.i32(mode)))));
        return out.floats();
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aWarpSkippingABarrierTheOthersReachIsANamedDeadlockOnCuda() {
        int first = lineOf("fidelity.cu", "if (!(mode == 0 && w == 1)) __syncthreads();");
        int second = first + 2;
        NativeKernelException e = deadlock(cuda(), "deadlocks", 0);
        assertEquals("EMU_DEADLOCK", e.errorName(), e.getMessage());
        assertTrue(e.getMessage().contains("deadlock in kernel deadlocks, block (0,0,0): threads 0-31 wait at "
                + "__syncthreads at line " + first + " (generation 0); threads 32-63 wait at __syncthreads at line "
                + second + " (generation 0)"), e.getMessage());
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aWarpThatReturnedDropsOutOfTheBarrierOnCuda() {
        float[] out = completes(cuda(), "deadlocks", 1);
        float[] want = new float[64];
        for (int t = 0; t < 32; t++) {
            want[t] = t;
        }
        assertArrayEquals(want, out, 0f);
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aShuffleALaneOfItsMaskNeverReachesIsANamedDeadlock() {
        int shuffle = lineOf("fidelity.cu", "if (mode == 2) out[t] = __shfl_xor_sync");
        NativeKernelException exited = deadlock(cuda(), "deadlocks", 2);
        assertEquals("EMU_DEADLOCK", exited.errorName(), exited.getMessage());
        assertTrue(exited.getMessage().contains("__shfl_xor_sync at line " + shuffle + " of thread 0 can never "
                + "complete: lane 5 (thread 5) of its mask has exited"), exited.getMessage());
        int barrier = lineOf("fidelity.cu", "if (lane == 3) {") + 1;
        NativeKernelException atBarrier = deadlock(cuda(), "deadlocks", 3);
        assertEquals("EMU_DEADLOCK", atBarrier.errorName(), atBarrier.getMessage());
        assertTrue(atBarrier.getMessage().contains("can never complete: lane 3 (thread 3) of its mask waits at "
                + "__syncthreads at line " + barrier), atBarrier.getMessage());
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aSimdGroupSkippingABarrierIsANamedDeadlockOnMetal() {
        int first = lineOf("fidelity.metal", "if (!(mode == 0 && w == 1)) threadgroup_barrier");
        NativeKernelException e = deadlock(metal(), "barrier_skipped", 0);
        assertEquals("EMU_DEADLOCK", e.errorName(), e.getMessage());
        assertTrue(e.getMessage().contains("deadlock in kernel barrier_skipped, block (0,0,0): threads 0-31 wait at "
                + "threadgroup_barrier at line " + first + " (generation 0); threads 32-63 wait at "
                + "threadgroup_barrier at line " + (first + 2) + " (generation 0)"), e.getMessage());
        float[] out = completes(metal(), "barrier_skipped", 1);
        float[] want = new float[64];
        for (int t = 0; t < 32; t++) {
            want[t] = t;
        }
        assertArrayEquals(want, out, 0f);
    }

    /**
     * Warp operations the device leaves undefined fail by name (EMU_WARP_MISUSE), with the call's line: a mask that
     * does not name the calling lane, a width that is not a power of two, a read of a lane outside the mask. Control:
     * the same shuffle with every lane in its mask is defined and gives each lane its partner's value.
     */
    @Test
    @Claim("N4")
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void warpOperationsTheDeviceLeavesUndefinedAreNamed(Evidence ev) {
        Evidence e = ev.backend("cuda-emu");
        e.seed(0);
        String[] paths = {"mask without the calling lane", "width not a power of two", "lane outside the mask"};
        String[] expected = {
            "__shfl_xor_sync at line " + lineOf("fidelity.cu", "if (mode == 0) v = __shfl_xor_sync")
                + " with mask 0xfffffffe: the mask does not name the calling lane 0 in kernel warp_misuse, block "
                + "(0,0,0) thread 0",
            "__shfl_xor_sync at line " + lineOf("fidelity.cu", "if (mode == 1) v = __shfl_xor_sync")
                + " with width 3: the width must be a power of two from 1 to 32 in kernel warp_misuse, block (0,0,0) "
                + "thread 0",
            "__shfl_xor_sync at line " + lineOf("fidelity.cu", "if (mode == 2 && t < 16) v = __shfl_xor_sync")
                + ": lane 0 (thread 0) reads lane 16, which does not take part (lanes 0x0000ffff): the device leaves "
                + "that value undefined in kernel warp_misuse"};
        long named = 0;
        for (int mode = 0; mode < 3; mode++) {
            NativeKernelException x = warpMisuse(mode, DeviceBuffer.output("out", 32));
            String m = x == null ? "(no fault)" : x.getMessage();
            long once = x != null && "EMU_WARP_MISUSE".equals(x.errorName()) && m.contains(expected[mode]) ? 1 : 0;
            e.checkEqual("misuses_named[" + paths[mode] + "]", once, 1);
            named += once;
            assertEquals(1, once, "mode " + mode + ": " + m);
        }
        DeviceBuffer out = DeviceBuffer.output("out", 32);
        NativeKernelException legal = warpMisuse(3, out);
        e.checkEqual("misuses_named[every lane in the mask]", legal == null ? 0 : 1, 0);
        float[] partner = new float[32];
        for (int t = 0; t < 32; t++) {
            partner[t] = t ^ 1;
        }
        e.checkBitIdentical("bits_differing_from_the_partner_lanes[every lane in the mask]",
                legal == null ? Diff.bitsDiffering(partner, out.floats()) : 32);
        e.controlAtLeast("misuses_named[undefined calls]", named, 1);
        assertEquals(null, legal, "a full mask");
    }

    static NativeKernelException warpMisuse(int mode, DeviceBuffer out) {
        try {
            cuda().run(List.of(new KernelLaunch("warp_misuse", new int[] {1, 1, 1}, new int[] {32, 1, 1},
                    List.of(KernelArg.of(out), KernelArg.i32(mode)))));
            return null;
        } catch (NativeKernelException x) {
            return x;
        }
    }
}
