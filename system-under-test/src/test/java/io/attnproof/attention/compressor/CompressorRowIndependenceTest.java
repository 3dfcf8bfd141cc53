package io.attnproof.attention.compressor;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * K2 (d): rows of lengths {3, 17, 130, 260}, each with its own input stream, compress in a batch (lock-step or
 * interleaved in uneven chunks) exactly like each row alone; a stream that leaks row 0's tokens into another row differs.
 */
@Claim("K2")
class CompressorRowIndependenceTest {
    static final int D = 16;
    static final int[] LENGTHS = {3, 17, 130, 260};

    @ParameterizedTest(name = "R = {0}")
    @ValueSource(ints = {4, 128})
    void eachRowCompressesAsIfAlone(int ratio, Evidence ev) {
        long seed = 5_000L + ratio;
        ev.seed(seed);
        Compressor compressor = Compressor.of(CompressorWeights.seeded(ratio, D, seed));
        List<Tokens> rows = new ArrayList<>();
        for (int r = 0; r < LENGTHS.length; r++) {
            rows.add(Tokens.generate(seed, r, LENGTHS[r], compressor.width(), 2.0));
        }
        // Measured on the inputs: block counts floor(T/R) differ across rows, and every row's tokens differ from the
        // next row's over their common length (each row its own stream).
        HashSet<Integer> tcs = new HashSet<>();
        long minDifferingValues = Long.MAX_VALUE;
        for (int r = 0; r < rows.size(); r++) {
            tcs.add(rows.get(r).length() / ratio);
            if (r + 1 < rows.size()) {
                long differ = 0;
                for (int t = 0; t < Math.min(rows.get(r).length(), rows.get(r + 1).length()); t++) {
                    for (int d = 0; d < rows.get(r).kv()[t].length; d++) {
                        differ += rows.get(r).kv()[t][d] != rows.get(r + 1).kv()[t][d] ? 1 : 0;
                    }
                }
                minDifferingValues = Math.min(minDifferingValues, differ);
            }
        }
        ev.degeneracy("distinct_block_counts_across_rows", tcs.size(), Comparison.GE, 3, "t_c per row " + tcs);
        ev.degeneracy("kv_values_differing_between_neighbour_rows", minDifferingValues, Comparison.GE, 1,
                "min over neighbouring rows");

        List<List<float[]>> alone = new ArrayList<>();
        for (Tokens row : rows) {
            alone.add(compressor.prefill(row.kv(), row.score()));
        }
        List<float[][]> kv = new ArrayList<>();
        List<float[][]> score = new ArrayList<>();
        for (Tokens row : rows) {
            kv.add(row.kv());
            score.add(row.score());
        }
        List<List<float[]>> batch = compressor.prefillBatch(kv, score);
        long differing = 0;
        for (int r = 0; r < rows.size(); r++) {
            differing += Tokens.bitsDiffering(batch.get(r), alone.get(r));
        }
        ev.checkBitIdentical("bits_batch_row_vs_alone", differing);

        // Interleaved by hand: rows take turns pushing uneven chunks into their own states.
        SplittableRandom turns = Streams.named(seed, "turns");
        List<CompressorState> states = new ArrayList<>();
        int[] at = new int[rows.size()];
        for (int r = 0; r < rows.size(); r++) {
            states.add(compressor.newState());
        }
        for (boolean busy = true; busy; ) {
            busy = false;
            for (int r = 0; r < rows.size(); r++) {
                int to = Math.min(LENGTHS[r], at[r] + turns.nextInt(1, ratio + 3));
                states.get(r).pushAll(rows.get(r).slice(at[r], to).kv(), rows.get(r).slice(at[r], to).score());
                at[r] = to;
                busy |= to < LENGTHS[r];
            }
        }
        long interleaved = 0;
        for (int r = 0; r < rows.size(); r++) {
            interleaved += Tokens.bitsDiffering(states.get(r).blocks(), alone.get(r));
        }
        ev.checkBitIdentical("bits_interleaved_row_vs_alone", interleaved);

        // Control: row 0's tokens fed into each other row's stream first (one stream shared across rows).
        long leaked = 0;
        for (int r = 1; r < rows.size(); r++) {
            Tokens mixed = rows.get(0).then(rows.get(r));
            List<float[]> got = compressor.prefill(mixed.kv(), mixed.score());
            List<float[]> own = alone.get(r);
            leaked += Tokens.bitsDiffering(got.subList(0, Math.min(got.size(), own.size())), own);
        }
        ev.controlAtLeast("row0_tokens_fed_into_other_rows_bits", leaked, 1);
        long swappedRows = Tokens.bitsDiffering(batch.get(3), compressor.prefill(rows.get(2).kv(), rows.get(2).score()));
        ev.controlAtLeast("row3_vs_row2_alone_bits", swappedRows, 1);
    }
}
