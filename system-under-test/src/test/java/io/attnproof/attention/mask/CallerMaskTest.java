package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** U4: caller-mask composition follows docs/system.md §4.6, with a clear error for every other shape. */
@Claim("U4")
class CallerMaskTest {
    static final long SEED = 41;
    // B=2, H=2, t_q=3, t_k=20, W=8, R=4: keep = 10, base = 10, t_c = 5.
    static final UnionRun.Spec SPEC = new UnionRun.Spec(2, 2, 3, 20, 5, 8, 8, CompressRatio.CSA, 0, Precision.F32);
    static final int TK_FULL = 20;
    static final int TC = 5;

    /** Shapes {@code [mb, mh, mq, keyAxis]}; rank 2 when mb = mh = 0. */
    @ParameterizedTest(name = "[{0},{1},{2},{3}]")
    @CsvSource({"0,0,3,20", "0,0,3,25", "0,0,1,20", "2,1,3,25", "1,2,1,20", "2,2,3,20", "1,1,3,25"})
    void composedMaskMatchesTheOracle(int mb, int mh, int mq, int keys, Evidence ev) {
        ev.seed(SEED);
        UnionInputs in = SPEC.inputs(SEED);
        double[][][][] m = callerMask(SEED, Math.max(mb, 1), Math.max(mh, 1), mq, keys);
        Tensor caller = mb == 0 ? toTensor2(m[0][0]) : Tensors.of4(m, DType.F32);
        // The oracle is fed per-head planes, so run one head-plane at a time where the mask varies by head.
        for (int h = 0; h < Math.max(mh, 1); h++) {
            UnionRun run = UnionRun.of(SPEC, in, in.sinks(), caller, oracleMask(m, h, keys));
            double[][][][] onlyHead = keepHead(run, h, mh);
            Diff diff = Diff.of(keepHead(run.oracle(), h, mh), onlyHead);
            ev.check("max_abs_err", diff.maxAbs(), run.limit(), diff.worst());
            if (h == 0) {
                UnionRun unmasked = UnionRun.of(SPEC, in, in.sinks(), null, null);
                ev.controlGap("caller_mask_dropped", Diff.of(run.oracle(), unmasked.actual()).maxAbs(),
                        Math.max(1e-2, run.limit()));
            }
        }
    }

    @Test
    void singleElementPlaceholderIsIgnored(Evidence ev) {
        ev.seed(SEED);
        UnionInputs in = SPEC.inputs(SEED);
        Tensor placeholder = Tensor.of(new float[] {Float.NEGATIVE_INFINITY}, DType.F32, Device.CPU, 1, 1);
        Tensor with = UnionRun.run(SPEC, in, in.sinks(), placeholder);
        Tensor without = UnionRun.run(SPEC, in, in.sinks(), null);
        ev.checkBitIdentical("bits_placeholder_vs_none", Diff.bitsDiffering(with.toFloatArray(), without.toFloatArray()));
    }

    /** -inf wins: a caller's large finite bias on keys the union rule rejects never re-admits them. */
    @Test
    void localMinusInfinityWins(Evidence ev) {
        ev.seed(SEED);
        UnionInputs in = SPEC.inputs(SEED);
        double[][][][] m = new double[1][1][3][TK_FULL + TC];
        for (double[] row : m[0][0]) {
            java.util.Arrays.fill(row, 50.0);
        }
        UnionRun run = UnionRun.of(SPEC, in, in.sinks(), Tensors.of4(m, DType.F32), m[0]);
        ev.check("max_abs_err", run.diff().maxAbs(), run.limit(), run.diff().worst());
        UnionRun plain = UnionRun.of(SPEC, in, in.sinks(), null, null);
        // A uniform bias over admitted keys cancels in the softmax except against the sink: the output moves.
        ev.controlGap("bias_reaches_admitted_keys", Diff.of(plain.actual(), run.actual()).maxAbs(),
                Math.max(1e-3, run.limit()));
    }

