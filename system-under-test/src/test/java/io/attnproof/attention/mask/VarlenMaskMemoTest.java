package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertSame;

import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.tolerance.Diff;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** M6: the varlen causal-mask memo hits, and never serves a stale entry such as (5, 8, 3). */
@Claim("M6")
class VarlenMaskMemoTest {
    final VarlenCausalMask.Memo memo = VarlenCausalMask.Memo.current();

    @BeforeEach
    void clear() {
        memo.clear();
    }

    /** (q_len 5, kv_len 8, window 3): kv_offset 3, row r sees keys [r + 1, r + 3], written out by hand. */
    static final String[] FIVE_EIGHT_THREE = {
        ".###....",
        "..###...",
        "...###..",
        "....###.",
        ".....###",
    };

    /** (5, 8, 0): no window, row r sees keys [0, r + 3]. */
    static final String[] FIVE_EIGHT_ZERO = {
        "####....",
        "#####...",
        "######..",
        "#######.",
        "########",
    };

    @Test
    void hitsAndNeverServesAStaleEntry(Evidence ev) {
        Tensor first = memo.get(5, 8, 3);
        Tensor hit = memo.get(5, 8, 3);
        assertSame(first, hit);
        ev.check("builds_after_repeat_lookup", memo.builds(), 1, null);
        ev.check("mismatched_cells_5_8_3", mismatches(first, FIVE_EIGHT_THREE), 0, null);
        Tensor noWindow = memo.get(5, 8, 0);
        ev.check("mismatched_cells_5_8_0", mismatches(noWindow, FIVE_EIGHT_ZERO), 0, null);
        Tensor back = memo.get(5, 8, 3);
        ev.check("mismatched_cells_5_8_3_after_eviction", mismatches(back, FIVE_EIGHT_THREE), 0, null);
        ev.check("builds", memo.builds(), 3, null);
        long stale = 0;
        for (int[] key : new int[][] {{5, 8, 2}, {4, 8, 3}, {5, 9, 3}, {5, 8, 3}}) {
            Tensor got = memo.get(key[0], key[1], key[2]);
            stale += Diff.bitsDiffering(got.toFloatArray(),
                    new VarlenCausalMask(key[0], key[1], key[2]).materialize().toFloatArray());
        }
        ev.checkBitIdentical("stale_cells_served", stale);
        // The window-3 and window-0 patterns above differ in this many cells: a key-blind memo serves them all wrong.
        long patternsDiffer = 0;
        for (int r = 0; r < FIVE_EIGHT_THREE.length; r++) {
            for (int j = 0; j < FIVE_EIGHT_THREE[r].length(); j++) {
                patternsDiffer += FIVE_EIGHT_THREE[r].charAt(j) == FIVE_EIGHT_ZERO[r].charAt(j) ? 0 : 1;
            }
        }
        ev.controlAtLeast("window_3_vs_window_0_cells", Diff.bitsDiffering(first.toFloatArray(), noWindow.toFloatArray()),
                patternsDiffer);
    }

    @Test
    void predicateAndDenseFormAgree(Evidence ev) {
        long differing = 0;
        for (int q = 0; q <= 6; q++) {
            for (int kv = 0; kv <= 9; kv++) {
                for (int w = 0; w <= 4; w++) {
                    VarlenCausalMask m = new VarlenCausalMask(q, kv, w);
                    Tensor dense = m.materialize();
                    for (int r = 0; r < q; r++) {
                        for (int j = 0; j < kv; j++) {
                            differing += m.admits(r, j) == (dense.flat(r * kv + j) == 0f) ? 0 : 1;
                        }
                    }
                }
            }
        }
        ev.checkBitIdentical("cells_predicate_vs_dense", differing);
    }

    private static long mismatches(Tensor mask, String[] expected) {
        long bad = 0;
        for (int r = 0; r < expected.length; r++) {
            for (int j = 0; j < expected[r].length(); j++) {
                bad += (mask.flat(r * expected[r].length() + j) == 0f) == (expected[r].charAt(j) == '#') ? 0 : 1;
            }
        }
        return bad;
    }
}
