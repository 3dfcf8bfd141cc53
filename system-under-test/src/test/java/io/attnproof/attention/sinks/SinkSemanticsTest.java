package io.attnproof.attention.sinks;

import io.attnproof.attention.engine.SoftmaxWithSinks;

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
import io.attnproof.fixtures.evidence.Worst;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinkSoftmax;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * U8: the sink sits in the denominator only; a fully masked row gives zeros; a -inf sink equals no sink; the two
 * oracle forms (extra logit column, closed form) agree.
 */
@Claim("U8")
class SinkSemanticsTest {
    static final long SEED = 81;
    static final int B = 2;
    static final int H = 3;
    static final int Q = 4;
    static final int K = 9;

    @Test
    void softmaxWithSinksMatchesBothOracleForms(Evidence ev) {
        ev.seed(SEED);
        SplittableRandom rng = Streams.named(SEED, "logits");
        float[] logits = new float[B * H * Q * K];
        float[] mask = new float[Q * K];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (2 * rng.nextGaussian());
        }
        for (int i = 0; i < mask.length; i++) {
            mask[i] = rng.nextDouble() < 0.3 ? Float.NEGATIVE_INFINITY : 0f;
        }
        float[] sinks = {0.5f, -1.25f, 2f};
        Tensor y = SoftmaxWithSinks.apply(Tensor.of(logits, DType.F32, Device.CPU, B, H, Q, K),
                Tensor.of(sinks, DType.F32, Device.CPU, H), Tensor.of(mask, DType.F32, Device.CPU, 1, 1, Q, K));
        double worstErr = 0;
        double formsGap = 0;
        double sinkShareMax = 0;
        double plainGap = 0;
        Worst worst = null;
        for (int b = 0; b < B; b++) {
            for (int h = 0; h < H; h++) {
                for (int r = 0; r < Q; r++) {
                    double[] x = new double[K];
                    for (int c = 0; c < K; c++) {
                        x[c] = logits[((b * H + h) * Q + r) * K + c] + (double) mask[r * K + c];
                    }
                    double[] closed = SinkSoftmax.closedForm(x, sinks[h]);
                    double[] extra = SinkSoftmax.extraColumn(x, sinks[h]);
                    double[] plain = SinkSoftmax.closedForm(x, Double.NEGATIVE_INFINITY);
                    double mass = 0;
                    for (int c = 0; c < K; c++) {
                        double got = y.get(b, h, r, c);
                        double err = Math.abs(got - closed[c]);
                        if (err > worstErr) {
                            worstErr = err;
                            worst = new Worst(b, h, r, c);
                        }
                        formsGap = Math.max(formsGap, Math.abs(closed[c] - extra[c]));
                        plainGap = Math.max(plainGap, Math.abs(got - plain[c]));
                        mass += got;
                    }
                    sinkShareMax = Math.max(sinkShareMax, 1 - mass);
                    assertTrue(mass < 1, "the sink takes mass: probabilities sum below 1 in row " + r);
                }
            }
        }
        ev.check("oracle_forms_gap", formsGap, 1e-15, null);
        ev.check("max_abs_err", worstErr, Tolerance.fallbackLimit(Precision.F32, 1.0), worst);
        // The sink takes real mass somewhere: otherwise dropping it could not show.
        ev.degeneracy("sink_takes_real_mass", sinkShareMax > 0.05, "max sink share " + sinkShareMax);
        // Bar: the claim's tolerance limit for these probabilities (and no less than a 1e-2 signal).
        ev.controlGap("softmax_without_sink", plainGap, Math.max(1e-2, Tolerance.fallbackLimit(Precision.F32, 1.0)));
    }

    @Test
    void aFullyMaskedRowGivesZerosNeverNaN(Evidence ev) {
        float[] logits = {1f, 2f, 3f, 4f, 5f, 6f};
        float[] mask = new float[6];
        Arrays.fill(mask, 0, 3, Float.NEGATIVE_INFINITY);
        for (float sink : new float[] {0.3f, Float.NEGATIVE_INFINITY}) {
            Tensor y = SoftmaxWithSinks.apply(Tensor.of(logits, DType.F32, Device.CPU, 1, 1, 2, 3),
                    Tensor.of(new float[] {sink}, DType.F32, Device.CPU, 1),
                    Tensor.of(mask, DType.F32, Device.CPU, 1, 1, 2, 3));
            long bad = 0;
            for (int c = 0; c < 3; c++) {
                bad += Float.floatToRawIntBits(y.get(0, 0, 0, c)) == 0 ? 0 : 1;
            }
            ev.checkBitIdentical("nonzero_or_nan_in_masked_row_sink_" + sink, bad);
            ev.degeneracy("unmasked_row_has_mass", y.get(0, 0, 1, 2) > 0.1f, "row 1 is live");
        }
        // The same through dsv4_attention: a caller mask that kills every key of one row.
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 2, 12, 3, 8, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(SEED);
        int keys = 12 + 3; // t_k_full + t_c: the caller mask reaches the compressed columns too
        float[] caller = new float[2 * keys];
        Arrays.fill(caller, 0, keys, Float.NEGATIVE_INFINITY);
        Tensor out = UnionRun.run(spec, in, in.sinks(), Tensor.of(caller, DType.F32, Device.CPU, 2, keys));
        long bad = 0;
        for (int h = 0; h < 2; h++) {
            for (int d = 0; d < 8; d++) {
                bad += Float.floatToRawIntBits(out.get(0, h, 0, d)) == 0 ? 0 : 1;
            }
        }
        ev.checkBitIdentical("nonzero_or_nan_in_masked_dsv4_row", bad);
    }

    @Test
    void aMinusInfinitySinkEqualsNoSink(Evidence ev) {
        ev.seed(SEED);
        UnionRun.Spec spec = new UnionRun.Spec(2, 3, 5, 30, 7, 8, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(SEED);
        Tensor noSink = UnionRun.run(spec, in, null, null);
        double[] minusInf = new double[H];
        Arrays.fill(minusInf, Double.NEGATIVE_INFINITY);
        // softmax_with_sinks takes -inf as "no sink": rows of logits through it equal the sinkless attention rows.
        Tensor logits = Tensor.of(new float[] {0.5f, -2f, 1f}, DType.F32, Device.CPU, 1, 1, 1, 3);
        Tensor a = SoftmaxWithSinks.apply(logits, Tensor.of(new float[] {Float.NEGATIVE_INFINITY}, DType.F32,
                Device.CPU, 1), null);
        double[] plain = SinkSoftmax.closedForm(new double[] {0.5, -2, 1}, Double.NEGATIVE_INFINITY);
        double err = 0;
        for (int c = 0; c < 3; c++) {
            err = Math.max(err, Math.abs(a.get(0, 0, 0, c) - plain[c]));
        }
        ev.check("max_abs_err_minus_inf_sink_vs_plain_softmax", err, Tolerance.fallbackLimit(Precision.F32, 1.0), null);
        UnionRun run = UnionRun.of(spec, in, null, null, null);
        ev.check("max_abs_err_dsv4_no_sink_vs_oracle", run.diff().maxAbs(), run.limit(), run.diff().worst());
        double[][][][] oracleMinusInf = io.attnproof.oracles.UnionAttentionOracle.attend(
                new io.attnproof.oracles.UnionProblem(in.q(), in.k(), in.v(), in.compressed(), minusInf, null,
                        spec.window(), spec.ratio().value(), 0));
        ev.check("max_abs_err_dsv4_no_sink_vs_oracle_minus_inf_sink",
                Diff.of(oracleMinusInf, Tensors.toArray4(noSink)).maxAbs(), run.limit(), null);
        UnionRun withSink = UnionRun.of(spec, in, in.sinks(), null, null);
        ev.controlGap("finite_sink_changes_output", Diff.of(withSink.actual(), Tensors.toArray4(noSink)).maxAbs(),
                Math.max(1e-2, withSink.limit()));
    }

    @Test
    void nanAndPlusInfinitySinksAreRefused() {
        Tensor logits = Tensor.zeros(DType.F32, Device.CPU, 1, 2, 1, 3);
        for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SoftmaxWithSinks.apply(
                    logits, Tensor.of(new float[] {0f, bad}, DType.F32, Device.CPU, 2), null));
            assertTrue(e.getMessage().startsWith("sinks[1] = " + bad + ": must be finite"), e.getMessage());
        }
        IllegalArgumentException shape = assertThrows(IllegalArgumentException.class, () -> SoftmaxWithSinks.apply(
                logits, Tensor.zeros(DType.F32, Device.CPU, 3), null));
        assertTrue(shape.getMessage().startsWith("sinks.shape = [3]: must be [2]"), shape.getMessage());
    }
}