    @Test
    void everyOtherShapeIsRefusedWithAClearError(Evidence ev) {
        UnionInputs in = SPEC.inputs(SEED);
        record Bad(int[] shape, String mustName) {
        }
        Bad[] cases = {
            new Bad(new int[] {3, TK_FULL, 1}, "mask.rank = 3"),
            new Bad(new int[] {5}, "mask.rank = 1"),
            new Bad(new int[] {2, TK_FULL}, "mask query axis = 2"),
            new Bad(new int[] {3, TK_FULL + 1}, "mask key axis = 21"),
            new Bad(new int[] {3, TK_FULL - 1}, "mask key axis = 19"),
            new Bad(new int[] {3, 2, 1, 3, TK_FULL}, "mask.rank = 5"),
            new Bad(new int[] {3, 1, 3, TK_FULL}, "mask.shape[0] = 3"),
            new Bad(new int[] {1, 3, 3, TK_FULL}, "mask.shape[1] = 3"),
        };
        long unclear = 0;
        for (Bad bad : cases) {
            Tensor mask = Tensor.zeros(DType.F32, Device.CPU, bad.shape());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> UnionRun.run(SPEC, in, in.sinks(), mask));
            if (!e.getMessage().contains(bad.mustName()) || !e.getMessage().contains("must")) {
                unclear++;
                System.err.println("unclear refusal: " + e.getMessage() + " (wanted " + bad.mustName() + ")");
            }
        }
        Tensor nan = Tensor.zeros(DType.F32, Device.CPU, 3, TK_FULL);
        nan.set(Float.NaN, 1, 15);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UnionRun.run(SPEC, in, in.sinks(), nan));
        assertTrue(e.getMessage().contains("NaN"), e.getMessage());
        ev.checkBitIdentical("refusals_without_param_value_rule", unclear);
    }

    static double[][][][] callerMask(long seed, int mb, int mh, int mq, int keys) {
        SplittableRandom rng = Streams.named(seed, "caller-mask");
        double[][][][] m = new double[mb][mh][mq][keys];
        for (double[][][] b : m) {
            for (double[][] h : b) {
                for (double[] row : h) {
                    for (int c = 0; c < keys; c++) {
                        row[c] = rng.nextDouble() < 0.25 ? Double.NEGATIVE_INFINITY : (float) rng.nextGaussian();
                    }
                }
            }
        }
        return m;
    }

    /** The caller mask in the oracle's absolute form {@code [B|1][tq|1][tkFull + tc]}, for head plane {@code h}. */
    static double[][][] oracleMask(double[][][][] m, int h, int keys) {
        double[][][] out = new double[m.length][][];
        for (int b = 0; b < m.length; b++) {
            double[][] plane = m[b][m[b].length == 1 ? 0 : h];
            out[b] = new double[plane.length][TK_FULL + TC];
            for (int r = 0; r < plane.length; r++) {
                System.arraycopy(plane[r], 0, out[b][r], 0, keys); // raw-only masks leave the blocks at 0
            }
        }
        return out;
    }

    private static Tensor toTensor2(double[][] plane) {
        float[] flat = new float[plane.length * plane[0].length];
        for (int r = 0; r < plane.length; r++) {
            for (int c = 0; c < plane[r].length; c++) {
                flat[r * plane[r].length + c] = (float) plane[r][c];
            }
        }
        return Tensor.of(flat, DType.F32, Device.CPU, plane.length, plane[0].length);
    }

    /** The output with every head but {@code h} zeroed when the mask varies by head (mh > 1). */
    private static double[][][][] keepHead(UnionRun run, int h, int mh) {
        return keepHead(run.actual(), h, mh);
    }

    private static double[][][][] keepHead(double[][][][] out, int h, int mh) {
        if (mh <= 1) {
            return out;
        }
        double[][][][] copy = new double[out.length][out[0].length][][];
        for (int b = 0; b < out.length; b++) {
            for (int hh = 0; hh < out[b].length; hh++) {
                copy[b][hh] = hh == h ? out[b][hh] : new double[out[b][hh].length][out[b][hh][0].length];
            }
        }
        return copy;
    }
}
