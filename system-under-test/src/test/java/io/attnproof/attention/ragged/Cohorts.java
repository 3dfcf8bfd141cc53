package io.attnproof.attention.ragged;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.ragged.RaggedCohort;

/** Runs a ragged cohort through dsv4_attention batched, or one row alone with its dead prefix absent. */
public final class Cohorts {
    private Cohorts() {
    }

    public static CompressRatio ratio(RaggedCohort c) {
        return switch (c.ratio()) {
            case 0 -> CompressRatio.STANDARD;
            case 4 -> CompressRatio.CSA;
            default -> CompressRatio.HCA;
        };
    }

    /** The batched call with per-row positions {@code rowQ0} (null: the scalar path at the batch's position). */
    public static Tensor batched(RaggedCohort c, RaggedCohort.Inputs in, long[] rowQ0) {
        return batched(c, in, rowQ0, Backend.cpu());
    }

    /** {@link #batched(RaggedCohort, RaggedCohort.Inputs, long[])} with the last stage on {@code backend}. */
    public static Tensor batched(RaggedCohort c, RaggedCohort.Inputs in, long[] rowQ0, Backend backend) {
        return batched(c, in, rowQ0, backend, DType.F32);
    }

    /** The batched call in {@code dtype} (inputs rounded to it on write). */
    public static Tensor batched(RaggedCohort c, RaggedCohort.Inputs in, long[] rowQ0, Backend backend, DType dtype) {
        Tensor k = Tensors.kv(in.k(), dtype);
        Tensor compressed = c.tc() == 0 ? null : Tensors.kv(in.compressed(), dtype);
        Dsv4Config cfg = Dsv4Config.of(ratio(c), c.window(), 0).withRowQ0(rowQ0);
        return Dsv4Attention.attention(Tensors.of4(in.q(), dtype), k, k, compressed, null,
                Tensors.sinks(in.sinks()), cfg, backend);
    }

    /** Row {@code i} run alone: its live keys only, its own blocks, rawPrefix 0. */
    public static Tensor alone(RaggedCohort c, RaggedCohort.Inputs in, int i) {
        return alone(c, in, i, Backend.cpu());
    }

    /** {@link #alone(RaggedCohort, RaggedCohort.Inputs, int)} with the last stage on {@code backend}. */
    public static Tensor alone(RaggedCohort c, RaggedCohort.Inputs in, int i, Backend backend) {
        return alone(c, in, i, backend, DType.F32);
    }

    /** Row {@code i} alone in {@code dtype}. */
    public static Tensor alone(RaggedCohort c, RaggedCohort.Inputs in, int i, Backend backend, DType dtype) {
        RaggedCohort.Row row = in.rows().get(i);
        Tensor k = Tensors.kv(row.k(), dtype);
        Tensor compressed = c.tcOf(i) == 0 ? null : Tensors.kv(row.compressed(), dtype);
        return Dsv4Attention.attention(Tensors.of4(row.q(), dtype), k, k, compressed, null,
                Tensors.sinks(in.sinks()), Dsv4Config.of(ratio(c), c.window(), 0), backend);
    }

    /** Row {@code i} of a batched output as its own {@code [1][H][tq][D]}. */
    public static double[][][][] row(Tensor batched, int i) {
        return new double[][][][] {Tensors.toArray4(batched)[i]};
    }
}
