package io.attnproof.attention.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** K1: front_align_batch pads every row to the batch max; clone_out_cache splits it back into the rows. */
@Claim("K1")
class FrontAlignBatchTest {
    static final int TRIALS = 60;
    static final int CAPACITY = 32;

    /** One seeded batch: each row's live length (at least two distinct), head dim, dtype and V layout per row. */
    record Trial(int[] lives, int d, DType dtype, boolean[] aliased) {
        int max() {
            return Arrays.stream(lives).max().orElseThrow();
        }

        boolean lengthsDiffer() {
            return Arrays.stream(lives).distinct().count() > 1;
        }
    }

    static List<Trial> trials(long seed) {
        SplittableRandom pick = Streams.named(seed, "trials");
        List<Trial> out = new ArrayList<>(TRIALS);
        for (int n = 0; n < TRIALS; n++) {
            int b = 2 + pick.nextInt(5);
            int[] lives = new int[b];
            boolean[] aliased = new boolean[b];
            boolean allAliased = pick.nextBoolean();
            for (int i = 0; i < b; i++) {
                lives[i] = pick.nextInt(CAPACITY + 1);
                aliased[i] = allAliased || pick.nextBoolean();
            }
            if (Arrays.stream(lives).distinct().count() == 1) {
                lives[pick.nextInt(b)] = (lives[0] + 1 + pick.nextInt(CAPACITY)) % (CAPACITY + 1);
            }
            out.add(new Trial(lives, 1 + pick.nextInt(5), DType.values()[pick.nextInt(3)], aliased));
        }
        return out;
    }

    /** The rows of trial {@code n}: row i from its own stream. */
    static List<SingleCache> rows(long seed, int n, Trial t) {
        List<SingleCache> rows = new ArrayList<>(t.lives().length);
        for (int i = 0; i < t.lives().length; i++) {
            rows.add(KvRows.row(Streams.row(seed + n, i), t.lives()[i], CAPACITY, t.d(), t.dtype(), t.aliased()[i]));
        }
        return rows;
    }

    static void assertDegenerate(Evidence ev, List<Trial> trials) {
        ev.degeneracy("rows_have_different_lengths", trials.stream().allMatch(Trial::lengthsDiffer),
                "a trial has rows of one length");
        ev.degeneracy("some_lead_positive", trials.stream().allMatch(t -> Arrays.stream(t.lives()).anyMatch(l -> l < t.max())),
                "a trial has no dead prefix");
        ev.degeneracy("some_row_empty", trials.stream().anyMatch(t -> Arrays.stream(t.lives()).anyMatch(l -> l == 0)),
                "no empty row");
        ev.degeneracy("mixed_v_layouts_seen", trials.stream().anyMatch(t -> {
            boolean any = false;
            boolean all = true;
            for (boolean a : t.aliased()) {
                any |= a;
                all &= a;
            }
            return any && !all;
        }) && trials.stream().anyMatch(t -> {
            for (boolean a : t.aliased()) {
                if (!a) {
                    return false;
                }
            }
            return true;
        }), "need a batch with mixed V layouts and one with V = K throughout");
    }

