package io.attnproof.attention.sinks;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;

/**
 * One sinks-attention output held against the fp64 oracle of {@code problem}, with docs/claims.md's tolerance limit
 * ({@code 2 x naive same-precision error + 2 x noise floor}).
 */
public record SinksRun(SinksProblem problem, double[][][][] actual, double[][][][] oracle, Diff diff, double naiveErr,
        double limit) {

    public static SinksRun of(SinksProblem problem, Tensor actual, Precision precision) {
        double[][][][] oracle = SinksAttentionOracle.attend(problem);
        double[][][][] got = Tensors.toArray4(actual);
        Diff diff = Diff.of(oracle, got);
        double naiveErr = Diff.of(oracle, SinksAttentionOracle.attendNaive(problem, precision)).maxAbs();
        return new SinksRun(problem, got, oracle, diff, naiveErr,
                Tolerance.limit(precision, naiveErr, diff.oracleMaxAbs()));
    }

    /** The oracle problem of {@code in} under the causal rule with {@code window}, with {@code mask} (or none). */
    public static SinksProblem problem(SinksInputs in, double[][][][] mask, int window) {
        return new SinksProblem(in.q(), in.k(), in.v(), in.sinks(), mask, window, true);
    }

    /** {@code [A][B][C][D]} as a rank-4 tensor on {@code device}. */
    public static Tensor tensor(double[][][][] x, DType dtype, Device device) {
        Tensor cpu = Tensors.of4(x, dtype);
        return Tensor.of(cpu.toFloatArray(), dtype, device, cpu.shape());
    }

    /** Sinks {@code [Hq]} as an F32 tensor on {@code device}. */
    public static Tensor sinks(double[] s, Device device) {
        Tensor cpu = Tensors.sinks(s);
        return Tensor.of(cpu.toFloatArray(), DType.F32, device, s.length);
    }

    /** The system's call on {@code in}, on {@code device}, through {@code sinks_attn}. */
    public static Tensor sinksAttn(SinksInputs in, DType dtype, Device device, double[][][][] mask, int window) {
        return sinksAttn(Backend.cpu(), in, dtype, device, mask, window);
    }

    /** {@code sinks_attn} on {@code backend}, the tensors on {@code device}. */
    public static Tensor sinksAttn(Backend backend, SinksInputs in, DType dtype, Device device, double[][][][] mask,
            int window) {
        return SinksAttention.sinksAttn(backend, tensor(in.q(), dtype, device), tensor(in.k(), dtype, device),
                tensor(in.v(), dtype, device), sinks(in.sinks(), device),
                mask == null ? null : tensor(mask, DType.F32, device), window, true);
    }

    /** Largest |a - b|. */
    public static double maxAbsDiff(double[][][][] a, double[][][][] b) {
        return Diff.of(a, b).maxAbs();
    }
}
