package io.attnproof.attention.backend;

import io.attnproof.attention.sinks.MaskNeverDroppedTest;
import io.attnproof.attention.sinks.SinksRun;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.oracles.Precision;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * N1 on one emulated lane: every kernel of the lane's source runs on the inputs of the lane's claim tests (the fused
 * cases of S1 and U8, the S7 envelope, the packed sequences of S6, the masked unfused calls of S1/S2, the union
 * shapes of U5, and GQA of 16/2 and 64/8 heads on the fused, varlen and split-K kernels) with the shim's race checker
 * on, and the checker's totals per kernel are the evidence: races = 0, after degeneracy lines showing that each kernel ran and that the shared-memory kernels had their accesses checked.
 * The control is the shim's own probe kernel, whose threads read a neighbour's shared element with and without a
 * barrier: without it the checker must report races (and name the kernel, array, element, threads and block).
 *
 * <p>The claim tests of the lane run with the checker on as well: a race in any of them fails that test with
 * {@code EMU_SHARED_MEMORY_RACE}; this test adds the per-kernel count.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RaceClaims {
    /** The emulated lane under test. */
    abstract Backend lane();

    @BeforeAll
    void probeTheLane() {
        Lanes.probe(lane(), getClass(), List.of("N1"));
    }

    EmuRunner runner() {
        return NativeFaultsTest.runner(lane());
    }

    NativeSinks.Dialect dialect() {
        return lane() instanceof MetalEmu ? NativeSinks.Dialect.METAL : NativeSinks.Dialect.CUDA;
    }

    Device device() {
        return lane().device();
    }

    Tensor on(double[][][][] x) {
        return SinksRun.tensor(x, DType.F32, device());
    }

    /** Runs {@code call}; a race fails the launch, and the checker's totals (read afterwards) count it. */
    static int racesThrown(Runnable call) {
        try {
            call.run();
            return 0;
        } catch (NativeKernelException e) {
            if (!e.errorName().equals("EMU_SHARED_MEMORY_RACE")) {
                throw e;
            }
            return 1;
        }
    }

    /** Every kernel on the claim inputs; returns the number of calls a race failed. */
    int runTheClaimInputs() {
        int failed = 0;
        Backend lane = lane();
        // S1 / U8: the fused cases (tile boundaries, windows, t_q > t_k, decode) and, for each, the unfused path.
        // (The S1 cases that add nothing for races, {24, 40, 0} and {24, 40, 3}, are left out: the same tiles.)
        int[][] fused = {{1, 40, 0}, {24, 40, 16}, {41, 41, 7}, {17, 50, 32}, {12, 5, 2}};
        for (int[] c : fused) {
            SinksInputs in = SinksInputs.generate(310L + 7L * c[0] + c[1] + c[2], 2, 6, 2, c[0], c[1], 64,
                    Precision.F32, 2.0);
            Tensor q = on(in.q());
            Tensor k = on(in.k());
            Tensor v = on(in.v());
            Tensor s = SinksRun.sinks(in.sinks(), device());
            failed += racesThrown(() -> lane.flashAttnSinks(q, k, v, s, null, c[2]));
            if (c[0] == 24 && c[2] == 16) {
                // The unfused kernels (no shared memory: their lines show 0 accesses checked) on one of them.
                failed += racesThrown(() -> lane.sinksAttnUnfused(q, k, v, s, null, c[2]));
            }
        }
        // S7: every head dim of the fused envelope.
        for (int d : new LaneClaimsEnvelope(lane).dims()) {
            SinksInputs in = SinksInputs.generate(710L + d, 1, 2, 1, 9, 20, d, Precision.F32, 2.0);
            failed += racesThrown(() -> lane.flashAttnSinks(on(in.q()), on(in.k()), on(in.v()),
                    SinksRun.sinks(in.sinks(), device()), null, 5));
        }
        // S6: packed ragged sequences (idle, decode and prefill rows) through the varlen kernel, windows 0 and 3.
        int[][] sequences = {{5, 8}, {1, 6}, {7, 7}, {0, 4}, {4, 11}, {9, 40}};
        for (int window : new int[] {0, 3}) {
            Packed p = Packed.of(600L + window, sequences, 4, 2, 16, device());
            failed += racesThrown(() -> lane.sinksAttnVarlen(p.q(), p.k(), p.v(), p.sinks(), p.cuQ(), p.cuK(),
                    window));
        }
        // S1 / S2: a masked call (document mask) through the unfused kernels; U8: softmax_with_sinks alone.
        SinksInputs masked = SinksInputs.generate(9103, 2, 8, 2, 24, 40, 64, Precision.F32, 2.0);
        double[][][][] doc = MaskNeverDroppedTest.documentMask(2);
        failed += racesThrown(() -> SinksRun.sinksAttn(lane, masked, DType.F32, device(), doc, 16));
        SplittableRandom rng = Streams.named(81, "logits");
        float[] logits = new float[2 * 3 * 4 * 9];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (2 * rng.nextGaussian());
        }
        failed += racesThrown(() -> lane.softmaxWithSinks(Tensor.of(logits, DType.F32, device(), 2, 3, 4, 9),
                Tensor.of(new float[] {0.5f, -1.25f, 2f}, DType.F32, device(), 3), null));
        // B5: split-K decodes (the sinks decode with a window whose start lies inside a chunk, and the union decode
        // with its mask through attendMasked), last chunks of 1 and of a full chunk's keys.
        for (int tk : new int[] {1025, 1280}) {
            SinksInputs in = SinksInputs.generate(1500L + tk, 1, 2, 1, 1, tk, 64, Precision.F32, 2.0);
            failed += racesThrown(() -> lane.flashAttnSinks(on(in.q()), on(in.k()), on(in.v()),
                    SinksRun.sinks(in.sinks(), device()), null, tk - 300));
            float[] mask = new float[tk];
            for (int c = 250; c < 262; c++) {
                mask[c] = Float.NEGATIVE_INFINITY;
            }
            failed += racesThrown(() -> lane.attendMasked(on(in.q()), on(in.k()), on(in.v()),
                    Tensor.of(mask, DType.F32, device(), 1, 1, 1, tk), null));
        }
        // GQA of several KV heads (Hq / Hkv = 16 / 2 and 64 / 8): the fused prefill, the varlen kernel on one packed
        // sequence and the split-K decode (1030 keys: five chunks).
        for (int[] g : new int[][] {{16, 2}, {64, 8}}) {
            SinksInputs pre = SinksInputs.generate(2700L + g[0], 1, g[0], g[1], 9, 24, 64, Precision.F32, 2.0);
            Tensor s = SinksRun.sinks(pre.sinks(), device());
            failed += racesThrown(() -> lane.flashAttnSinks(on(pre.q()), on(pre.k()), on(pre.v()), s, null, 0));
            failed += racesThrown(() -> lane.sinksAttnVarlen(packed(pre.q()), packed(pre.k()), packed(pre.v()), s,
                    new int[] {0, 9}, new int[] {0, 24}, 3));
            SinksInputs dec = SinksInputs.generate(2800L + g[0], 1, g[0], g[1], 1, 1030, 64, Precision.F32, 2.0);
            failed += racesThrown(() -> lane.flashAttnSinks(on(dec.q()), on(dec.k()), on(dec.v()),
                    SinksRun.sinks(dec.sinks(), device()), null, 0));
        }
        return failed;
    }

    /** {@code [1, H, T, D]} as one packed sequence {@code [T, H, D]}. */
    Tensor packed(double[][][][] x) {
        int h = x[0].length;
        int t = x[0][0].length;
        int d = x[0][0][0].length;
        float[] out = new float[t * h * d];
        for (int j = 0; j < h; j++) {
            for (int r = 0; r < t; r++) {
                for (int c = 0; c < d; c++) {
                    out[(r * h + j) * d + c] = (float) x[0][j][r][c];
                }
            }
        }
        return Tensor.of(out, DType.F32, device(), t, h, d);
    }

    @Test
    @Claim("N1")
    void everyKernelIsRaceFreeOnTheClaimInputs(Evidence ev) {
        Lanes.assumeAvailable(lane());
        Evidence e = ev.backend(lane().name());
        e.seed(310);
        NativeSinks.Dialect d = dialect();
        List<String> kernels = List.of(d.fused, d.varlen, d.scores, d.softmax, d.pv, d.splitPartial, d.splitReduce);
        Map<String, EmuRunner.RaceStats> before = new LinkedHashMap<>();
        for (String k : kernels) {
            before.put(k, runner().races(k));
        }
        int failedCalls = runTheClaimInputs();
        for (String k : kernels) {
            EmuRunner.RaceStats a = runner().races(k);
            EmuRunner.RaceStats b = before.get(k);
            long launches = a.launches() - b.launches();
            long accesses = a.sharedAccesses() - b.sharedAccesses();
            long races = a.races() - b.races();
            e.degeneracy("launched[" + k + "]", launches, Comparison.GT, 0, launches + " launches");
            if (k.equals(d.fused) || k.equals(d.varlen) || k.equals(d.splitPartial)) {
                e.degeneracy("shared_accesses_checked[" + k + "]", accesses, Comparison.GT, 0,
                        accesses + " shared-memory reads and writes checked");
            } else {
                e.info("shared_accesses_checked[" + k + "]", accesses);
            }
            e.checkEqual("races[" + k + "]" + (races > 0 ? " first: " + a.firstReport() : ""), races, 0);
        }
        e.checkEqual("calls_failed_by_a_race", failedCalls, 0);
    }

    @Test
    @Claim("N1")
    void theCheckerReportsARaceWhereABarrierIsMissing(Evidence ev) {
        Lanes.assumeAvailable(lane());
        Evidence e = ev.backend(lane().name());
        e.seed(1);
        int threads = 64;
        int blocks = 3;
        // With the barrier: every thread reads its neighbour's element after it was written; no race.
        DeviceBuffer withBarrier = DeviceBuffer.input("out", new int[threads * blocks]);
        EmuRunner.RaceStats start = runner().races("attnproof_race_probe");
        runner().run(List.of(new KernelLaunch("attnproof_race_probe", new int[] {blocks, 1, 1},
                new int[] {threads, 1, 1}, List.of(KernelArg.of(withBarrier), KernelArg.i32(1)))));
        EmuRunner.RaceStats mid = runner().races("attnproof_race_probe");
        e.checkEqual("races_reported_with_the_barrier", mid.races() - start.races(), 0);
        // Without it: the read of a neighbour's element is a race in every block.
        DeviceBuffer without = DeviceBuffer.input("out", new int[threads * blocks]);
        NativeKernelException x = null;
        try {
            runner().run(List.of(new KernelLaunch("attnproof_race_probe", new int[] {blocks, 1, 1},
                    new int[] {threads, 1, 1}, List.of(KernelArg.of(without), KernelArg.i32(0)))));
        } catch (NativeKernelException thrown) {
            x = thrown;
        }
        EmuRunner.RaceStats end = runner().races("attnproof_race_probe");
        e.controlAtLeast("races_reported_without_the_barrier", end.races() - mid.races(), 1);
        // Exactly one per thread: thread t's write of sh[t] follows thread t - 1's read of it (write after read),
        // and thread 0's write precedes thread 63's read of sh[0] (read after write): 64 per block. A checker that
        // stopped recording reads would report none.
        e.checkEqual("races_reported_without_the_barrier_vs_one_per_thread", end.races() - mid.races(),
                (long) threads * blocks);
        String message = x == null ? "" : x.getMessage();
        long missing = 0;
        for (String field : new String[] {"EMU_SHARED_MEMORY_RACE", "kernel attnproof_race_probe", "block (",
            "sh[", "by thread ", "no barrier between them"}) {
            missing += message.contains(field) ? 0 : 1;
        }
        e.checkEqual("race_report_fields_missing (" + message + ")", missing, 0);
    }

    /** Packed rows {@code [total, H, D]} of ragged sequences (q_len, kv_len), each from its own stream. */
    record Packed(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuQ, int[] cuK) {
        static Packed of(long seed, int[][] sequences, int hq, int hkv, int d, Device device) {
            int[] cuQ = new int[sequences.length + 1];
            int[] cuK = new int[sequences.length + 1];
            for (int i = 0; i < sequences.length; i++) {
                cuQ[i + 1] = cuQ[i] + sequences[i][0];
                cuK[i + 1] = cuK[i] + sequences[i][1];
            }
            SplittableRandom rng = Streams.named(seed, "packed");
            float[] q = new float[cuQ[sequences.length] * hq * d];
            float[] k = new float[cuK[sequences.length] * hkv * d];
            float[] v = new float[k.length];
            float[] s = new float[hq];
            for (float[] a : new float[][] {q, k, v, s}) {
                for (int i = 0; i < a.length; i++) {
                    a[i] = (float) rng.nextGaussian();
                }
            }
            return new Packed(Tensor.of(q, DType.F32, device, cuQ[sequences.length], hq, d),
                    Tensor.of(k, DType.F32, device, cuK[sequences.length], hkv, d),
                    Tensor.of(v, DType.F32, device, cuK[sequences.length], hkv, d),
                    Tensor.of(s, DType.F32, device, hq), cuQ, cuK);
        }
    }

    /** The head dims of the lane's fused envelope (as LaneClaims#envelope states them). */
    record LaneClaimsEnvelope(Backend lane) {
        List<Integer> dims() {
            List<Integer> dims = new ArrayList<>(new java.util.TreeSet<>(
                    io.attnproof.attention.dispatch.SinksDispatch.FUSED_HEAD_DIMS));
            if (lane.dispatchKind(lane.device()) != Device.Kind.METAL) {
                dims.add(io.attnproof.attention.dispatch.SinksDispatch.FLASH_512_HEAD_DIM);
            }
            return dims;
        }
    }
}
