package io.attnproof.attention;

import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;

/**
 * One union-attention case run three ways on identical inputs: the system under test, the fp64 oracle and the
 * oracle's naive same-precision form; the error limit is docs/claims.md's tolerance rule.
 */
public record UnionRun(UnionProblem problem, double[][][][] actual, double[][][][] oracle, Diff diff, double naiveErr,
        double limit) {

    /** Shape and layer parameters of one case. */
    public record Spec(int batch, int heads, int tq, int tk, int tc, int headDim, int window, CompressRatio ratio,
            int rawPrefix, Precision precision) {

        public Dsv4Config config() {
            return Dsv4Config.of(ratio, window, rawPrefix);
        }

        public DType dtype() {
            return Tensors.dtype(precision);
        }

        public UnionInputs inputs(long seed) {
            return UnionInputs.generate(seed, batch, heads, tq, tk, tc, headDim, precision, 2.0).sharingKv();
        }
    }

    /** Runs {@code spec} on inputs from {@code seed}, with no caller mask. */
    public static UnionRun of(Spec spec, long seed) {
        UnionInputs in = spec.inputs(seed);
        return of(spec, in, in.sinks(), null, null);
    }

    /**
     * Runs {@code spec} on {@code in} with {@code sinks} (null: none); {@code callerMask} is handed to the system
     * as is and {@code oracleMask} is the same mask in the oracle's absolute form.
     */
    public static UnionRun of(Spec spec, UnionInputs in, double[] sinks, Tensor callerMask, double[][][] oracleMask) {
        UnionProblem problem = new UnionProblem(in.q(), in.k(), in.v(), in.compressed(), sinks, oracleMask,
                spec.window(), spec.ratio().value(), spec.rawPrefix());
        double[][][][] actual = Tensors.toArray4(run(spec, in, sinks, callerMask));
        double[][][][] oracle = UnionAttentionOracle.attend(problem);
        Diff diff = Diff.of(oracle, actual);
        double naiveErr = Diff.of(oracle, UnionAttentionOracle.attendNaive(problem, spec.precision())).maxAbs();
        return new UnionRun(problem, actual, oracle, diff, naiveErr,
                Tolerance.limit(spec.precision(), naiveErr, diff.oracleMaxAbs()));
    }

    /** The system under test on {@code in}; V is passed as the same handle as K, as V4 does. */
    public static Tensor run(Spec spec, UnionInputs in, double[] sinks, Tensor callerMask) {
        return run(spec, in, sinks, callerMask, Backend.cpu());
    }

    /** {@link #run(Spec, UnionInputs, double[], Tensor)} with dsv4_attention's last stage on {@code backend}. */
    public static Tensor run(Spec spec, UnionInputs in, double[] sinks, Tensor callerMask, Backend backend) {
        DType dt = spec.dtype();
        Tensor k = Tensors.kv(in.k(), dt);
        Tensor v = in.v() == in.k() ? k : Tensors.kv(in.v(), dt);
        Tensor compressed = spec.tc() == 0 ? null : Tensors.kv(in.compressed(), dt);
        return Dsv4Attention.attention(Tensors.of4(in.q(), dt), k, v, compressed, callerMask,
                sinks == null ? null : Tensors.sinks(sinks), spec.config(), backend);
    }

    /**
     * Sinks lifted by {@code ln(keys)} so that each competes with a whole row of keys: the sink then carries real
     * mass, which gives the drop-the-sink controls their teeth on long rows.
     */
    public static double[] heavySinks(double[] sinks, int keys) {
        double[] out = new double[sinks.length];
        for (int h = 0; h < sinks.length; h++) {
            out[h] = (float) (sinks[h] + Math.log(keys));
        }
        return out;
    }

    /** Largest |a - b| over all elements. */
    public static double maxAbsDiff(double[][][][] a, double[][][][] b) {
        return Diff.of(a, b).maxAbs();
    }
}
