package io.attnproof.attention.dsv4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** U6: the absorbed-MQA decode equals the repeat-KV path (the same dot products, so bit for bit). */
@Claim("U6")
class AbsorbedMqaTest {

    @ParameterizedTest(name = "{0} t_k = {1} {2}")
    @CsvSource({"STANDARD,200,F32", "CSA,200,F32", "HCA,300,F32", "CSA,77,F16", "HCA,513,BF16"})
    void absorbedDecodeEqualsRepeatKv(CompressRatio ratio, int tk, Precision precision, Evidence ev) {
        long seed = 600L + tk;
        ev.seed(seed);
        int tc = ratio == CompressRatio.STANDARD ? 0 : tk / ratio.value();
        UnionRun.Spec spec = new UnionRun.Spec(3, 8, 1, tk, tc, 32, 128, ratio, 0, precision);
        UnionInputs in = spec.inputs(seed);
        DType dt = spec.dtype();
        Tensor q = Tensors.of4(in.q(), dt);
        Tensor k = Tensors.kv(in.k(), dt);
        Tensor c = tc == 0 ? null : Tensors.kv(in.compressed(), dt);
        double[] heavy = UnionRun.heavySinks(in.sinks(), Math.min(128, tk) + tc);
        Tensor sinks = Tensors.sinks(heavy);
        ev.degeneracy("decode_takes_the_absorbed_path",
                Dsv4Attention.pathFor(q, sinks) == Dsv4Attention.Path.ABSORBED_MQA, "t_q = 1 with sinks");
        Tensor absorbed = Dsv4Attention.attention(q, k, k, c, null, sinks, spec.config());
        Tensor repeat = Dsv4Attention.attention(q, k, k, c, null, sinks, spec.config(), Dsv4Attention.Path.REPEAT_KV);
        ev.checkBitIdentical("bits_absorbed_vs_repeat_kv",
                Diff.bitsDiffering(absorbed.toFloatArray(), repeat.toFloatArray()));
        UnionRun run = UnionRun.of(spec, in, heavy, null, null);
        ev.check("max_abs_err", run.diff().maxAbs(), run.limit(), run.diff().worst());
        // Control: heads must not share one sink (a per-KV-head sink): rotating the sinks over heads disagrees.
        double[] rotated = new double[heavy.length];
        for (int h = 0; h < rotated.length; h++) {
            rotated[h] = heavy[(h + 1) % rotated.length];
        }
        Tensor wrongSinks = Dsv4Attention.attention(q, k, k, c, null, Tensors.sinks(rotated), spec.config());
        ev.controlGap("sinks_rotated_over_heads",
                Diff.of(Tensors.toArray4(absorbed), Tensors.toArray4(wrongSinks)).maxAbs(), run.limit());
    }

    @Test
    void pathChoiceAndItsPreconditions() {
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 2, 10, 2, 4, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(1);
        Tensor q = Tensors.of4(in.q(), DType.F32);
        Tensor k = Tensors.kv(in.k(), DType.F32);
        Tensor sinks = Tensors.sinks(in.sinks());
        assertEquals(Dsv4Attention.Path.REPEAT_KV, Dsv4Attention.pathFor(q, sinks));
        assertEquals(Dsv4Attention.Path.REPEAT_KV, Dsv4Attention.pathFor(q.narrow(2, 0, 1), null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dsv4Attention.attention(q, k, k,
                null, null, sinks, spec.config(), Dsv4Attention.Path.ABSORBED_MQA));
        assertEquals("path = ABSORBED_MQA: must be REPEAT_KV unless t_q == 1 and sinks are present (t_q = 2)",
                e.getMessage());
    }
}
