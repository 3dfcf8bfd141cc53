package io.attnproof.attention.mtp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.v4.RowState;
import io.attnproof.attention.v4.V4Config;
import io.attnproof.attention.v4.V4Model;
import io.attnproof.attention.v4.V4Weights;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Contract of the decoders and the step arithmetic on a 2-layer model of vocab 16 (milliseconds): the refusals and
 * their boundaries, the greedy reference against teacher forcing, the step counts, the observer's calls and the
 * latched decision.
 */
class DecoderContractTest {
    static final V4Model MODEL = new V4Model(V4Weights.seeded(new V4Config(16, 8, 2, 4, 8, 2, 32, 1.0, 2024)));

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    @Test
    void stepAccountingRefusesAndComputesEachUse() {
        assertEquals(0, StepAccounting.uncached(3, 3));
        assertEquals(2, StepAccounting.uncached(5, 3));
        refused("cached = 4: must be <= the row's token count 3", () -> StepAccounting.uncached(3, 4));
        assertArrayEquals(new int[] {1, 5}, StepAccounting.nextLengths(new int[] {1, 3}, new int[] {0, 2}));
        refused("committed.length = 1: must equal the batch 2",
                () -> StepAccounting.nextLengths(new int[] {1, 3}, new int[] {1}));
        refused("committed[1] = -1: must be >= 0", () -> StepAccounting.nextLengths(new int[] {1, 3}, new int[] {0, -1}));
        assertArrayEquals(new int[] {2, 0, 4}, StepAccounting.leads(new int[] {3, 5, 1}));
        assertArrayEquals(new long[] {3, 5}, StepAccounting.seqlenOffsets(new int[] {3, 5}));
    }

    /** No bigram prior: the greedy token depends on the context, so a decode that loses cached tokens shows. */
    static final V4Model NO_PRIOR = new V4Model(V4Weights.seeded(new V4Config(16, 8, 2, 4, 8, 2, 32, 0.0, 2024)));

    @Test
    void greedyDecodingAloneEqualsTeacherForcingOnTheWholePrefix() {
        // Degeneracy, measured: without its context (the last token alone) the model would pick other tokens.
        List<Integer> contextFree = new ArrayList<>();
        List<Integer> prompt = List.of(3, 1, 4, 1, 5);
        List<Integer> out = GreedyDecoder.decodeAlone(NO_PRIOR, prompt, 6);
        assertEquals(11, out.size());
        assertEquals(prompt, out.subList(0, 5));
        for (int n = 5; n < 11; n++) {
            RowState fresh = NO_PRIOR.newRow(out.subList(0, n));
            int[] toks = out.subList(0, n).stream().mapToInt(Integer::intValue).toArray();
            V4Model.Forward f = NO_PRIOR.forward(List.of(fresh), new int[][] {toks}, null);
            assertEquals(V4Model.argmax(f.logits()[0][n - 1]), out.get(n), "token " + n);
            RowState alone = NO_PRIOR.newRow(List.of(out.get(n - 1)));
            contextFree.add(V4Model.argmax(NO_PRIOR.forward(List.of(alone), new int[][] {{out.get(n - 1)}}, null)
                    .logits()[0][0]));
        }
        assertNotEquals(out.subList(5, 11), contextFree, "the greedy tokens must depend on the cached context");
    }

    /** Counts the observer calls of a run. */
    static final class Counting implements StepObserver {
        final List<String> calls = new ArrayList<>();

        @Override
        public void slice(int step, int row, int from, int tokens) {
            calls.add("slice " + step + " row " + row + " from " + from + " of " + tokens);
        }

        @Override
        public void recorded(int step, int[] cached, int[] committed, int[] lengths) {
            calls.add("recorded " + step + " " + java.util.Arrays.toString(lengths));
        }
    }

    @Test
    void aDeferredRunTakesOneStepPerTokenAndReportsEveryUse() {
        Counting obs = new Counting();
        SpeculativeDecoder d = new SpeculativeDecoder(MODEL,
                new SpeculativeDecoder.Options(KvAdvance.PER_SEQUENCE, true, false), obs);
        SpeculativeDecoder.Result r = d.run(List.of(List.of(1, 2), List.of(3, 4, 5)), 3, 2);
        // prefill emits token 1 of 3; steps 1 and 2 emit tokens 2 and 3: exactly 2 steps, maxSteps = 2 suffices
        assertEquals(new SpeculativeDecoder.Stats(2, 0, 2, 0), r.stats());
        assertEquals(5, r.tokens().get(0).size());
        assertEquals(6, r.tokens().get(1).size());
        assertEquals(List.of("slice 1 row 0 from 2 of 3", "slice 1 row 1 from 3 of 4", "recorded 1 [3, 4]",
                "slice 2 row 0 from 3 of 4", "slice 2 row 1 from 4 of 5", "recorded 2 [4, 5]"), obs.calls);
        assertSame(r.decision(), d.decision().orElseThrow());
        refused("steps = 1: must stay below maxSteps = 1", () -> new SpeculativeDecoder(MODEL,
                new SpeculativeDecoder.Options(KvAdvance.PER_SEQUENCE, true, false)).run(List.of(List.of(1, 2)), 3, 1));
        refused("prompts = []: must hold at least one prompt", () -> new SpeculativeDecoder(MODEL,
                new SpeculativeDecoder.Options(KvAdvance.PER_SEQUENCE, true, false)).run(List.of(), 3, 1));
    }

    @Test
    void theLatchReportsItsDecision() {
        KvAdvanceLatch latch = new KvAdvanceLatch();
        assertEquals(java.util.Optional.empty(), latch.decision());
        Capabilities all = new Capabilities(Capabilities.Check.pass(Capabilities.CACHE),
                Capabilities.Check.pass(Capabilities.TARGET), Capabilities.Check.pass(Capabilities.STEP));
        KvAdvanceLatch.Decision d = latch.latch(KvAdvance.PER_SEQUENCE, all);
        assertSame(d, latch.decision().orElseThrow());
        assertEquals(KvAdvance.PER_SEQUENCE, d.mode());
    }
}
