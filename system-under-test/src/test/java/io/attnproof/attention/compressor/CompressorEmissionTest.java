package io.attnproof.attention.compressor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * K2 (b): block b does not exist after token (b+1)R - 2 and does after (b+1)R - 1; a prefill of T tokens emits
 * floor(T/R) blocks for T in {0, R-1, R, R+1, 5R+3}; an emission rule one token early disagrees.
 */
@Claim("K2")
class CompressorEmissionTest {
    static final int D = 8;

    @ParameterizedTest(name = "R = {0}")
    @ValueSource(ints = {4, 128})
    void blockBExistsOnceToken_bPlus1TimesRMinus1IsSeen(int ratio, Evidence ev) {
        long seed = 3_000L + ratio;
        ev.seed(seed);
        int blocks = 3;
        Compressor compressor = Compressor.of(CompressorWeights.seeded(ratio, D, seed));
        Tokens in = Tokens.generate(seed, 0, blocks * ratio + 2, compressor.width(), 2.0);

        CompressorState state = compressor.newState();
        long wrong = 0;
        long earlyRuleDisagrees = 0;
        long earlyRuleMin = 0;
        for (int t = 0; t < in.length(); t++) {
            List<float[]> emitted = state.push(in.kv()[t], in.score()[t]);
            long seen = t + 1;
            boolean completesABlock = seen % ratio == 0;   // t == (b+1)R - 1
            wrong += emitted.size() == (completesABlock ? 1 : 0) ? 0 : 1;
            wrong += state.tc() == seen / ratio ? 0 : 1;
            wrong += state.seen() == seen && state.pending() == seen % ratio ? 0 : 1;
            // Control: the one-token-early rule floor((seen + 1) / R) against the system's block count.
            earlyRuleDisagrees += state.tc() == (seen + 1) / ratio ? 0 : 1;
            earlyRuleMin += (seen + 1) / ratio == seen / ratio ? 0 : 1;
        }
        // Measured on the system's stream: several blocks emitted and a remainder still waiting.
        ev.degeneracy("blocks_emitted_by_the_stream", state.tc(), Comparison.GE, 2, in.length() + " tokens");
        ev.degeneracy("tokens_pending_after_the_stream", state.pending(), Comparison.GE, 1, "the remainder waits");
        for (int b = 0; b < blocks; b++) {   // the boundary pair itself, replayed on fresh streams
            CompressorState before = compressor.newState();
            before.pushAll(in.slice(0, (b + 1) * ratio - 1).kv(), in.slice(0, (b + 1) * ratio - 1).score());
            wrong += before.tc() == b ? 0 : 1;   // after token (b+1)R - 2: block b does not exist
            List<float[]> last = before.push(in.kv()[(b + 1) * ratio - 1], in.score()[(b + 1) * ratio - 1]);
            wrong += before.tc() == b + 1 && last.size() == 1 ? 0 : 1;   // after (b+1)R - 1 it does
        }
        ev.checkBitIdentical("emission_steps_wrong", wrong);
        ev.controlAtLeast("one_token_early_rule_disagreements", earlyRuleDisagrees, Math.max(1, earlyRuleMin));
    }

    @ParameterizedTest(name = "R = {0}")
    @ValueSource(ints = {4, 128})
    void prefillEmitsFloorTOverRBlocks(int ratio, Evidence ev) {
        long seed = 3_100L + ratio;
        ev.seed(seed);
        Compressor compressor = Compressor.of(CompressorWeights.seeded(ratio, D, seed));
        int[] lengths = {0, ratio - 1, ratio, ratio + 1, 5 * ratio + 3};
        Tokens all = Tokens.generate(seed, 0, 5 * ratio + 3, compressor.width(), 2.0);
        // Measured on the inputs: lengths one token short of a block boundary (where the early rule differs).
        long earlyRuleMin = 0;
        for (int t : lengths) {
            earlyRuleMin += (t + 1) / ratio == t / ratio ? 0 : 1;
        }
        ev.degeneracy("lengths_one_token_short_of_a_block", earlyRuleMin, Comparison.GE, 1, java.util.Arrays.toString(lengths));

        long wrong = 0;
        long earlyRuleDisagrees = 0;
        for (int t : lengths) {
            Tokens in = all.slice(0, t);
            int got = compressor.prefill(in.kv(), in.score()).size();
            CompressorState state = compressor.newState();
            int streamed = state.pushAll(in.kv(), in.score()).size();
            wrong += got == t / ratio ? 0 : 1;
            wrong += streamed == t / ratio && state.tc() == t / ratio && state.pending() == t % ratio ? 0 : 1;
            wrong += Compressor.tc(t, ratio) == t / ratio ? 0 : 1;
            earlyRuleDisagrees += (t + 1) / ratio == got ? 0 : 1;
        }
        ev.checkBitIdentical("prefill_block_counts_wrong", wrong);
        ev.controlAtLeast("one_token_early_rule_disagreements", earlyRuleDisagrees, earlyRuleMin);
        assertEquals(5, Compressor.of(CompressorWeights.seeded(ratio, D, seed)).prefill(all.kv(), all.score()).size());
    }
}
