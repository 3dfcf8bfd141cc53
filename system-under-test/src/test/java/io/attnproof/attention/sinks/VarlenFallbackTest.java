package io.attnproof.attention.sinks;

import io.attnproof.attention.dispatch.SinksArm;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.backend.Cpu;
import io.attnproof.attention.mask.VarlenCausalMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * S6: the CPU varlen fallback is causal and windowed — each packed sequence matches the fp64 bottom-right-aligned
 * causal reference at windows 0 and 3, rows past a sequence's q_len are zero, and an unmasked (non-causal) control
 * differs.
 */
@Claim("S6")
public class VarlenFallbackTest {
    static final int HQ = 4;
    static final int HKV = 2;
    static final int D = 16;
    /** Ragged packed sequences: (q_len, kv_len); q_len 1 is a decode row, 0 an idle slot. */
    static final int[][] SEQUENCES = {{5, 8}, {1, 6}, {7, 7}, {0, 4}, {4, 11}};

    @AfterEach
    void clearTheMemo() {
        VarlenCausalMask.Memo.current().clear();
    }

    /** Each sequence's own inputs (its own stream), packed into {@code [total, H, D]} rows. */
    record Packed(SinksInputs[] rows, Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuQ, int[] cuK, int maxQ) {
        static Packed of(long seed) {
            SinksInputs[] rows = new SinksInputs[SEQUENCES.length];
            int[] cuQ = new int[SEQUENCES.length + 1];
            int[] cuK = new int[SEQUENCES.length + 1];
            int maxQ = 0;
            for (int i = 0; i < SEQUENCES.length; i++) {
                // A zero-row sequence still needs a generator row; it is packed with no query rows.
                rows[i] = SinksInputs.generate(seed + i, 1, HQ, HKV, Math.max(1, SEQUENCES[i][0]), SEQUENCES[i][1], D,
                        Precision.F32, 2.0);
                cuQ[i + 1] = cuQ[i] + SEQUENCES[i][0];
                cuK[i + 1] = cuK[i] + SEQUENCES[i][1];
                maxQ = Math.max(maxQ, SEQUENCES[i][0]);
            }
            double[] sinks = rows[0].sinks();
            return new Packed(rows, pack(rows, cuQ, true, HQ, false), pack(rows, cuK, false, HKV, false),
                    pack(rows, cuK, false, HKV, true), SinksRun.sinks(sinks, Device.CPU), cuQ, cuK, maxQ);
        }

        /** Rows {@code [cu[i], cu[i+1])} of the packed tensor are sequence i's q (or k, or v) rows. */
        static Tensor pack(SinksInputs[] rows, int[] cu, boolean query, int heads, boolean values) {
            int total = cu[cu.length - 1];
            float[] out = new float[total * heads * D];
            for (int i = 0; i < rows.length; i++) {
                double[][][] src = query ? rows[i].q()[0] : values ? rows[i].v()[0] : rows[i].k()[0];
                for (int t = 0; t < cu[i + 1] - cu[i]; t++) {
                    for (int h = 0; h < heads; h++) {
                        for (int e = 0; e < D; e++) {
                            out[((cu[i] + t) * heads + h) * D + e] = (float) src[h][t][e];
                        }
                    }
                }
            }
            return Tensor.of(out, DType.F32, Device.CPU, total, heads, D);
        }

        /** Sequence i's oracle problem (its sinks are the packed call's sinks). */
        SinksProblem problem(int i, int window, boolean causal) {
            SinksInputs in = rows[i];
            return new SinksProblem(in.q(), in.k(), in.v(), rows[0].sinks(), null, causal ? window : 0, causal);
        }
    }

    @ParameterizedTest(name = "window = {0}")
    @ValueSource(ints = {0, 3})
    void packedSequencesAreCausalAndWindowed(int window, Evidence ev) {
        packedSequences(Backend.cpu(), window, ev);
    }

    /** {@code t}'s values on {@code backend}'s device (the CPU lane keeps the tensor as it is). */
    static Tensor on(Backend backend, Tensor t) {
        return backend instanceof Cpu ? t : Tensor.of(t.toFloatArray(), t.dtype(), backend.device(), t.shape());
    }

