package io.attnproof.attention.dsv4;

import io.attnproof.attention.engine.UnionKernel;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.mask.UnionMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** U3: narrowing raw K/V to the keep span is an identity, bit-identical to attending the whole cache. */
@Claim("U3")
class KeepSpanTest {

    @ParameterizedTest(name = "t_q = {0}, t_k = {1}, W = {2}, {3}")
    @CsvSource({"1,300,128,CSA", "1,300,128,HCA", "7,300,128,STANDARD", "40,513,128,CSA", "3,50,8,HCA", "1,129,128,STANDARD"})
    void narrowedEqualsWholeCache(int tq, int tk, int window, CompressRatio ratio, Evidence ev) {
        long seed = 31L * tq + tk;
        ev.seed(seed);
        int tc = ratio == CompressRatio.STANDARD ? 0 : tk / ratio.value();
        UnionRun.Spec spec = new UnionRun.Spec(2, 3, tq, tk, tc, 16, window, ratio, 0, Precision.F32);
        UnionInputs in = spec.inputs(seed);
        UnionGeometry g = UnionGeometry.of(tq, tk, tc, window, 0);
        // Measured on the inputs through the fixture's formula base = t_k_full - min(t_q + W - 1, t_k_full).
        long base = new io.attnproof.fixtures.gen.UnionCase(tq, tk, window, ratio.value(), tc, 0, Precision.F32, 2, 3,
                16).base();
        ev.degeneracy("keys_cut_before_base", base, io.attnproof.fixtures.evidence.Comparison.GT, 0,
                "keys before the keep span");

        Tensor narrowed = UnionRun.run(spec, in, in.sinks(), null);
        float[] whole = wholeCache(spec, in, g, 0);
        ev.checkBitIdentical("bits_narrowed_vs_whole_cache", Diff.bitsDiffering(narrowed.toFloatArray(), whole));

        // Keys before base are never read: NaN canaries there leave the output unchanged.
        for (double[][] row : in.k()) {
            for (int j = 0; j < g.base(); j++) {
                Arrays.fill(row[j], Double.NaN);
            }
        }
        Tensor canaried = UnionRun.run(spec, in, in.sinks(), null);
        ev.checkBitIdentical("bits_with_nan_canaries_before_base",
                Diff.bitsDiffering(narrowed.toFloatArray(), canaried.toFloatArray()));

        // Control: a span one key too short (starting at base + 1) loses a key row 0 admits.
        UnionInputs fresh = spec.inputs(seed);
        float[] tooShort = wholeCache(spec, fresh, g, g.base() + 1);
        // U3 is bit-identity; the control's bar is the tolerance rule's limit for the same output (fresh inputs).
        double limit = io.attnproof.attention.UnionRun.of(spec, seed).limit();
        ev.controlGap("span_one_short", Diff.of(Tensors.toArray4(narrowed), toArray(tooShort, spec)).maxAbs(), limit);
    }

    /** The kernel over every passed raw key from absolute {@code from} on, masked by the same rule, none narrowed. */
    static float[] wholeCache(UnionRun.Spec spec, UnionInputs in, UnionGeometry g, long from) {
        Tensor k = Tensors.kv(in.k(), spec.dtype());
        int skip = (int) (from - spec.rawPrefix());
        Tensor keys = k.narrow(2, skip, spec.tk() - skip);
        Tensor all = spec.tc() == 0 || spec.ratio() == CompressRatio.STANDARD ? keys
                : Tensor.cat(2, keys, Tensors.kv(in.compressed(), spec.dtype()));
        int tc = all.dim(2) - keys.dim(2);
        UnionMask mask = new UnionMask(g.q0(), spec.tq(), from, keys.dim(2), spec.window(), tc, spec.ratio().value());
        float[] sinks = new float[in.sinks().length];
        for (int h = 0; h < sinks.length; h++) {
            sinks[h] = (float) in.sinks()[h];
        }
        float[] out = UnionKernel.repeatKv(Tensors.of4(in.q(), spec.dtype()), all, all,
                mask.materialize(spec.dtype(), Device.CPU), sinks);
        return Tensor.of(out, spec.dtype(), Device.CPU, spec.batch(), spec.heads(), spec.tq(), spec.headDim())
                .toFloatArray();
    }

    private static double[][][][] toArray(float[] flat, UnionRun.Spec spec) {
        return Tensors.toArray4(Tensor.of(flat, DType.F32, Device.CPU, spec.batch(), spec.heads(), spec.tq(),
                spec.headDim()));
    }
}
