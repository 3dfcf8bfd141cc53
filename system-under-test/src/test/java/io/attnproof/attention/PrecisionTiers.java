package io.attnproof.attention;

import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.NaiveTier;
import io.attnproof.oracles.Precision;
import io.attnproof.oracles.SinksAttentionOracle;
import io.attnproof.oracles.SinksProblem;
import io.attnproof.oracles.UnionAttentionOracle;
import io.attnproof.oracles.UnionProblem;

/**
 * The precision-contract tier for F16/BF16 (docs/claims.md "Tolerance rule"): beside FlashAttention's compatibility bound,
 * the error must stay within 2 x the error of a same-dtype reference that keeps logits and probabilities in f32, plus
 * 2 x the noise floor. A kernel that rounds its scores or probabilities to the dtype passes the first, not this.
 */
public final class PrecisionTiers {
    private PrecisionTiers() {
    }

    /** Whether {@code p} has the second, tighter tier (the 16-bit dtypes). */
    public static boolean tiered(Precision p) {
        return p == Precision.F16 || p == Precision.BF16;
    }

    /** The contract tier's limit for a union-attention output of {@code problem} at {@code p}. */
    public static double unionLimit(UnionProblem problem, Precision p, double[][][][] oracle) {
        Diff naive = Diff.of(oracle, UnionAttentionOracle.attendNaive(problem, p, NaiveTier.CONTRACT));
        return Tolerance.limit(p, naive.maxAbs(), naive.oracleMaxAbs());
    }

    /** The contract tier's limit for a sinks-attention output of {@code problem} at {@code p}. */
    public static double sinksLimit(SinksProblem problem, Precision p, double[][][][] oracle) {
        Diff naive = Diff.of(oracle, SinksAttentionOracle.attendNaive(problem, p, NaiveTier.CONTRACT));
        return Tolerance.limit(p, naive.maxAbs(), naive.oracleMaxAbs());
    }

    /** Records {@code metric:precision_contract} for a 16-bit {@code p}: the same error against the tighter tier. */
    public static void check(Evidence e, String metric, Precision p, Diff diff, double contractLimit) {
        if (tiered(p)) {
            e.check(metric + ":precision_contract", diff.maxAbs(), contractLimit, diff.worst());
        }
    }
}
