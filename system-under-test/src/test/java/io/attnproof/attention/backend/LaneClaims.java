package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.UnionOracleTest;
import io.attnproof.attention.ragged.RaggedCohortTest;
import io.attnproof.attention.sinks.GptOssConfig;
import io.attnproof.attention.sinks.MaskNeverDroppedTest;
import io.attnproof.attention.dispatch.SinksArm;
import io.attnproof.attention.sinks.SinksAttention;
import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.sinks.SinksRun;
import io.attnproof.attention.sinks.VarlenFallbackTest;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.evidence.Worst;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.ragged.RaggedCohort;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.AdmitRules;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinkSoftmax;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The numeric claims U3, U5, U8, R1, S1, S2, S3, S6, S7, V1 and V3 on one lane, against the same fp64 oracles as the CPU claim
 * tests (computed once per JVM for all lanes), every line recorded under the lane's backend name. Each lane is a
 * subclass; an unavailable lane writes one {@code "skipped"} line per claim and its tests skip with the reason,
 * unless the lane is required here, in which case they fail with it.
 *
 * <p>Union attention (U5, U8, R1) runs dsv4_attention with its last stage on the lane: Java narrows, concatenates
 * and builds the union mask, and the lane's unfused masked kernels (scores + mask, softmax_with_sinks, P.V) do the
 * attention. Sinks attention (S1, S2, S6, S7) runs {@code sinks_attn}'s dispatch with every arm on the lane.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LaneClaims {
    static final List<String> CLAIMS = List.of("U3", "U5", "U8", "R1", "S1", "S2", "S3", "S6", "S7", "V1", "V3");

    /** The lane under test. */
    abstract Backend lane();

    @BeforeAll
    void probeTheLane() {
        Lanes.probe(lane(), getClass(), CLAIMS);
    }

    @BeforeEach
    void skipAnUnavailableLane() {
        Lanes.assumeAvailable(lane());
    }

    Evidence on(Evidence ev) {
        return ev.backend(lane().name());
    }

    /** The device this lane's tensors live on (the CPU lane's own tests cover CUDA- and Metal-labelled calls). */
    Device device() {
        return lane().device();
    }

    // ---------------------------------------------------------------------------------------------------- U5

    static Stream<Arguments> unionCases() {
        List<Arguments> out = new ArrayList<>();
        for (CompressRatio ratio : new CompressRatio[] {CompressRatio.CSA, CompressRatio.HCA}) {
            for (int tk : new int[] {127, 128, 129, 256, 512, 513}) {
                for (int tq : new int[] {1, Math.min(tk, 160)}) {
                    out.add(Arguments.of(ratio, tk, tq, Precision.F32));
                }
            }
            out.add(Arguments.of(ratio, 513, 160, Precision.F16));
            out.add(Arguments.of(ratio, 513, 160, Precision.BF16));
        }
        return out.stream();
    }

    /** One U5 case's inputs and fp64 answers (the claim, and the three controls), shared by all lanes. */
    record UnionCase(UnionInputs in, double[] sinks, UnionProblem problem, double[][][][] oracle, double naiveErr,
            double[][][][] dropBlock, double[][][][] noSink, double[][][][] wide,
            java.util.Map<String, double[][][][]> subtle) {
        static UnionCase of(UnionRun.Spec spec, long seed) {
            UnionInputs in = spec.inputs(seed);
            double[] sinks = UnionRun.heavySinks(in.sinks(), Math.min(spec.tq() + spec.window() - 1, spec.tk())
                    + spec.tc());
            UnionProblem p = new UnionProblem(in.q(), in.k(), in.v(), in.compressed(), sinks, null, spec.window(),
                    spec.ratio().value(), 0);
            double[][][][] oracle = UnionAttentionOracle.attend(p);
            double naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(p, spec.precision())).maxAbs();
            double[][][][] dropBlock = spec.tc() > 0
                    ? UnionAttentionOracle.attend(UnionOracleTest.withMaskOnBlock(p, 0)) : null;
            double[][][][] noSink = UnionAttentionOracle.attend(new UnionProblem(in.q(), in.k(), in.v(),
                    in.compressed(), null, null, spec.window(), spec.ratio().value(), 0));
            double[][][][] wide = spec.tk() > spec.window() ? UnionAttentionOracle.attend(new UnionProblem(in.q(),
                    in.k(), in.v(), in.compressed(), sinks, null, spec.window() + 1, spec.ratio().value(), 0)) : null;
            return new UnionCase(in, sinks, p, oracle, naive, dropBlock, noSink, wide,
                    UnionOracleTest.subtleControls(p));
        }
    }

    @ParameterizedTest(name = "{0} t_k = {1} t_q = {2} {3}")
    @MethodSource("unionCases")
    @Claim("U5")
    void unionOutputMatchesTheOracle(CompressRatio ratio, int tk, int tq, Precision precision, Evidence ev) {
        Evidence e = on(ev);
        long seed = 5000L + 7L * tk + tq + ratio.value();
        e.seed(seed);
        String label = "[" + ratio + " t_k=" + tk + " t_q=" + tq + " " + precision + "]";
        int w = UnionOracleTest.W;
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, tq, tk, tk / ratio.value(), 32, w, ratio, 0, precision);
        UnionCase c = Lanes.memo(List.of("U5", ratio, tk, tq, precision), () -> UnionCase.of(spec, seed));
        long lastThreshold = AdmitRules.compressedThreshold(tk - 1, ratio.value());
        e.degeneracy("some_block_admitted" + label, lastThreshold > 0 || spec.tc() == 0,
                "the last row admits " + lastThreshold + " blocks");
        double[][][][] actual = Tensors.toArray4(UnionRun.run(spec, c.in(), c.sinks(), null, lane()));
        Diff diff = Diff.of(c.oracle(), actual);
        double limit = Tolerance.limit(precision, c.naiveErr(), diff.oracleMaxAbs());
        e.check("max_abs_err" + label, diff.maxAbs(), limit, diff.worst());
        if (io.attnproof.attention.PrecisionTiers.tiered(precision)) {
            io.attnproof.attention.PrecisionTiers.check(e, "max_abs_err" + label, precision, diff,
                    io.attnproof.attention.PrecisionTiers.unionLimit(c.problem(), precision, c.oracle()));
        }
        if (c.dropBlock() != null && lastThreshold > 0) {
            e.controlGap("drop_a_block" + label, Diff.of(c.dropBlock(), actual).maxAbs(), limit);
        }
        e.controlGap("drop_the_sink" + label, Diff.of(c.noSink(), actual).maxAbs(), limit);
        if (c.wide() != null) {
            e.controlGap("window_plus_one" + label, Diff.of(c.wide(), actual).maxAbs(), limit);
        }
        for (java.util.Map.Entry<String, double[][][][]> control : c.subtle().entrySet()) {
            e.controlGap(control.getKey() + label, Diff.of(control.getValue(), actual).maxAbs(), limit);
        }
    }

    // ---------------------------------------------------------------------------------------------------- U3

    @ParameterizedTest(name = "t_q = {0}, t_k = {1}, W = {2}, {3}")
    @org.junit.jupiter.params.provider.CsvSource({"1,300,128,CSA", "7,300,128,STANDARD", "40,513,128,CSA",
        "3,50,8,HCA"})
    @Claim("U3")
    void narrowedEqualsWholeCacheOnTheLane(int tq, int tk, int window, CompressRatio ratio, Evidence ev) {
        Evidence e = on(ev);
        long seed = 31L * tq + tk;
        e.seed(seed);
        String label = "[" + ratio + " t_q=" + tq + " t_k=" + tk + "]";
        int tc = ratio == CompressRatio.STANDARD ? 0 : tk / ratio.value();
        UnionRun.Spec spec = new UnionRun.Spec(2, 3, tq, tk, tc, 16, window, ratio, 0, Precision.F32);
        UnionInputs in = spec.inputs(seed);
        long base = Math.max(0, tk - Math.min(tq + window - 1, tk));
        e.degeneracy("keys_cut_before_base" + label, base, io.attnproof.fixtures.evidence.Comparison.GT, 0,
                "base = " + base);
        float[] narrowed = UnionRun.run(spec, in, in.sinks(), null, lane()).toFloatArray();
        float[] whole = wholeCacheOnLane(spec, in, 0);
        e.checkBitIdentical("bits_narrowed_vs_whole_cache" + label, Diff.bitsDiffering(narrowed, whole));
        // Control: a span one key too short (from base + 1) loses a key row 0 admits; bar: the U5 limit here.
        double limit = UnionRun.of(spec, seed).limit();
        double[][][][] a = Tensors.toArray4(Tensor.of(narrowed, DType.F32, Device.CPU, 2, 3, tq, 16));
        double[][][][] b = Tensors.toArray4(Tensor.of(wholeCacheOnLane(spec, in, base + 1), DType.F32, Device.CPU, 2,
                3, tq, 16));
        e.controlGap("span_one_short" + label, Diff.of(a, b).maxAbs(), limit);
    }

    /** The lane's masked kernels over every raw key from {@code from} on (none narrowed), masked by the rule. */
    float[] wholeCacheOnLane(UnionRun.Spec spec, UnionInputs in, long from) {
        Tensor k = Tensors.kv(in.k(), spec.dtype());
        Tensor keys = k.narrow(2, (int) from, spec.tk() - (int) from);
        Tensor all = spec.tc() == 0 ? keys : Tensor.cat(2, keys, Tensors.kv(in.compressed(), spec.dtype()));
        int tc = all.dim(2) - keys.dim(2);
        long q0 = spec.tk() - spec.tq();
        io.attnproof.attention.mask.UnionMask mask = new io.attnproof.attention.mask.UnionMask(q0, spec.tq(), from,
                keys.dim(2), spec.window(), tc, spec.ratio().value());
        float[] sinks = new float[in.sinks().length];
        for (int h = 0; h < sinks.length; h++) {
            sinks[h] = (float) in.sinks()[h];
        }
        Tensor q = Tensors.of4(in.q(), spec.dtype());
        Tensor m = mask.materialize(spec.dtype(), Device.CPU);
        return lane().attendMasked(onLane(q), onLane(all), onLane(all), onLane(m), sinks);
    }

    Tensor onLane(Tensor t) {
        return Tensor.of(t.toFloatArray(), t.dtype(), device(), t.shape());
    }

    // ---------------------------------------------------------------------------------------------------- V1, V3

    static Tensor attendOn(Backend lane, UnionRun.Spec spec, UnionInputs in, Tensor k, Tensor v) {
        return io.attnproof.attention.dsv4.Dsv4Attention.attention(Tensors.of4(in.q(), spec.dtype()), k, v,
                spec.tc() == 0 ? null : Tensors.kv(in.compressed(), spec.dtype()), null, Tensors.sinks(in.sinks()),
                spec.config(), lane);
    }

    @ParameterizedTest(name = "{0} t_q = {1} t_k = {2}")
    @org.junit.jupiter.params.provider.CsvSource({"CSA,5,40", "HCA,3,300", "STANDARD,5,40"})
    @Claim("V1")
    void aliasedVIsBitIdenticalOnTheLane(CompressRatio ratio, int tq, int tk, Evidence ev) {
        Evidence e = on(ev);
        long seed = 1000L + tq + tk + ratio.value();
        e.seed(seed);
        int tc = ratio == CompressRatio.STANDARD ? 0 : tk / ratio.value();
        UnionRun.Spec spec = new UnionRun.Spec(2, 3, tq, tk, tc, 16, 8, ratio, 0, Precision.F32);
        String label = "[" + ratio + " t_q=" + tq + "]";
        UnionInputs in = spec.inputs(seed);
        var stats = io.attnproof.attention.dsv4.VkDedup.fusedVStats();
        Tensor k = Tensors.kv(in.k(), DType.F32);
        var before = stats.snapshot();
        Tensor aliased = attendOn(lane(), spec, in, k, k);
        var aliasedDelta = stats.snapshot().minus(before);
        Tensor copy = k.copy();
        before = stats.snapshot();
        Tensor materialised = attendOn(lane(), spec, in, k, copy);
        var materialisedDelta = stats.snapshot().minus(before);
        int sites = tc > 0 ? 2 : 1;
        e.checkBitIdentical("bits_aliased_vs_materialised" + label,
                Diff.bitsDiffering(aliased.toFloatArray(), materialised.toFloatArray()));
        e.check("aliased_sites_counted_off_by" + label, Math.abs(aliasedDelta.aliased() - sites), 0, null);
        e.check("materialized_sites_counted_off_by" + label, Math.abs(materialisedDelta.materialized() - sites), 0,
                null);
        UnionRun run = UnionRun.of(spec, in, in.sinks(), null, null);
        Diff diff = Diff.of(run.oracle(), Tensors.toArray4(aliased));
        e.check("max_abs_err_aliased_vs_oracle" + label, diff.maxAbs(), run.limit(), diff.worst());
        // Control: a V one element off inside the keep span moves the output bits.
        Tensor nudged = k.copy();
        nudged.set(nudged.get(0, 0, tk - 1, 0) + 0.5f, 0, 0, tk - 1, 0);
        e.controlAtLeast("bits_with_one_v_element_changed" + label, Diff.bitsDiffering(aliased.toFloatArray(),
                attendOn(lane(), spec, in, k, nudged).toFloatArray()), 1);
    }

    @Test
    @Claim("V3")
    void aDistinctVChangesTheOutputOnTheLane(Evidence ev) {
        Evidence e = on(ev);
        long seed = 1030;
        e.seed(seed);
        UnionRun.Spec spec = new UnionRun.Spec(2, 3, 4, 40, 10, 16, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs distinct = UnionInputs.generate(seed, 2, 3, 4, 40, 10, 16, Precision.F32, 2.0);
        e.degeneracy("v_differs_from_k", distinct.v() != distinct.k(), "separate arrays");
        Tensor k = Tensors.kv(distinct.k(), DType.F32);
        Tensor v = Tensors.kv(distinct.v(), DType.F32);
        Tensor out = attendOn(lane(), spec, distinct, k, v);
        UnionRun run = UnionRun.of(spec, distinct, distinct.sinks(), null, null);
        Diff diff = Diff.of(run.oracle(), Tensors.toArray4(out));
        e.check("max_abs_err_distinct_v_vs_oracle", diff.maxAbs(), run.limit(), diff.worst());
        Tensor kTwice = attendOn(lane(), spec, distinct, k, k);
        e.controlGap("distinct_v_vs_k_as_v", Diff.of(Tensors.toArray4(out), Tensors.toArray4(kTwice)).maxAbs(),
                run.limit());
    }

    // ---------------------------------------------------------------------------------------------------- U8

    @Test
    @Claim("U8")
    void softmaxWithSinksMatchesBothOracleForms(Evidence ev) {
        Evidence e = on(ev);
        long seed = 81;
        e.seed(seed);
        int b = 2;
        int h = 3;
        int q = 4;
        int k = 9;
        SplittableRandom rng = Streams.named(seed, "logits");
        float[] logits = new float[b * h * q * k];
        float[] mask = new float[q * k];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (2 * rng.nextGaussian());
        }
        for (int i = 0; i < mask.length; i++) {
            mask[i] = rng.nextDouble() < 0.3 ? Float.NEGATIVE_INFINITY : 0f;
        }
        float[] sinks = {0.5f, -1.25f, 2f};
        Tensor y = lane().softmaxWithSinks(Tensor.of(logits, DType.F32, device(), b, h, q, k),
                Tensor.of(sinks, DType.F32, device(), h), Tensor.of(mask, DType.F32, device(), 1, 1, q, k));
        double worstErr = 0;
        double formsGap = 0;
        double sinkShareMax = 0;
        double plainGap = 0;
        double massOver = 0;
        Worst worst = null;
        for (int bi = 0; bi < b; bi++) {
            for (int hi = 0; hi < h; hi++) {
                for (int r = 0; r < q; r++) {
                    double[] x = new double[k];
                    for (int c = 0; c < k; c++) {
                        x[c] = logits[((bi * h + hi) * q + r) * k + c] + (double) mask[r * k + c];
                    }
                    double[] closed = SinkSoftmax.closedForm(x, sinks[hi]);
                    double[] extra = SinkSoftmax.extraColumn(x, sinks[hi]);
                    double[] plain = SinkSoftmax.closedForm(x, Double.NEGATIVE_INFINITY);
                    double mass = 0;
                    for (int c = 0; c < k; c++) {
                        double got = y.get(bi, hi, r, c);
                        double err = Math.abs(got - closed[c]);
                        if (err > worstErr) {
                            worstErr = err;
                            worst = new Worst(bi, hi, r, c);
                        }
                        formsGap = Math.max(formsGap, Math.abs(closed[c] - extra[c]));
                        plainGap = Math.max(plainGap, Math.abs(got - plain[c]));
                        mass += got;
                    }
                    sinkShareMax = Math.max(sinkShareMax, 1 - mass);
                    massOver = Math.max(massOver, mass - 1);
                }
            }
        }
        e.degeneracy("sink_takes_real_mass", sinkShareMax > 0.05, "max sink share " + sinkShareMax);
        e.check("oracle_forms_gap", formsGap, 1e-15, null);
        e.check("max_abs_err", worstErr, Tolerance.fallbackLimit(Precision.F32, 1.0), worst);
        e.check("row_mass_above_one", Math.max(0, massOver), 0, null);
        e.controlGap("softmax_without_sink", plainGap, Math.max(1e-2, Tolerance.fallbackLimit(Precision.F32, 1.0)));
    }

    @Test
    @Claim("U8")
    void aFullyMaskedRowGivesZerosNeverNaN(Evidence ev) {
        Evidence e = on(ev);
        long seed = 81;
        e.seed(seed);
        // softmax_with_sinks: row 0 fully masked, with a sink and without one.
        float[] logits = {1f, 2f, 3f, 4f, 5f, 6f};
        float[] mask = new float[6];
        Arrays.fill(mask, 0, 3, Float.NEGATIVE_INFINITY);
        for (float sink : new float[] {0.3f, Float.NEGATIVE_INFINITY}) {
            Tensor y = lane().softmaxWithSinks(Tensor.of(logits, DType.F32, device(), 1, 1, 2, 3),
                    Tensor.of(new float[] {sink}, DType.F32, device(), 1),
                    Tensor.of(mask, DType.F32, device(), 1, 1, 2, 3));
            e.degeneracy("unmasked_row_has_mass_sink_" + sink, y.get(0, 0, 1, 2) > 0.1f, "row 1 is live");
            long bad = 0;
            for (int c = 0; c < 3; c++) {
                bad += Float.floatToRawIntBits(y.get(0, 0, 0, c)) == 0 ? 0 : 1;
            }
            e.checkBitIdentical("nonzero_or_nan_in_masked_softmax_row_sink_" + sink, bad);
        }
        // dsv4_attention: a caller mask that kills every key (raw and compressed) of row 0.
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 2, 12, 3, 8, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(seed);
        int keys = 12 + 3;
        float[] caller = new float[2 * keys];
        Arrays.fill(caller, 0, keys, Float.NEGATIVE_INFINITY);
        Tensor out = UnionRun.run(spec, in, in.sinks(), Tensor.of(caller, DType.F32, Device.CPU, 2, keys), lane());
        long bad = 0;
        long live = 0;
        for (int h = 0; h < 2; h++) {
            for (int d = 0; d < 8; d++) {
                bad += Float.floatToRawIntBits(out.get(0, h, 0, d)) == 0 ? 0 : 1;
                live += out.get(0, h, 1, d) != 0f ? 1 : 0;
            }
        }
        e.degeneracy("unmasked_dsv4_row_is_live", live > 0, live + " nonzero elements in row 1");
        e.checkBitIdentical("nonzero_or_nan_in_masked_dsv4_row", bad);
        // The fused kernel: with t_q > t_k the first t_q - t_k rows see no key (bottom-right alignment).
        int tq = 12;
        int tk = 5;
        SinksInputs si = SinksInputs.generate(seed, 1, 2, 1, tq, tk, 64, Precision.F32, 1.0);
        for (double sink : new double[] {0.7, Double.NEGATIVE_INFINITY}) {
            double[] sinks = {sink, sink};
            Tensor fused = lane().flashAttnSinks(SinksRun.tensor(si.q(), DType.F32, device()),
                    SinksRun.tensor(si.k(), DType.F32, device()), SinksRun.tensor(si.v(), DType.F32, device()),
                    SinksRun.sinks(sinks, device()), null, 0);
            long nonZero = 0;
            long liveRows = 0;
            for (int h = 0; h < 2; h++) {
                for (int r = 0; r < tq; r++) {
                    for (int d = 0; d < 64; d++) {
                        float x = fused.get(0, h, r, d);
                        if (r < tq - tk) {
                            nonZero += Float.floatToRawIntBits(x) == 0 ? 0 : 1;
                        } else {
                            liveRows += x != 0f ? 1 : 0;
                        }
                    }
                }
            }
            e.degeneracy("fused_rows_that_see_keys_are_live_sink_" + sink, liveRows > 0, liveRows + " elements");
            e.checkBitIdentical("nonzero_or_nan_in_fused_rows_that_see_no_key_sink_" + sink, nonZero);
        }
    }

    @Test
    @Claim("U8")
    void aMinusInfinitySinkEqualsNoSink(Evidence ev) {
        Evidence e = on(ev);
        long seed = 81;
        e.seed(seed);
        UnionRun.Spec spec = new UnionRun.Spec(2, 3, 5, 30, 7, 8, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(seed);
        double[][][][] noSink = Tensors.toArray4(UnionRun.run(spec, in, null, null, lane()));
        double[] minusInf = new double[3];
        Arrays.fill(minusInf, Double.NEGATIVE_INFINITY);
        UnionProblem plain = new UnionProblem(in.q(), in.k(), in.v(), in.compressed(), minusInf, null, spec.window(),
                spec.ratio().value(), 0);
        double[][][][] oracle = UnionAttentionOracle.attend(plain);
        double naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(plain, Precision.F32)).maxAbs();
        Diff diff = Diff.of(oracle, noSink);
        double limit = Tolerance.limit(Precision.F32, naive, diff.oracleMaxAbs());
        e.check("max_abs_err_dsv4_no_sink_vs_oracle_minus_inf_sink", diff.maxAbs(), limit, diff.worst());
        // softmax_with_sinks with a -inf sink is the plain softmax.
        Tensor a = lane().softmaxWithSinks(Tensor.of(new float[] {0.5f, -2f, 1f}, DType.F32, device(), 1, 1, 1, 3),
                Tensor.of(new float[] {Float.NEGATIVE_INFINITY}, DType.F32, device(), 1), null);
        double[] closed = SinkSoftmax.closedForm(new double[] {0.5, -2, 1}, Double.NEGATIVE_INFINITY);
        double err = 0;
        for (int c = 0; c < 3; c++) {
            err = Math.max(err, Math.abs(a.get(0, 0, 0, c) - closed[c]));
        }
        e.check("max_abs_err_minus_inf_sink_vs_plain_softmax", err, Tolerance.fallbackLimit(Precision.F32, 1.0), null);
        double[][][][] withSink = Tensors.toArray4(UnionRun.run(spec, in, in.sinks(), null, lane()));
        e.controlGap("finite_sink_changes_output", Diff.of(withSink, noSink).maxAbs(), Math.max(1e-2, limit));
    }

    // ---------------------------------------------------------------------------------------------------- R1

    static Stream<Arguments> raggedCohorts() {
        return RaggedCohortTest.cohorts();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("raggedCohorts")
    @Claim("R1")
    void eachRaggedRowEqualsItselfAlone(RaggedCohort cohort, Evidence ev) {
        RaggedCohortTest.check(cohort, on(ev), lane());
    }

    // ---------------------------------------------------------------------------------------------------- S1, S2

    static Stream<Arguments> maskedCalls() {
        return Stream.of(Arguments.of(1, 0), Arguments.of(1, 16), Arguments.of(2, 0), Arguments.of(2, 16));
    }

    @ParameterizedTest(name = "B = {0} window = {1}")
    @MethodSource("maskedCalls")
    @Claim("S1")
    void aCallerMaskIsNeverDropped(int batch, int window, Evidence ev) {
        MaskNeverDroppedTest.callerMaskNeverDropped(lane(), device(), batch, window, on(ev));
    }

    static Stream<Arguments> fusedCases() {
        return Stream.of(Arguments.of(1, 40, 0, Precision.F32), Arguments.of(24, 40, 0, Precision.F32),
                Arguments.of(24, 40, 3, Precision.F32), Arguments.of(24, 40, 16, Precision.F32),
                Arguments.of(41, 41, 7, Precision.F32), Arguments.of(17, 50, 32, Precision.F32),
                Arguments.of(12, 5, 2, Precision.F32), Arguments.of(24, 40, 16, Precision.BF16));
    }

    /** One fused-kernel case's inputs and fp64 answers (the claim, the controls), shared by all lanes. */
    record FusedCase(SinksInputs in, SinksProblem problem, double[][][][] oracle, double naiveErr,
            double[][][][] nonCausal, double[][][][] wide, double[][][][] noSink) {
        static FusedCase of(long seed, int tq, int tk, int window, Precision precision) {
            SinksInputs in = SinksInputs.generate(seed, 2, 6, 2, tq, tk, 64, precision, 2.0).heavySinks(Math.min(tk,
                    window == 0 ? tk : window));
            SinksProblem p = SinksRun.problem(in, null, window);
            double[][][][] oracle = SinksAttentionOracle.attend(p);
            double naive = Diff.of(oracle, SinksAttentionOracle.attendNaive(p, precision)).maxAbs();
            return new FusedCase(in, p, oracle, naive,
                    tq > 1 ? SinksAttentionOracle.attend(p.withRule(0, false)) : null,
                    window > 0 && window < tk ? SinksAttentionOracle.attend(p.withRule(window + 1, true)) : null,
                    SinksAttentionOracle.attend(p.withSinks(null)));
        }
    }

    @ParameterizedTest(name = "t_q = {0}, t_k = {1}, window = {2}, {3}")
    @MethodSource("fusedCases")
    @Claim("S1")
    void theFusedKernelTracksTheCausalReference(int tq, int tk, int window, Precision precision, Evidence ev) {
        Evidence e = on(ev);
        long seed = 310L + 7L * tq + tk + window;
        e.seed(seed);
        String label = "[fused t_q=" + tq + " t_k=" + tk + " W=" + window + " " + precision + "]";
        e.degeneracy("crosses_tile_boundaries_or_decodes" + label, tq > 8 || tk > 16 || tq == 1,
                "t_q " + tq + " t_k " + tk);
        FusedCase c = Lanes.memo(List.of("S1-fused", tq, tk, window, precision),
                () -> FusedCase.of(seed, tq, tk, window, precision));
        DType dt = Tensors.dtype(precision);
        Tensor q = SinksRun.tensor(c.in().q(), dt, device());
        Tensor k = SinksRun.tensor(c.in().k(), dt, device());
        Tensor v = SinksRun.tensor(c.in().v(), dt, device());
        Tensor sinks = SinksRun.sinks(c.in().sinks(), device());
        double[][][][] actual = Tensors.toArray4(lane().flashAttnSinks(q, k, v, sinks, null, window));
        Diff diff = Diff.of(c.oracle(), actual);
        double limit = Tolerance.limit(precision, c.naiveErr(), diff.oracleMaxAbs());
        e.check("max_abs_err_fused_vs_causal_reference" + label, diff.maxAbs(), limit, diff.worst());
        if (io.attnproof.attention.PrecisionTiers.tiered(precision)) {
            io.attnproof.attention.PrecisionTiers.check(e, "max_abs_err_fused_vs_causal_reference" + label, precision,
                    diff, io.attnproof.attention.PrecisionTiers.sinksLimit(c.problem(), precision, c.oracle()));
        }
        if (c.nonCausal() != null) {
            e.controlGap("non_causal" + label, Diff.of(c.nonCausal(), actual).maxAbs(), limit);
        }
        if (c.wide() != null) {
            e.controlGap("window_plus_one" + label, Diff.of(c.wide(), actual).maxAbs(), limit);
        }
        e.controlGap("no_sink" + label, Diff.of(c.noSink(), actual).maxAbs(), limit);
        double[][][][] unfused = Tensors.toArray4(lane().sinksAttnUnfused(q, k, v, sinks, null, window));
        e.check("max_abs_fused_vs_unfused" + label, Diff.of(actual, unfused).maxAbs(), limit, null);
    }

    @Test
    @Claim("S1")
    void keysOutsideEveryRowsSpanAreNeverRead(Evidence ev) {
        Evidence e = on(ev);
        long seed = 330;
        e.seed(seed);
        int tq = 9;
        int tk = 60;
        int window = 4;
        SinksInputs in = SinksInputs.generate(seed, 1, 2, 1, tq, tk, 64, Precision.F32, 1.0);
        Function<SinksInputs, Tensor> fused = x -> lane().flashAttnSinks(SinksRun.tensor(x.q(), DType.F32, device()),
                SinksRun.tensor(x.k(), DType.F32, device()), SinksRun.tensor(x.v(), DType.F32, device()),
                SinksRun.sinks(x.sinks(), device()), null, window);
        Tensor before = fused.apply(in);
        int firstSeen = tk - tq - window + 1;
        e.degeneracy("whole_key_tiles_unseen", firstSeen > 2 * 16, "first seen " + firstSeen);
        // NaN in every key and value no row may see, including the seen tile's unseen keys.
        for (double[][][] kv : new double[][][][] {in.k()[0], in.v()[0]}) {
            for (double[][] head : kv) {
                for (int j = 0; j < firstSeen; j++) {
                    Arrays.fill(head[j], Double.NaN);
                }
            }
        }
        Tensor after = fused.apply(in);
        e.checkBitIdentical("bits_with_nan_canaries_outside_every_window",
                Diff.bitsDiffering(before.toFloatArray(), after.toFloatArray()));
    }

    @ParameterizedTest(name = "pads {0}")
    @MethodSource("paddings")
    @Claim("S2")
    void aPaddingColumnMaskIsHonoured(int[] pads, Evidence ev) {
        MaskNeverDroppedTest.paddingMaskHonoured(lane(), device(), pads, on(ev));
    }

    static Stream<Arguments> paddings() {
        return Stream.of(Arguments.of((Object) new int[] {7}), Arguments.of((Object) new int[] {5, 11}));
    }

    // ---------------------------------------------------------------------------------------------------- S3

    @Test
    @Claim("S3")
    void theFusedKernelRefusesANonNullMask(Evidence ev) {
        Evidence e = on(ev);
        long seed = 300;
        e.seed(seed);
        int tq = 5;
        int tk = 9;
        SinksInputs in = SinksInputs.generate(seed, 1, 4, 2, tq, tk, 64, Precision.F32, 1.0);
        Tensor q = SinksRun.tensor(in.q(), DType.F32, device());
        Tensor k = SinksRun.tensor(in.k(), DType.F32, device());
        Tensor v = SinksRun.tensor(in.v(), DType.F32, device());
        Tensor sinks = SinksRun.sinks(in.sinks(), device());
        // Masks of every kind, including ones the kernel would honour anyway: the refusal is on presence.
        List<Tensor> masks = List.of(Tensor.zeros(DType.F32, device(), tq, tk),
                Tensor.zeros(DType.F32, device(), 1, 1, tq, tk), GptOssConfig.gptOss(2).layerMask(1, tq, tk, device()),
                Tensor.zeros(DType.F32, device(), 1), Tensor.zeros(DType.F32, Device.CPU, 7, 3));
        long accepted = 0;
        long unclear = 0;
        for (Tensor mask : masks) {
            try {
                lane().flashAttnSinks(q, k, v, sinks, mask, 0);
                accepted++;
            } catch (IllegalArgumentException x) {
                unclear += x.getMessage().startsWith("mask = " + mask + ": must be null: ")
                        && x.getMessage().contains("cannot honour a caller mask") ? 0 : 1;
            }
        }
        e.checkBitIdentical("masks_accepted_by_the_fused_kernel", accepted);
        e.checkBitIdentical("refusals_without_the_rule_in_the_message", unclear);
        // Control: the same call with no mask runs and gives a full, finite output.
        Tensor ran = lane().flashAttnSinks(q, k, v, sinks, null, 0);
        long nonFinite = 0;
        for (float x : ran.toFloatArray()) {
            nonFinite += Float.isFinite(x) ? 0 : 1;
        }
        e.check("maskless_call_non_finite_elements", nonFinite, 0, null);
        e.degeneracy("maskless_call_output_mass", Arrays.stream(Tensors.toArray4(ran)[0][0][tq - 1])
                .map(Math::abs).sum(), io.attnproof.fixtures.evidence.Comparison.GT, 1e-2, "the maskless call must run");
        // And the dispatch on this lane never hands a mask to the fused arm.
        long fusedWithMask = 0;
        for (int batch = 0; batch <= 3; batch++) {
            for (int d = 1; d <= 600; d++) {
                for (boolean flash512 : new boolean[] {false, true}) {
                    fusedWithMask += SinksDispatch.choose(lane().dispatchKind(device()), batch, d, true, flash512)
                            .fused() ? 1 : 0;
                }
            }
        }
        e.checkBitIdentical("masked_calls_dispatched_to_a_fused_arm", fusedWithMask);
    }

    // ------------------------------------------------------------------------------------------- S1 with GQA

    /**
     * S1 with grouped-query attention of several KV heads (Hq / Hkv = 16 / 2 and 64 / 8) on every sinks kernel of
     * the lane: the fused prefill, the unfused path (scores, softmax, P.V), the varlen kernel (one packed sequence)
     * and the split-K decode (t_q = 1 over 1030 keys: five chunks), each against the fp64 oracle, where query head h
     * reads KV head h / (Hq / Hkv). A kernel that maps h to KV head h % Hkv, or to KV head 0, is off by far more than
     * the limit here (the KV heads are independent draws).
     */
    @ParameterizedTest(name = "Hq = {0} Hkv = {1}")
    @MethodSource("gqaShapes")
    @Claim("S1")
    void everyKernelMapsQueryHeadsToTheirKvGroup(int hq, int hkv, Evidence ev) {
        Evidence e = on(ev);
        long seed = 2900L + hq;
        e.seed(seed);
        String label = "[Hq=" + hq + " Hkv=" + hkv + "]";
        e.degeneracy("several_query_heads_per_kv_head_and_several_kv_heads" + label, hq / hkv > 1 && hkv > 1,
                hq + "/" + hkv);
        SinksInputs pre = SinksInputs.generate(seed, 1, hq, hkv, 9, 40, 64, Precision.F32, 2.0);
        SinksRun fused = SinksRun.of(SinksRun.problem(pre, null, 0), lane().flashAttnSinks(on(pre.q()), on(pre.k()),
                on(pre.v()), SinksRun.sinks(pre.sinks(), device()), null, 0), Precision.F32);
        e.check("max_abs_err_fused_vs_oracle" + label, fused.diff().maxAbs(), fused.limit(), fused.diff().worst());
        SinksRun unfused = SinksRun.of(SinksRun.problem(pre, null, 0), lane().sinksAttnUnfused(on(pre.q()),
                on(pre.k()), on(pre.v()), SinksRun.sinks(pre.sinks(), device()), null, 0), Precision.F32);
        e.check("max_abs_err_unfused_vs_oracle" + label, unfused.diff().maxAbs(), unfused.limit(),
                unfused.diff().worst());
        // The varlen kernel on one packed sequence: q [t_q, Hq, D], k/v [t_k, Hkv, D]; out [1, Hq, t_q, D].
        Tensor varlen = lane().sinksAttnVarlen(packed(pre.q()), packed(pre.k()), packed(pre.v()),
                SinksRun.sinks(pre.sinks(), device()), new int[] {0, 9}, new int[] {0, 40}, 0);
        SinksRun packedRun = SinksRun.of(SinksRun.problem(pre, null, 0), varlen, Precision.F32);
        e.check("max_abs_err_varlen_vs_oracle" + label, packedRun.diff().maxAbs(), packedRun.limit(),
                packedRun.diff().worst());
        SinksInputs dec = SinksInputs.generate(seed + 1, 1, hq, hkv, 1, 1030, 64, Precision.F32, 2.0);
        io.attnproof.attention.dispatch.DispatchTrace.last().sinksSplitChunks = 0;
        Tensor decoded = lane().flashAttnSinks(on(dec.q()), on(dec.k()), on(dec.v()),
                SinksRun.sinks(dec.sinks(), device()), null, 0);
        int chunks = io.attnproof.attention.dispatch.DispatchTrace.last().sinksSplitChunks;
        if (lane().dispatchKind(device()) != Device.Kind.CPU) {
            e.degeneracy("split_k_chunks" + label, chunks, io.attnproof.fixtures.evidence.Comparison.EQ, 5,
                    chunks + " chunks");
        }
        SinksRun split = SinksRun.of(SinksRun.problem(dec, null, 0), decoded, Precision.F32);
        e.check("max_abs_err_split_k_decode_vs_oracle" + label, split.diff().maxAbs(), split.limit(),
                split.diff().worst());
    }

    static Stream<Arguments> gqaShapes() {
        return Stream.of(Arguments.of(16, 2), Arguments.of(64, 8));
    }

    /** {@code [1, H, T, D]} as one packed sequence {@code [T, H, D]} on the lane's device. */
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

    Tensor on(double[][][][] x) {
        return SinksRun.tensor(x, DType.F32, device());
    }

    // ---------------------------------------------------------------------------------------------------- S6

    @ParameterizedTest(name = "window = {0}")
    @ValueSource(ints = {0, 3})
    @Claim("S6")
    void packedSequencesAreCausalAndWindowed(int window, Evidence ev) {
        VarlenFallbackTest.packedSequences(lane(), window, on(ev));
    }

    @ParameterizedTest(name = "window = {0}")
    @ValueSource(ints = {0, 3})
    @Claim("S6")
    void aDenseUnmaskedBatchGoesVarlenAndStaysCausal(int window, Evidence ev) {
        VarlenFallbackTest.denseBatch(lane(), window, on(ev));
    }

    // ---------------------------------------------------------------------------------------------------- S7

    /** The head dims this lane's fused kernel is built for. */
    List<Integer> envelope() {
        List<Integer> dims = new ArrayList<>(new java.util.TreeSet<>(SinksDispatch.FUSED_HEAD_DIMS));
        if (lane().dispatchKind(device()) != Device.Kind.METAL) {
            dims.add(SinksDispatch.FLASH_512_HEAD_DIM);
        }
        return dims;
    }

    @Test
    @Claim("S7")
    void theFusedKernelRunsItsEnvelopeAndRefusesTheRest(Evidence ev) {
        Evidence e = on(ev);
        long seed = 710;
        e.seed(seed);
        String kernel = lane().dispatchKind(device()) == Device.Kind.METAL ? "flash_attn_sinks_metal"
                : "flash_attn_sinks";
        int tq = 9;
        int tk = 20;
        int window = 5;
        for (int d : envelope()) {
            SinksInputs in = SinksInputs.generate(seed + d, 1, 2, 1, tq, tk, d, Precision.F32, 2.0);
            SinksProblem p = SinksRun.problem(in, null, window);
            Tensor out = lane().flashAttnSinks(SinksRun.tensor(in.q(), DType.F32, device()),
                    SinksRun.tensor(in.k(), DType.F32, device()), SinksRun.tensor(in.v(), DType.F32, device()),
                    SinksRun.sinks(in.sinks(), device()), null, window);
            SinksRun run = SinksRun.of(p, out, Precision.F32);
            e.check("max_abs_err_fused_d" + d, run.diff().maxAbs(), run.limit(), run.diff().worst());
        }
        List<Integer> outside = new ArrayList<>(List.of(48, 72, 320));
        if (!envelope().contains(512)) {
            outside.add(512);
        }
        long unrefused = 0;
        for (int d : outside) {
            SinksInputs in = SinksInputs.generate(seed + d, 1, 2, 1, 3, 5, d, Precision.F32, 2.0);
            try {
                lane().flashAttnSinks(SinksRun.tensor(in.q(), DType.F32, device()),
                        SinksRun.tensor(in.k(), DType.F32, device()), SinksRun.tensor(in.v(), DType.F32, device()),
                        SinksRun.sinks(in.sinks(), device()), null, 0);
                unrefused++; // ran a head dim outside the envelope
            } catch (IllegalArgumentException x) {
                unrefused += x.getMessage().startsWith("head_dim = " + d + ": must be in " + kernel + "'s envelope")
                        ? 0 : 1;
            } catch (NativeKernelException x) {
                unrefused++; // ran it, and faulted (e.g. past the kernel's shared tile)
            }
        }
        e.checkBitIdentical("outside_dims_not_refused_by_" + kernel, unrefused);
    }

    @Test
    @Claim("S7")
    void callsLandOnTheArmTheEnvelopeNames(Evidence ev) {
        Evidence e = on(ev);
        long seed = 700;
        e.seed(seed);
        Device.Kind kind = lane().dispatchKind(device());
        for (int d : new int[] {512, 48, 64}) {
            SinksInputs in = SinksInputs.generate(seed + d, 1, 4, 2, 13, 21, d, Precision.F32, 2.0);
            Tensor q = SinksRun.tensor(in.q(), DType.F32, device());
            Tensor k = SinksRun.tensor(in.k(), DType.F32, device());
            Tensor v = SinksRun.tensor(in.v(), DType.F32, device());
            Tensor sinks = SinksRun.sinks(in.sinks(), device());
            float[] unfusedBits = lane().sinksAttnUnfused(q, k, v, sinks, null, 5).toFloatArray();
            for (boolean flash512 : new boolean[] {true, false}) {
                SinksArm arm = SinksDispatch.choose(kind, 1, d, false, flash512);
                float[] expected = arm.fused() ? lane().flashAttnSinks(q, k, v, sinks, null, 5).toFloatArray()
                        : unfusedBits;
                if (arm.fused()) {
                    long differ = Diff.bitsDiffering(expected, unfusedBits);
                    e.degeneracy("fused_and_unfused_bits_differ_d" + d, differ > 0, differ + " elements");
                }
                float[] got = SinksAttention.sinksAttn(lane(), q, k, v, sinks, null, 5, flash512).toFloatArray();
                e.checkBitIdentical("bits_off_the_" + (arm.fused() ? "fused" : "unfused") + "_arm_d" + d
                        + "_flash512_" + flash512, Diff.bitsDiffering(got, expected));
            }
        }
        assertTrue(lane().dispatchKind(device()) == device().kind() || lane() instanceof Cpu,
                "a native lane dispatches for its own device family");
    }
}
