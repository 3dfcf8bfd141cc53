package io.attnproof.attention.compressor;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.tolerance.Diff;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * K2 (c): pushing T tokens one by one, or in chunks of any size, gives the blocks of a prefill of the same T tokens
 * bit for bit (the R = 4 overlap carried across pushes); a stream with two tokens swapped differs.
 */
@Claim("K2")
class CompressorStreamingTest {
    static final int D = 32;

    @ParameterizedTest(name = "R = {0}")
    @ValueSource(ints = {4, 128})
    void streamingEqualsPrefillBitForBit(int ratio, Evidence ev) {
        long seed = 4_000L + ratio;
        ev.seed(seed);
        int t = 5 * ratio + 3;
        Compressor compressor = Compressor.of(CompressorWeights.seeded(ratio, D, seed));
        Tokens in = Tokens.generate(seed, 0, t, compressor.width(), 2.0);

        List<float[]> prefill = compressor.prefill(in.kv(), in.score());

        CompressorState single = compressor.newState();
        List<float[]> oneByOne = new ArrayList<>();
        for (int i = 0; i < t; i++) {
            oneByOne.addAll(single.push(in.kv()[i], in.score()[i]));
        }
        // Measured on the system's stream: blocks follow blocks, and a remainder waits.
        ev.degeneracy("blocks_emitted_by_the_stream", single.tc(), Comparison.GE, 2, "T = " + t + ", R = " + ratio);
        ev.degeneracy("tokens_pending_after_the_stream", single.pending(), Comparison.GE, 1, "the remainder waits");
        ev.checkBitIdentical("bits_one_by_one_vs_prefill", Tokens.bitsDiffering(oneByOne, prefill));
        ev.checkBitIdentical("bits_state_blocks_vs_prefill", Tokens.bitsDiffering(single.blocks(), prefill));
        float[] flat = new float[prefill.size() * D];
        for (int b = 0; b < prefill.size(); b++) {
            System.arraycopy(prefill.get(b), 0, flat, b * D, D);
        }
        ev.checkBitIdentical("bits_compressed_kv_tensor_vs_prefill",
                Diff.bitsDiffering(single.compressedKv().toFloatArray(), flat));

        SplittableRandom chunks = Streams.named(seed, "chunks");
        long chunkedDiffering = 0;
        for (int trial = 0; trial < 4; trial++) {
            CompressorState chunked = compressor.newState();
            List<float[]> got = new ArrayList<>();
            for (int from = 0; from < t; ) {
                int to = Math.min(t, from + chunks.nextInt(0, 2 * ratio + 2));   // empty chunks too
                got.addAll(chunked.pushAll(in.slice(from, to).kv(), in.slice(from, to).score()));
                from = to;
            }
            chunkedDiffering += Tokens.bitsDiffering(got, prefill);
        }
        ev.checkBitIdentical("bits_random_chunks_vs_prefill", chunkedDiffering);

        CompressorState swapped = compressor.newState();
        List<float[]> control = new ArrayList<>();
        for (int i = 0; i < t; i++) {
            int j = i == 0 ? 1 : i == 1 ? 0 : i;
            control.addAll(swapped.push(in.kv()[j], in.score()[j]));
        }
        ev.controlAtLeast("tokens_0_and_1_swapped_bits", Tokens.bitsDiffering(control, prefill), 1);
    }
}
