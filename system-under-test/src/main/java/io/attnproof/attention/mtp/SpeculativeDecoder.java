package io.attnproof.attention.mtp;

import io.attnproof.attention.Require;
import io.attnproof.attention.kvcache.KvCache;
import io.attnproof.attention.mask.RaggedRows;
import io.attnproof.attention.v4.RowState;
import io.attnproof.attention.v4.V4Model;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * MTP speculative decoding of a batch of sequences with greedy acceptance. {@code step_full} keys every use of a
 * length on the row's own cached count {@code L_i} ({@link StepAccounting}): uncached tokens, the token slice fed,
 * the per-row offsets handed to attention (when the per-sequence flag is on) and the length recorded after commit.
 * A step that cannot be fused defers to the target's own decode at {@code t_q == 1}, which still masks each row's
 * dead prefix.
 */
public final class SpeculativeDecoder {
    /** How a run is configured: the requested advance, the per-sequence flag, and whether drafts are proposed. */
    public record Options(KvAdvance requested, boolean perSequenceFlag, boolean drafts) {
    }

    /** Counters of one run. */
    public record Stats(int steps, int fusedSteps, int deferrals, int acceptedDrafts) {
    }

    /** A finished run: each row's tokens, the latched decision and the counters. */
    public record Result(List<List<Integer>> tokens, KvAdvanceLatch.Decision decision, Stats stats) {
    }

    private final V4Model model;
    private final Options options;
    private final StepObserver observer;
    private final KvAdvanceLatch latch = new KvAdvanceLatch();
    private int step;

    public SpeculativeDecoder(V4Model model, Options options) {
        this(model, options, StepObserver.NONE);
    }

    /** A decoder reporting each step's four length uses to {@code observer}. */
    public SpeculativeDecoder(V4Model model, Options options, StepObserver observer) {
        this.model = Require.present("model", model);
        this.options = Require.present("options", options);
        this.observer = Require.present("observer", observer);
    }

    /** {@code step_carries_per_sequence_lengths}: this step keys on per-row lengths. */
    public static boolean stepCarriesPerSequenceLengths() {
        return true;
    }

    /** The three capability checks for this model over {@code cache}. */
    public Capabilities capabilities(KvCache cache) {
        return new Capabilities(
                cache.supportsPerSequenceAdvance() ? Capabilities.Check.pass(Capabilities.CACHE)
                        : Capabilities.Check.fail(Capabilities.CACHE, cache.describe() + " cannot carry a per-row length"),
                model.masksRaggedBatches() ? Capabilities.Check.pass(Capabilities.TARGET)
                        : Capabilities.Check.fail(Capabilities.TARGET,
                                "the target collapses row_q0 to the batch's scalar q0"),
                stepCarriesPerSequenceLengths() ? Capabilities.Check.pass(Capabilities.STEP)
                        : Capabilities.Check.fail(Capabilities.STEP,
                                "step_full keys the fused step on one shared cache_len = max_j L_j"));
    }

    /** Decodes every prompt until each row has at least {@code newTokens} new tokens, in at most {@code maxSteps}. */
    public Result run(List<List<Integer>> prompts, int newTokens, int maxSteps) {
        Require.that(prompts != null && !prompts.isEmpty(), "prompts", prompts, "hold at least one prompt");
        List<RowState> rows = new ArrayList<>();
        for (List<Integer> p : prompts) {
            rows.add(prefill(model, p));
        }
        KvAdvanceLatch.Decision decision = latch.latch(options.requested(), capabilities(rows.get(0).cache()));
        int steps = 0;
        int fused = 0;
        int deferrals = 0;
        int accepted = 0;
        while (!done(rows, prompts, newTokens)) {
            Require.that(steps < maxSteps, "steps", steps, "stay below maxSteps = " + maxSteps);
            steps++;
            step = steps;
            int[] uncached = new int[rows.size()];
            int[] tokens = new int[rows.size()];
            int[] cached = new int[rows.size()];
            for (int i = 0; i < rows.size(); i++) {
                tokens[i] = rows.get(i).tokens().size();
                cached[i] = rows.get(i).cached();
                uncached[i] = StepAccounting.uncached(tokens[i], cached[i]); // use (1)
            }
            observer.uncached(steps, tokens, cached, uncached);
            boolean windowOk = options.drafts();
            for (int u : uncached) {
                windowOk &= u == 1;
            }
            if (windowOk) {
                accepted += fusedStep(rows, decision.mode());
                fused++;
            } else {
                targetDecode(rows);
                deferrals++;
            }
        }
        List<List<Integer>> tokens = new ArrayList<>();
        rows.forEach(r -> tokens.add(r.tokens()));
        return new Result(tokens, decision, new Stats(steps, fused, deferrals, accepted));
    }

