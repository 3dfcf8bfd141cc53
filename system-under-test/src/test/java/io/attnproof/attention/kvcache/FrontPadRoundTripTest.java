package io.attnproof.attention.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.attention.tensor.DType;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** K1: front_pad_single and drop_dead_prefix are inverses, bit for bit, over seeded (live, target) pairs. */
@Claim("K1")
class FrontPadRoundTripTest {
    static final int PAIRS = 400;

    /** One seeded case: a row of {@code live} tokens padded to {@code target} inside {@code capacity}. */
    record Pair(int live, int target, int capacity, int d, DType dtype, boolean aliased) {
        int lead() {
            return target - live;
        }
    }

    static List<Pair> pairs(long seed) {
        SplittableRandom pick = Streams.named(seed, "pairs");
        List<Pair> out = new ArrayList<>(PAIRS);
        for (int n = 0; n < PAIRS; n++) {
            int capacity = 1 + pick.nextInt(40);
            int live = pick.nextInt(capacity + 1);
            int target = live + pick.nextInt(capacity - live + 1);
            out.add(new Pair(live, target, capacity, 1 + pick.nextInt(6), DType.values()[pick.nextInt(3)],
                    pick.nextBoolean()));
        }
        return out;
    }

    static void assertDegenerate(Evidence ev, List<Pair> pairs) {
        ev.degeneracy("some_lead_positive", pairs.stream().anyMatch(p -> p.lead() > 0), "every lead is 0");
        ev.degeneracy("some_lead_zero", pairs.stream().anyMatch(p -> p.lead() == 0), "no pair pads to its own length");
        ev.degeneracy("some_empty_row_padded", pairs.stream().anyMatch(p -> p.live() == 0 && p.target() > 0),
                "no empty row padded");
        ev.degeneracy("some_target_at_capacity", pairs.stream().anyMatch(p -> p.target() == p.capacity() && p.lead() > 0),
                "no pad reaches capacity");
        ev.degeneracy("v_aliased_and_split_both_seen", pairs.stream().anyMatch(Pair::aliased)
                && pairs.stream().anyMatch(p -> !p.aliased()), "only one V layout drawn");
        ev.degeneracy("every_dtype_seen", pairs.stream().map(Pair::dtype).distinct().count() == 3, "a dtype is missing");
    }

    @Test
    void frontPadThenDropDeadPrefixIsTheIdentityBitForBit(Evidence ev) {
        long seed = 0x4B31_0001L;
        ev.seed(seed);
        List<Pair> pairs = pairs(seed);
        assertDegenerate(ev, pairs);

        long padCellsWrong = 0;
        long bits = 0;
        long statesDiffering = 0;
        long leadsWrong = 0;
        long controlMinBits = Long.MAX_VALUE;
        for (int n = 0; n < pairs.size(); n++) {
            Pair p = pairs.get(n);
            SingleCache original = KvRows.row(Streams.row(seed, n), p.live(), p.capacity(), p.d(), p.dtype(), p.aliased());
            SingleCache c = original.copy();
            int lead = CacheOps.frontPadSingle(c, p.target());
            leadsWrong += lead == p.lead() ? 0 : 1;
            padCellsWrong += KvRows.padCellsWrong(original, c, 0, lead);
            SingleCache control = c.copy();
            CacheOps.dropDeadPrefix(c, lead);
            bits += KvRows.bitsDiffering(original, c);
            statesDiffering += c.identicalTo(original) ? 0 : 1;
            if (lead > 0) {
                CacheOps.dropDeadPrefix(control, lead - 1); // the off-by-one lead keeps one zero column
                controlMinBits = Math.min(controlMinBits, KvRows.bitsDiffering(original, control));
            }
        }
        ev.check("leads_not_target_minus_live", leadsWrong, 0, null);
        ev.checkBitIdentical("pad_cells_wrong", padCellsWrong);
        ev.checkBitIdentical("bits_roundtrip", bits);
        ev.checkBitIdentical("states_not_identical_after_roundtrip", statesDiffering);
        ev.controlAtLeast("drop_with_lead_minus_one_min_bits", controlMinBits, 1);
    }

    @Test
    void dropDeadPrefixThenFrontPadRestoresAPaddedCache(Evidence ev) {
        long seed = 0x4B31_0002L;
        ev.seed(seed);
        List<Pair> pairs = pairs(seed);
        assertDegenerate(ev, pairs);

        long bits = 0;
        long statesDiffering = 0;
        long leadsWrong = 0;
        long controlMinBits = Long.MAX_VALUE;
        for (int n = 0; n < pairs.size(); n++) {
            Pair p = pairs.get(n);
            SingleCache padded = KvRows.row(Streams.row(seed, n), p.live(), p.capacity(), p.d(), p.dtype(), p.aliased());
            int lead = CacheOps.frontPadSingle(padded, p.target());
            SingleCache c = padded.copy();
            CacheOps.dropDeadPrefix(c, lead);
            leadsWrong += c.currentSeqLen() == p.live() ? 0 : 1;
            SingleCache control = c.copy();
            leadsWrong += CacheOps.frontPadSingle(c, p.target()) == lead ? 0 : 1;
            bits += KvRows.bitsDiffering(padded, c);
            statesDiffering += c.identicalTo(padded) ? 0 : 1;
            if (p.target() < p.capacity()) {
                CacheOps.frontPadSingle(control, p.target() + 1); // one column too many
                controlMinBits = Math.min(controlMinBits, KvRows.bitsDiffering(padded, control));
            }
        }
        ev.check("lengths_or_leads_wrong", leadsWrong, 0, null);
        ev.checkBitIdentical("bits_roundtrip", bits);
        ev.checkBitIdentical("states_not_identical_after_roundtrip", statesDiffering);
        ev.controlAtLeast("pad_to_target_plus_one_min_bits", controlMinBits, 1);
    }

    @Test
    void aZeroLeadIsANoOpAndTheReturnedLeadIsTargetMinusLive(Evidence ev) {
        long seed = 0x4B31_0003L;
        ev.seed(seed);
        SingleCache original = KvRows.row(Streams.row(seed, 0), 5, 12, 3, DType.BF16, true);
        ev.degeneracy("row_is_nonempty", original.currentSeqLen() == 5, original.toString());
        SingleCache c = original.copy();
        assertEquals(0, CacheOps.frontPadSingle(c, 5));
        ev.checkBitIdentical("bits_after_zero_lead", KvRows.bitsDiffering(original, c));
        assertEquals(7, CacheOps.frontPadSingle(c, 12));
        assertEquals(12, c.currentSeqLen());
        ev.checkBitIdentical("pad_cells_wrong_to_capacity", KvRows.padCellsWrong(original, c, 0, 7));
        ev.controlAtLeast("padded_row_differs_from_original_bits", KvRows.bitsDiffering(original, c), 1);
    }
}