    /** S6 on packed ragged sequences through {@code backend}'s varlen form. */
    public static void packedSequences(Backend backend, int window, Evidence ev) {
        long seed = 600L + window;
        ev.seed(seed);
        String label = "[W=" + window + "]";
        Packed p = Packed.of(seed);
        boolean someRowCut = false;
        boolean someCausalRow = false;
        boolean somePadding = false;
        for (int[] s : SEQUENCES) {
            someRowCut |= window > 0 && s[1] > window;
            someCausalRow |= s[0] > 1;
            somePadding |= s[0] < p.maxQ();
        }
        ev.degeneracy("window_cuts_keys" + label, window == 0 || someRowCut, "window " + window);
        ev.degeneracy("rows_that_see_different_key_counts" + label, someCausalRow, "q_len > 1 somewhere");
        ev.degeneracy("padded_output_rows" + label, somePadding, "max_q " + p.maxQ());

        Tensor out = backend.sinksAttnVarlen(on(backend, p.q()), on(backend, p.k()), on(backend, p.v()),
                on(backend, p.sinks()), p.cuQ(), p.cuK(), window);
        ev.check("output_shape_mismatches" + label, java.util.Arrays.equals(out.shape(),
                new int[] {SEQUENCES.length, HQ, p.maxQ(), D}) ? 0 : 1, 0, null);
        double worstErr = 0;
        double worstRatio = 0;
        double limitAtWorst = 0;
        double nonCausalGap = Double.POSITIVE_INFINITY;
        long paddingNonZero = 0;
        for (int i = 0; i < SEQUENCES.length; i++) {
            int qLen = SEQUENCES[i][0];
            for (int h = 0; h < HQ; h++) {
                for (int r = qLen; r < p.maxQ(); r++) {
                    for (int e = 0; e < D; e++) {
                        paddingNonZero += Float.floatToRawIntBits(out.get(i, h, r, e)) == 0 ? 0 : 1;
                    }
                }
            }
            if (qLen == 0) {
                continue;
            }
            double[][][][] actual = new double[1][HQ][qLen][D];
            for (int h = 0; h < HQ; h++) {
                for (int r = 0; r < qLen; r++) {
                    for (int e = 0; e < D; e++) {
                        actual[0][h][r][e] = out.get(i, h, r, e);
                    }
                }
            }
            SinksProblem causal = p.problem(i, window, true);
            double[][][][] oracle = SinksAttentionOracle.attend(causal);
            Diff diff = Diff.of(oracle, actual);
            double naive = Diff.of(oracle, SinksAttentionOracle.attendNaive(causal, Precision.F32)).maxAbs();
            double limit = Tolerance.limit(Precision.F32, naive, diff.oracleMaxAbs());
            if (diff.maxAbs() / limit > worstRatio) {
                worstRatio = diff.maxAbs() / limit;
                worstErr = diff.maxAbs();
                limitAtWorst = limit;
            }
            if (qLen > 1) {
                double gap = Diff.of(SinksAttentionOracle.attend(p.problem(i, 0, false)), actual).maxAbs();
                nonCausalGap = Math.min(nonCausalGap, gap);
            }
        }
        ev.check("max_abs_err_vs_causal_reference" + label, worstErr, limitAtWorst, null);
        ev.checkBitIdentical("nonzero_padding_elements" + label, paddingNonZero);
        // Control: the unmasked (non-causal) fallback, upstream's bug, differs on every sequence with q_len > 1.
        // Bars: the claim's tolerance limit (at its worst sequence), and no less than a 1e-2 signal.
        ev.controlGap("non_causal_control_min_over_sequences" + label, nonCausalGap, Math.max(1e-2, limitAtWorst));
        // Control: the other window differs.
        Tensor other = backend.sinksAttnVarlen(on(backend, p.q()), on(backend, p.k()), on(backend, p.v()),
                on(backend, p.sinks()), p.cuQ(), p.cuK(), window == 0 ? 3 : 0);
        ev.controlGap("window_0_vs_3" + label, Diff.of(Tensors.toArray4(out), Tensors.toArray4(other)).maxAbs(),
                Math.max(1e-2, limitAtWorst));
    }

    @ParameterizedTest(name = "window = {0}")
    @ValueSource(ints = {0, 3})
    void aDenseUnmaskedBatchGoesVarlenAndStaysCausal(int window, Evidence ev) {
        denseBatch(Backend.cpu(), window, ev);
    }

    /**
     * S6 through {@code sinks_attn} on {@code backend}: a dense unmasked batch goes varlen and stays causal. On the
     * CPU lane the varlen memo shows the dispatch and the rows equal the unfused path bit for bit; a native lane's
     * varlen form is the tiled kernel, which orders its sums differently, so there it agrees within the limit.
     */
    public static void denseBatch(Backend backend, int window, Evidence ev) {
        long seed = 650L + window;
        ev.seed(seed);
        String label = "[W=" + window + "]";
        int batch = 3;
        boolean cpu = backend instanceof Cpu;
        Device device = cpu ? Device.CPU : backend.device();
        SinksInputs in = SinksInputs.generate(seed, batch, HQ, HKV, 6, 9, D, Precision.F32, 2.0);
        VarlenCausalMask.Memo memo = VarlenCausalMask.Memo.current();
        memo.clear();
        Tensor out = SinksRun.sinksAttn(backend, in, DType.F32, device, null, window);
        if (cpu) {
            ev.degeneracy("dispatch_took_varlen" + label, memo.builds() + memo.hits() == batch,
                    "memo builds " + memo.builds() + ", hits " + memo.hits());
            ev.check("varlen_memo_builds_for_equal_rows" + label, memo.builds(), 1, null);
        } else {
            SinksArm arm = SinksAttention.armFor(SinksRun.tensor(in.q(), DType.F32, device), null, true);
            ev.degeneracy("dispatch_took_varlen" + label, arm == SinksArm.VARLEN, "arm " + arm);
        }
        SinksProblem causal = SinksRun.problem(in, null, window);
        SinksRun run = SinksRun.of(causal, out, Precision.F32);
        ev.check("max_abs_err_vs_causal_reference" + label, run.diff().maxAbs(), run.limit(), run.diff().worst());
        Tensor unfused = backend.sinksAttnUnfused(SinksRun.tensor(in.q(), DType.F32, device),
                SinksRun.tensor(in.k(), DType.F32, device), SinksRun.tensor(in.v(), DType.F32, device),
                SinksRun.sinks(in.sinks(), device), null, window);
        if (cpu) {
            // The varlen rows and the unfused batch take the same sums: bit-identical.
            ev.checkBitIdentical("bits_varlen_vs_unfused" + label, Diff.bitsDiffering(out.toFloatArray(),
                    unfused.toFloatArray()));
        } else {
            ev.check("max_abs_varlen_vs_unfused" + label, Diff.of(Tensors.toArray4(out), Tensors.toArray4(unfused))
                    .maxAbs(), run.limit(), null);
        }
        ev.controlGap("non_causal_control" + label, SinksRun.maxAbsDiff(SinksAttentionOracle.attend(
                causal.withRule(0, false)), run.actual()), Math.max(1e-2, run.limit()));
    }
}
