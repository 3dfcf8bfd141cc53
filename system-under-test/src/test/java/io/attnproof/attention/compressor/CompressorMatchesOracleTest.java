package io.attnproof.attention.compressor;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.fixtures.tolerance.Tolerance;
import io.attnproof.oracles.CompressorOracle;
import io.attnproof.oracles.Precision;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * K2 (a): R = 128 blocks pool [bR, (b+1)R) and R = 4 blocks pool [(b-1)R, (b+1)R) with one gate softmax each, then
 * RMSNorm, matching the fp64 oracle under the tolerance rule; pooling without the overlap, without ape, with ape one
 * row off, or without gamma disagrees.
 */
@Claim("K2")
class CompressorMatchesOracleTest {
    static final int D = 64;
    static final double GATE_SD = 2.0;
    /** A control must miss the claim by more than this, and by more than the tolerance limit. */
    static final double CONTROL_FLOOR = 1e-2;

    @ParameterizedTest(name = "R = {0}")
    @ValueSource(ints = {4, 128})
    void blocksMatchTheOracleAndEveryControlDisagrees(int ratio, Evidence ev) {
        long seed = 2_000L + ratio;
        ev.seed(seed);
        int t = ratio == 4 ? 40 * ratio + 3 : 3 * ratio + 5;
        CompressorWeights w = CompressorWeights.seeded(ratio, D, seed);
        Tokens in = Tokens.generate(seed, 0, t, w.width(), GATE_SD);
        double[][] kv = in.kvF64();
        double[][] score = in.scoreF64();
        double[][] ape = Tokens.f64(w.ape());
        double[] gamma = Tokens.f64(w.gamma());

        // Degeneracy first: the gate softmax must matter (not uniform), and for R = 4 the earlier half must carry mass.
        double[][][] gates = CompressorOracle.gateWeights(score, ape, ratio, D);
        double maxWeight = 0;
        double earlierMass = 0;
        int earlierChannels = 0;
        for (int b = 0; b < gates.length; b++) {
            for (double[] channel : gates[b]) {
                for (double x : channel) {
                    maxWeight = Math.max(maxWeight, x);
                }
                if (ratio == 4 && b > 0) {
                    for (int i = 0; i < ratio; i++) {
                        earlierMass += channel[i];
                    }
                    earlierChannels++;
                }
            }
        }
        ev.degeneracy("gates_not_uniform", maxWeight > 2.0 / ratio, "max gate weight " + maxWeight + " vs 2/R");
        ev.degeneracy("several_blocks", gates.length >= 3 && t % ratio != 0, gates.length + " blocks from T = " + t);
        if (ratio == 4) {
            double mean = earlierMass / earlierChannels;
            ev.degeneracy("earlier_half_carries_mass", mean > 0.25, "mean earlier-half weight " + mean);
        }

        List<float[]> actual = Compressor.of(w).prefill(in.kv(), in.score());
        double[][] oracle = CompressorOracle.compress(kv, score, ape, gamma, ratio, D);
        double[][] naive = CompressorOracle.compressNaive(kv, score, ape, gamma, ratio, D, Precision.F32);
        Diff diff = Diff.of(Tokens.wrap(oracle), Tokens.wrap(actual));
        double naiveErr = Diff.of(Tokens.wrap(oracle), Tokens.wrap(naive)).maxAbs();
        double limit = Tolerance.limit(Precision.F32, naiveErr, diff.oracleMaxAbs());
        ev.info("naive_same_precision_err", naiveErr);
        ev.check("blocks_minus_floor_t_over_r", Math.abs(actual.size() - t / ratio), 0, null);
        ev.check("max_abs_err", diff.maxAbs(), limit, diff.worst());

        double mustExceed = Math.max(CONTROL_FLOOR, limit);
        double[][][][] got = Tokens.wrap(actual);
        if (ratio == 4) {
            ev.controlGap("no_overlap", Diff.of(Tokens.wrap(nonOverlapping(kv, score, ape, gamma)), got).maxAbs(),
                    mustExceed);
        } else {
            double[][] shifted = CompressorOracle.compress(Arrays.copyOfRange(kv, 1, t),
                    Arrays.copyOfRange(score, 1, t), ape, gamma, ratio, D);
            ev.controlGap("block_span_shifted_by_one_token", Diff.of(Tokens.wrap(shifted), got).maxAbs(), mustExceed);
        }
        double[][] noApe = CompressorOracle.compress(kv, score, new double[ape.length][D], gamma, ratio, D);
        ev.controlGap("drop_ape", Diff.of(Tokens.wrap(noApe), got).maxAbs(), mustExceed);
        double[][] apeOffByOne = CompressorOracle.compress(kv, score, rotatedWithinHalves(ape, ratio), gamma, ratio, D);
        ev.controlGap("ape_one_row_off", Diff.of(Tokens.wrap(apeOffByOne), got).maxAbs(), mustExceed);
        double[] ones = new double[D];
        Arrays.fill(ones, 1.0);
        double[][] noGamma = CompressorOracle.compress(kv, score, ape, ones, ratio, D);
        ev.controlGap("rms_norm_without_gamma", Diff.of(Tokens.wrap(noGamma), got).maxAbs(), mustExceed);
    }

    /** R = 4 pooled without the overlap: every block is the oracle's block 0 of its own R tokens alone. */
    static double[][] nonOverlapping(double[][] kv, double[][] score, double[][] ape, double[] gamma) {
        int r = 4;
        double[][] out = new double[kv.length / r][];
        for (int b = 0; b < out.length; b++) {
            out[b] = CompressorOracle.compress(Arrays.copyOfRange(kv, b * r, (b + 1) * r),
                    Arrays.copyOfRange(score, b * r, (b + 1) * r), ape, gamma, r, gamma.length)[0];
        }
        return out;
    }

    /** ape with every position index off by one (row i takes row i+1, cyclically within each R-row half). */
    static double[][] rotatedWithinHalves(double[][] ape, int ratio) {
        double[][] out = new double[ape.length][];
        for (int i = 0; i < ape.length; i++) {
            int half = i / ratio * ratio;
            out[i] = ape[half + (i - half + 1) % ratio].clone();
        }
        return out;
    }
}