    @Test
    void frontAlignBatchPadsEveryRowToTheMax(Evidence ev) {
        long seed = 0x4B31_0101L;
        ev.seed(seed);
        List<Trial> trials = trials(seed);
        assertDegenerate(ev, trials);

        long cellsWrong = 0;
        long widthsWrong = 0;
        long leadsWrong = 0;
        long lastTokenWrong = 0;
        long rowsChanged = 0;
        long aliasWrong = 0;
        long unpaddedWrong = 0;
        long unpaddedRows = 0;
        for (int n = 0; n < trials.size(); n++) {
            Trial t = trials.get(n);
            List<SingleCache> rows = rows(seed, n, t);
            List<SingleCache> before = rows.stream().map(SingleCache::copy).toList();
            Aligned<SingleCache> aligned = CacheOps.frontAlignBatch(rows);
            SingleCache batched = aligned.cache();
            int[] leads = aligned.leads();
            widthsWrong += batched.currentSeqLen() == t.max() && batched.batch() == rows.size() ? 0 : 1;
            boolean allAliased = true;
            for (int i = 0; i < rows.size(); i++) {
                SingleCache row = rows.get(i);
                allAliased &= row.vAliasesK();
                leadsWrong += leads[i] == t.max() - t.lives()[i] ? 0 : 1;
                cellsWrong += KvRows.padCellsWrong(row, batched, i, leads[i]);
                if (t.lives()[i] > 0) {
                    for (int c = 0; c < t.d(); c++) {
                        lastTokenWrong += Float.floatToRawIntBits(batched.k().get(i, 0, t.max() - 1, c))
                                == Float.floatToRawIntBits(row.k().get(0, 0, t.lives()[i] - 1, c)) ? 0 : 1;
                    }
                }
                rowsChanged += row.identicalTo(before.get(i)) ? 0 : 1;
                // Control: the row stacked without padding (at column 0) misses the end column.
                if (t.max() - t.lives()[i] > 0) {   // a dead prefix by the trial's geometry
                    unpaddedWrong += KvRows.padCellsWrong(row, batched, i, 0) > 0 ? 1 : 0;
                    unpaddedRows++;
                }
            }
            aliasWrong += batched.vAliasesK() == allAliased && (batched.v() == batched.k()) == allAliased ? 0 : 1;
        }
        ev.check("widths_not_batch_max", widthsWrong, 0, null);
        ev.check("leads_not_max_minus_live", leadsWrong, 0, null);
        ev.checkBitIdentical("cells_wrong", cellsWrong);
        ev.checkBitIdentical("last_token_not_at_end_column", lastTokenWrong);
        ev.check("input_rows_changed", rowsChanged, 0, null);
        ev.check("v_aliasing_wrong", aliasWrong, 0, null);

        // Every row with a dead prefix misses the end column when stacked at column 0.
        ev.controlAtLeast("rows_wrong_with_lead_zero", unpaddedWrong, Math.max(1, unpaddedRows));
        ev.check("rows_with_dead_prefix_right_at_lead_zero", unpaddedRows - unpaddedWrong, 0, null);
    }

    @Test
    void cloneOutAfterFrontAlignIsTheIdentityPerRow(Evidence ev) {
        long seed = 0x4B31_0102L;
        ev.seed(seed);
        List<Trial> trials = trials(seed);
        assertDegenerate(ev, trials);

        long bits = 0;
        long statesDiffering = 0;
        long lengthsWrong = 0;
        long notRestoredByWidth = 0;
        long deadPrefixKept = 0;
        long rowsWithLead = 0;
        long leadColumns = 0;
        long uniformTrials = 0;
        for (int n = 0; n < trials.size(); n++) {
            Trial t = trials.get(n);
            List<SingleCache> rows = rows(seed, n, t);
            Aligned<SingleCache> aligned = CacheOps.frontAlignBatch(rows);
            int[] lives = new int[rows.size()];
            for (int i = 0; i < lives.length; i++) {
                lives[i] = aligned.cache().currentSeqLen() - aligned.leads()[i];
            }
            SingleCache snapshot = aligned.cache().copy();
            List<SingleCache> out = CacheOps.cloneOutCache(aligned.cache(), lives);
            statesDiffering += aligned.cache().identicalTo(snapshot) ? 0 : 1; // the batch is not changed
            boolean oneLayout = rows.stream().map(SingleCache::vAliasesK).distinct().count() == 1;
            uniformTrials += oneLayout ? 1 : 0;
            for (int i = 0; i < rows.size(); i++) {
                bits += KvRows.bitsDiffering(rows.get(i), out.get(i));
                // A batch keeps one V layout: rows of one layout come back identical, a mixed batch's rows split.
                statesDiffering += (oneLayout ? out.get(i).identicalTo(rows.get(i))
                        : out.get(i).sameContents(rows.get(i)) && !out.get(i).vAliasesK()) ? 0 : 1;
                lengthsWrong += out.get(i).currentSeqLen() == t.lives()[i] ? 0 : 1;
                // Control: upstream clone_out_cache copied the batched width into every row (the row as it sits).
                SingleCache upstream = aligned.cache().row(i);
                int lead = t.max() - t.lives()[i];   // by the trial's geometry
                if (lead > 0) {
                    rowsWithLead++;
                    notRestoredByWidth += KvRows.bitsDiffering(rows.get(i), upstream) > 0 ? 1 : 0;
                    deadPrefixKept += upstream.currentSeqLen() - t.lives()[i];
                    leadColumns += lead;
                }
            }
        }
        ev.degeneracy("both_one_layout_and_mixed_batches", uniformTrials > 0 && uniformTrials < trials.size(),
                uniformTrials + " of " + trials.size() + " batches have one V layout");
        ev.check("lengths_not_live", lengthsWrong, 0, null);
        ev.checkBitIdentical("bits_roundtrip", bits);
        ev.checkBitIdentical("states_not_identical_after_roundtrip", statesDiffering);
        // The batched width keeps every row's whole dead prefix: each row with a lead, each of its lead columns.
        ev.controlAtLeast("rows_not_restored_by_batched_width", notRestoredByWidth, Math.max(1, rowsWithLead));
        ev.check("rows_with_dead_prefix_restored_by_batched_width", rowsWithLead - notRestoredByWidth, 0, null);
        ev.controlAtLeast("dead_prefix_columns_kept_by_batched_width", deadPrefixKept, Math.max(1, leadColumns));
    }

