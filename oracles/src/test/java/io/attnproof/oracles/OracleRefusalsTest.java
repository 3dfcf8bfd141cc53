package io.attnproof.oracles;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.Test;

/**
 * Every argument an oracle refuses, at the edge of its rule: the first value outside is refused with a message naming
 * the parameter, its value and the rule, the last value inside is accepted. An oracle that silently takes a bad
 * index reads another query's row, and every claim measured against it would compare with the wrong truth.
 */
class OracleRefusalsTest {

    private static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    @Test
    void theAdmitRulesRefuseNegativePositionsAndBlocks() {
        refused("p = -1 must be >= 0", () -> AdmitRules.rawAdmits(-1, 0, 1));
        refused("j = -1 must be >= 0", () -> AdmitRules.rawAdmits(0, -1, 1));
        refused("window = 0 must be >= 1", () -> AdmitRules.rawAdmits(0, 0, 0));
        assertEquals(true, AdmitRules.rawAdmits(0, 0, 1));
        refused("b = -1 must be >= 0", () -> AdmitRules.compressedAdmits(3, -1, 4));
        assertEquals(true, AdmitRules.compressedAdmits(3, 0, 4));
    }

    @Test
    void theSinksOracleRefusesANegativeWindowAndTooFewKvHeads() {
        refused("window = -1 must be >= 0", () -> SinksAttentionOracle.causalAdmits(0, 0, 1, 1, -1));
        assertEquals(true, SinksAttentionOracle.causalAdmits(0, 0, 1, 1, 0));
        refused("kvHeads = 0 must be >= 1", () -> SinksAttentionOracle.kvHead(0, 4, 0));
        refused("queryHeads = 4 must be a multiple of kvHeads = 3", () -> SinksAttentionOracle.kvHead(0, 4, 3));
        assertEquals(1, SinksAttentionOracle.kvHead(3, 4, 2));
    }

    @Test
    void theSinksOraclesLogitsRefuseEveryIndexOutsideTheProblem() {
        SinksProblem p = SinksAttentionOracleTest.random(3, 2, 4, 2, 3, 5, 4, 0, true);
        refused("b = -1 must be in [0, 2)", () -> SinksAttentionOracle.logits(p, -1, 0, 0));
        refused("b = 2 must be in [0, 2)", () -> SinksAttentionOracle.logits(p, 2, 0, 0));
        refused("h = -1 must be in [0, 4)", () -> SinksAttentionOracle.logits(p, 0, -1, 0));
        refused("h = 4 must be in [0, 4)", () -> SinksAttentionOracle.logits(p, 0, 4, 0));
        refused("r = -1 must be in [0, 3)", () -> SinksAttentionOracle.logits(p, 0, 0, -1));
        refused("r = 3 must be in [0, 3)", () -> SinksAttentionOracle.logits(p, 0, 0, 3));
        assertDoesNotThrow(() -> SinksAttentionOracle.logits(p, 0, 0, 0));
        assertDoesNotThrow(() -> SinksAttentionOracle.logits(p, 1, 3, 2));
        refused("precision must not be null", () -> SinksAttentionOracle.attendNaive(p, null));
        refused("tier must not be null", () -> SinksAttentionOracle.attendNaive(p, Precision.F32, null));
    }

    @Test
    void theUnionOraclesLogitsRefuseEveryIndexOutsideTheProblem() {
        UnionProblem p = Problems.random(5, 2, 3, 2, 6, 2, 4, 4, 2, 0, true);
        refused("b = -1 must be in [0, 2)", () -> UnionAttentionOracle.logits(p, -1, 0, 0));
        refused("b = 2 must be in [0, 2)", () -> UnionAttentionOracle.logits(p, 2, 0, 0));
        refused("h = -1 must be in [0, 3)", () -> UnionAttentionOracle.logits(p, 0, -1, 0));
        refused("h = 3 must be in [0, 3)", () -> UnionAttentionOracle.logits(p, 0, 3, 0));
        refused("r = -1 must be in [0, 2)", () -> UnionAttentionOracle.logits(p, 0, 0, -1));
        refused("r = 2 must be in [0, 2)", () -> UnionAttentionOracle.logits(p, 0, 0, 2));
        assertDoesNotThrow(() -> UnionAttentionOracle.logits(p, 0, 0, 0));
        assertDoesNotThrow(() -> UnionAttentionOracle.logits(p, 1, 2, 1));
        refused("precision must not be null", () -> UnionAttentionOracle.attendNaive(p, null));
        refused("tier must not be null", () -> UnionAttentionOracle.attendNaive(p, Precision.F32, null));
    }

    @Test
    void theSinkSoftmaxRefusesANanLogit() {
        refused("logits[1] = NaN must be finite or -inf", () -> SinkSoftmax.closedForm(new double[] {0, Double.NaN}, 0));
        refused("sink = Infinity must be finite or -inf",
                () -> SinkSoftmax.closedForm(new double[] {0, 1}, Double.POSITIVE_INFINITY));
    }

    @Test
    void theCompressorOracleRefusesMissingMismatchedAndNonFiniteInputs() {
        double[][] kv = CompressorOracleTest.tinyKv();
        double[][] score = CompressorOracleTest.tinyScore();
        double[][] ape = CompressorOracleTest.tinyApe();
        double[] gamma = CompressorOracleTest.TINY_GAMMA;
        refused("kv, score, ape, gamma must all be non-null",
                () -> CompressorOracle.compressNaive(kv, score, ape, null, 4, 2, Precision.F32));
        refused("score.length = 7 must equal kv.length = 8", () -> CompressorOracle.compressNaive(kv,
                java.util.Arrays.copyOf(score, 7), ape, gamma, 4, 2, Precision.F32));
        refused("precision must not be null", () -> CompressorOracle.compressNaive(kv, score, ape, gamma, 4, 2, null));
        refused("ape.length = 7 must be 8 for ratio 4",
                () -> CompressorOracle.compress(kv, score, java.util.Arrays.copyOf(ape, 7), gamma, 4, 2));
        double[][] nanApe = CompressorOracleTest.tinyApe();
        nanApe[2][0] = Double.NaN;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.compress(kv, score, nanApe, gamma, 4, 2));
        assertEquals(true, e.getMessage().startsWith("ape[2]"), e.getMessage());
        refused("score must not be null", () -> CompressorOracle.gateWeights(null, ape, 4, 2));
        IllegalArgumentException shortApe = assertThrows(IllegalArgumentException.class,
                () -> CompressorOracle.gateWeights(score, java.util.Arrays.copyOf(ape, 7), 4, 2));
        assertEquals("ape.length = 7 must be 8 for ratio 4", shortApe.getMessage());
    }
}
