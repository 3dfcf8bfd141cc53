package io.attnproof.attention.mtp;

import io.attnproof.attention.v4.V4Config;
import io.attnproof.attention.v4.V4Model;
import io.attnproof.attention.v4.V4Weights;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * R7, one direct test per use of the shared {@code cache_len} in {@code step_full}: a ragged PER_SEQUENCE decode
 * reports, at the place the decoder computes it, the value of each use ({@link StepObserver}); each is held against
 * the row's own length {@code L_i} read from its cache before the step. Values are reported before they are used, so
 * a use that then fails (a slice past the row's end, a cache refusing a length) is still checked here.
 */
@Claim("R7")
class SharedCacheLenUsesTest {
    static final long SEED = 7107;
    static final int[] PROMPT_LENGTHS = {5, 11, 17, 26};
    static final int NEW_TOKENS = 24;

    static Trace trace;

    /** Every observation of one decode, and each use's wrong rows against the per-row expectation. */
    static final class Trace implements StepObserver {
        final Map<Integer, int[]> cachedAtStep = new HashMap<>();
        long observations1;
        long wrong1;
        long observations2;
        long wrong2;
        long observations3;
        long wrong3;
        long observations4;
        long wrong4;
        long rowsBelowWidth;
        RuntimeException failure;   // the end-to-end result is SpeculativeDecodeTest's; here only the uses count
        final List<String> firstWrong = new ArrayList<>();

        @Override
        public void uncached(int step, int[] tokens, int[] cached, int[] uncached) {
            cachedAtStep.put(step, cached.clone());
            int width = java.util.Arrays.stream(cached).max().orElse(0);
            for (int i = 0; i < cached.length; i++) {
                observations1++;
                rowsBelowWidth += cached[i] < width ? 1 : 0;
                if (uncached[i] != tokens[i] - cached[i]) {
                    wrong1++;
                    note("use 1 step " + step + " row " + i + ": uncached " + uncached[i] + ", tokens " + tokens[i]
                            + " - L_i " + cached[i]);
                }
            }
        }

        @Override
        public void slice(int step, int row, int from, int tokens) {
            observations2++;
            int own = cachedAtStep.get(step)[row];
            if (from != own) {
                wrong2++;
                note("use 2 step " + step + " row " + row + ": sliced from " + from + ", L_i " + own);
            }
        }

        @Override
        public void offsets(int step, int[] cached, long[] rowQ0) {
            int[] own = cachedAtStep.get(step);
            for (int i = 0; i < own.length; i++) {
                observations3++;
                if (rowQ0 == null || rowQ0[i] != own[i]) {
                    wrong3++;
                    note("use 3 step " + step + " row " + i + ": offset " + (rowQ0 == null ? "none" : rowQ0[i])
                            + ", L_i " + own[i]);
                }
            }
        }

        @Override
        public void recorded(int step, int[] cached, int[] committed, int[] lengths) {
            int[] own = cachedAtStep.get(step);
            for (int i = 0; i < own.length; i++) {
                observations4++;
                if (lengths[i] != own[i] + committed[i]) {
                    wrong4++;
                    note("use 4 step " + step + " row " + i + ": records " + lengths[i] + ", L_i " + own[i]
                            + " + committed " + committed[i]);
                }
            }
        }

        private void note(String s) {
            if (firstWrong.size() < 3) {
                firstWrong.add(s);
            }
        }
    }

    @BeforeAll
    static void decodeARaggedBatchPerSequence() {
        V4Model model = new V4Model(V4Weights.seeded(V4Config.small(SEED)));
        List<List<Integer>> prompts = SpeculativeDecodeTest.prompts(model, SEED, PROMPT_LENGTHS);
        trace = new Trace();
        try {
            new SpeculativeDecoder(model, new SpeculativeDecoder.Options(KvAdvance.PER_SEQUENCE, true, true), trace)
                    .run(prompts, NEW_TOKENS, 100);
        } catch (RuntimeException e) {
            trace.failure = e; // a use that went wrong may make a later step fail; the uses are judged first
        }
    }

    /** Degeneracy shared by every use: rows sit below the batch's width, so L_i and max_j L_j differ. */
    private static void ragged(Evidence ev, long observations) {
        ev.seed(SEED);
        ev.degeneracy("row_steps_with_l_i_below_the_width", trace.rowsBelowWidth, Comparison.GE, 3,
                "the rows must have different lengths");
        ev.degeneracy("observations", observations, Comparison.GE, 1, "the use must be reached");
        if (trace.failure != null) {
            System.err.println("R7: the decode failed after its uses were observed: " + trace.failure);
        }
    }

    @Test
    void use1UncachedCountsAreTokensMinusTheRowsOwnLength(Evidence ev) {
        ragged(ev, trace.observations1);
        ev.checkEqual("use1_rows_whose_uncached_is_not_tokens_minus_l_i", trace.wrong1, 0);
    }

    @Test
    void use2TheUncachedSliceStartsAtTheRowsOwnLength(Evidence ev) {
        ragged(ev, trace.observations2);
        ev.checkEqual("use2_rows_sliced_from_another_index_than_l_i", trace.wrong2, 0);
    }

    @Test
    void use3TheOffsetsHandedToAttentionAreTheRowsOwnLengths(Evidence ev) {
        ragged(ev, trace.observations3);
        ev.checkEqual("use3_rows_whose_offset_is_not_l_i", trace.wrong3, 0);
    }

    @Test
    void use4TheRecordedLengthIsTheRowsOwnLengthPlusItsCommit(Evidence ev) {
        ragged(ev, trace.observations4);
        ev.checkEqual("use4_rows_recording_another_length_than_l_i_plus_committed", trace.wrong4, 0);
    }
}