    @Test
    void normalCacheAlignsAndClonesOutPerLayer(Evidence ev) {
        long seed = 0x4B31_0103L;
        ev.seed(seed);
        int[] lives = {9, 3, 0, 14};
        int d = 4;
        List<NormalCache> rows = new ArrayList<>();
        for (int i = 0; i < lives.length; i++) {
            List<SingleCache> layers = new ArrayList<>();
            for (int l = 0; l < NormalCache.V4_LAYERS; l++) {
                layers.add(KvRows.row(Streams.row(seed + l, i), lives[i], 16, d, DType.F16, l % 3 != 0));
            }
            rows.add(NormalCache.of(layers));
        }
        ev.degeneracy("distinct_row_lengths", Arrays.stream(lives).distinct().count(), Comparison.EQ, lives.length,
                Arrays.toString(lives));
        int widest = Arrays.stream(lives).max().orElseThrow();
        ev.degeneracy("rows_with_a_dead_prefix", Arrays.stream(lives).filter(l -> l < widest).count(), Comparison.GE, 1,
                Arrays.toString(lives));
        ev.degeneracy("v4_layer_count", rows.get(0).numLayers() == 44, "layers " + rows.get(0).numLayers());

        Aligned<NormalCache> aligned = CacheOps.frontAlignLayers(rows);
        ev.check("leads_not_max_minus_live", Arrays.equals(aligned.leads(), new int[] {5, 11, 14, 0}) ? 0 : 1, 0, null);
        long cellsWrong = 0;
        for (int l = 0; l < NormalCache.V4_LAYERS; l++) {
            SingleCache layer = aligned.cache().layer(l);
            cellsWrong += layer.currentSeqLen() == 14 ? 0 : 1;
            for (int i = 0; i < lives.length; i++) {
                cellsWrong += KvRows.padCellsWrong(rows.get(i).layer(l), layer, i, aligned.leads()[i]);
            }
        }
        ev.checkBitIdentical("cells_wrong_over_layers", cellsWrong);

        List<NormalCache> out = CacheOps.cloneOutCache(aligned.cache(), lives);
        long bits = 0;
        long statesDiffering = 0;
        for (int i = 0; i < lives.length; i++) {
            for (int l = 0; l < NormalCache.V4_LAYERS; l++) {
                bits += KvRows.bitsDiffering(rows.get(i).layer(l), out.get(i).layer(l));
            }
            statesDiffering += out.get(i).sameContents(rows.get(i)) ? 0 : 1;
        }
        ev.checkBitIdentical("bits_roundtrip_layers", bits);
        ev.checkBitIdentical("rows_not_identical_after_roundtrip", statesDiffering);

        long notRestored = 0;
        for (int i = 0; i < lives.length; i++) {
            notRestored += aligned.cache().row(i).identicalTo(rows.get(i)) ? 0 : 1;
        }
        // Every row with a dead prefix (shorter than the widest) comes back wrong at the batched width.
        ev.controlAtLeast("rows_not_restored_by_batched_width", notRestored,
                Math.max(1, Arrays.stream(lives).filter(l -> l < widest).count()));
        assertEquals(Device.CPU, out.get(0).device());
    }
}