    /** The latched decision of this decoder, once {@link #run} has started. */
    public Optional<KvAdvanceLatch.Decision> decision() {
        return latch.decision();
    }

    /** One fused step: each row's uncached token plus its draft at t_q = 2, verified greedily; returns accepted drafts. */
    private int fusedStep(List<RowState> rows, KvAdvance mode) {
        int b = rows.size();
        int[] cached = new int[b];
        int[][] fed = new int[b][];
        int[] drafts = new int[b];
        for (int i = 0; i < b; i++) {
            RowState row = rows.get(i);
            cached[i] = row.cached();
            List<Integer> uncachedToks = uncachedTokens(row, i, cached[i]);
            drafts[i] = model.draft(uncachedToks.get(uncachedToks.size() - 1));
            fed[i] = new int[] {uncachedToks.get(0), drafts[i]};
        }
        V4Model.Forward f = model.forward(rows, fed, offsets(cached));
        int[] uPlusA = new int[b];
        int[] y1 = new int[b];
        int[] y2 = new int[b];
        int accepted = 0;
        for (int i = 0; i < b; i++) {
            y1[i] = V4Model.argmax(f.logits()[i][0]);
            y2[i] = V4Model.argmax(f.logits()[i][1]);
            int a = drafts[i] == y1[i] ? 1 : 0;
            accepted += a;
            uPlusA[i] = 1 + a;
        }
        int[] committed = new int[b];
        for (int i = 0; i < b; i++) {
            committed[i] = mode.committed(uPlusA, i);
        }
        model.commit(rows, f, committed, lengths(cached, committed));
        for (int i = 0; i < b; i++) {
            emit(rows.get(i), y1[i]); // the draft when accepted (it equals y1), the correction otherwise
            if (committed[i] == 2) {
                emit(rows.get(i), y2[i]);
            }
        }
        return accepted;
    }

    /** The deferral: the target's own decode of each row's single uncached token, at t_q == 1. */
    private void targetDecode(List<RowState> rows) {
        int b = rows.size();
        int[] cached = new int[b];
        int[][] fed = new int[b][];
        for (int i = 0; i < b; i++) {
            RowState row = rows.get(i);
            cached[i] = row.cached();
            List<Integer> uncachedToks = uncachedTokens(row, i, cached[i]);
            Require.that(uncachedToks.size() == 1, "uncached tokens of row " + i, uncachedToks.size(),
                    "be 1 for the target's own decode");
            fed[i] = new int[] {uncachedToks.get(0)};
        }
        V4Model.Forward f = model.forward(rows, fed, offsets(cached));
        int[] one = new int[b];
        java.util.Arrays.fill(one, 1);
        model.commit(rows, f, one, lengths(cached, one));
        for (int i = 0; i < b; i++) {
            emit(rows.get(i), V4Model.argmax(f.logits()[i][0]));
        }
    }

    /** Use (2): row {@code i}'s uncached tokens, sliced from its own cached length. */
    private List<Integer> uncachedTokens(RowState row, int i, int cached) {
        int from = cached;
        observer.slice(step, i, from, row.tokens().size());
        return row.tokens().subList(from, row.tokens().size());
    }

    /** Use (3): the per-row offsets, reaching attention only with the per-sequence flag on. */
    private long[] offsets(int[] cached) {
        long[] rowQ0 = RaggedRows.rowQ0From(StepAccounting.seqlenOffsets(cached), options.perSequenceFlag());
        observer.offsets(step, cached, rowQ0);
        return rowQ0;
    }

    /** Use (4): the lengths each row's cache records after committing. */
    private int[] lengths(int[] cached, int[] committed) {
        int[] lengths = StepAccounting.nextLengths(cached, committed);
        observer.recorded(step, cached, committed, lengths);
        return lengths;
    }

    /** Prefills {@code prompt} alone and emits the first greedy token (left uncached). */
    static RowState prefill(V4Model model, List<Integer> prompt) {
        RowState row = model.newRow(prompt);
        int[] toks = prompt.stream().mapToInt(Integer::intValue).toArray();
        List<RowState> rows = List.of(row);
        V4Model.Forward f = model.forward(rows, new int[][] {toks}, null);
        model.commit(rows, f, new int[] {toks.length}, new int[] {toks.length});
        emit(row, V4Model.argmax(f.logits()[0][toks.length - 1]));
        return row;
    }

    static void emit(RowState row, int token) {
        row.append(token);
    }

    private static boolean done(List<RowState> rows, List<List<Integer>> prompts, int newTokens) {
        for (int i = 0; i < rows.size(); i++) {
            if (rows.get(i).tokens().size() < prompts.get(i).size() + newTokens) {
                return false;
            }
        }
        return true;
    }
}
