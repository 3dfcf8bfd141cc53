package io.attnproof.attention.mtp;

import io.attnproof.attention.Require;
import io.attnproof.attention.v4.RowState;
import io.attnproof.attention.v4.V4Model;
import java.util.List;

/** The reference: one sequence decoded alone, greedily, one token per target step (no drafts, no batch). */
public final class GreedyDecoder {
    private GreedyDecoder() {
    }

    /** The prompt followed by {@code newTokens} greedy tokens. */
    public static List<Integer> decodeAlone(V4Model model, List<Integer> prompt, int newTokens) {
        Require.nonNegative("newTokens", newTokens);
        RowState row = SpeculativeDecoder.prefill(model, prompt);
        List<RowState> rows = List.of(row);
        while (row.tokens().size() < prompt.size() + newTokens) {
            int last = row.tokens().get(row.tokens().size() - 1);
            V4Model.Forward f = model.forward(rows, new int[][] {{last}}, null);
            model.commit(rows, f, new int[] {1}, new int[] {row.cached() + 1});
            SpeculativeDecoder.emit(row, V4Model.argmax(f.logits()[0][0]));
        }
        return row.tokens().subList(0, prompt.size() + newTokens);
    }
}
