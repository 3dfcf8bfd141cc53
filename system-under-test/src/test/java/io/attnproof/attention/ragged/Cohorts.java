package io.attnproof.attention.ragged;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.ragged.RaggedCohort;

/** Runs a ragged cohort through dsv4_attention batched, or one row alone with its dead prefix absent. */
final class Cohorts {
    private Cohorts() {
    }

    static CompressRatio ratio(RaggedCohort c) {
        return switch (c.ratio()) {
            case 0 -> CompressRatio.STANDARD;
            case 4 -> CompressRatio.CSA;
            default -> CompressRatio.HCA;
        };
    }

    /** The batched call with per-row positions {@code rowQ0} (null: the scalar path at the batch's position). */
    static Tensor batched(RaggedCohort c, RaggedCohort.Inputs in, long[] rowQ0) {
        Tensor k = Tensors.kv(in.k(), DType.F32);
        Tensor compressed = c.tc() == 0 ? null : Tensors.kv(in.compressed(), DType.F32);
        Dsv4Config cfg = Dsv4Config.of(ratio(c), c.window(), 0).withRowQ0(rowQ0);
        return Dsv4Attention.attention(Tensors.of4(in.q(), DType.F32), k, k, compressed, null,
                Tensors.sinks(in.sinks()), cfg);
    }

    /** Row {@code i} run alone: its live keys only, its own blocks, rawPrefix 0. */
    static Tensor alone(RaggedCohort c, RaggedCohort.Inputs in, int i) {
        RaggedCohort.Row row = in.rows().get(i);
        Tensor k = Tensors.kv(row.k(), DType.F32);
        Tensor compressed = c.tcOf(i) == 0 ? null : Tensors.kv(row.compressed(), DType.F32);
        return Dsv4Attention.attention(Tensors.of4(row.q(), DType.F32), k, k, compressed, null,
                Tensors.sinks(in.sinks()), Dsv4Config.of(ratio(c), c.window(), 0));
    }

    /** Row {@code i} of a batched output as its own {@code [1][H][tq][D]}. */
    static double[][][][] row(Tensor batched, int i) {
        return new double[][][][] {Tensors.toArray4(batched)[i]};
    }
}
