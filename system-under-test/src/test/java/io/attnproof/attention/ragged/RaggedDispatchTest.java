package io.attnproof.attention.ragged;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.mask.RaggedRows;
import io.attnproof.attention.mask.RaggedUnionMask;
import io.attnproof.attention.mask.UnionMaskMemo;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.ragged.RaggedCohort;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import org.junit.jupiter.api.Test;

/** R2–R5: who reaches the ragged path, and what is refused on the way. */
class RaggedDispatchTest {
    static final RaggedCohort RAGGED = new RaggedCohort(new int[] {37, 50, 10, 44}, 3, 16, 4, 4, 16);
    static final RaggedCohort UNIFORM = new RaggedCohort(new int[] {40, 40, 40}, 3, 16, 4, 4, 16);
    static final RaggedCohort SINGLE = new RaggedCohort(new int[] {29}, 29, 16, 4, 4, 16);

    @Test
    @Claim("R2")
    void aUniformBatchNeverReachesTheRaggedPath(Evidence ev) {
        long wrong = 0;
        for (RaggedCohort c : new RaggedCohort[] {UNIFORM, SINGLE}) {
            wrong += RaggedRows.resolve(c.rowQ0(), c.q0(), c.batch()) == null ? 0 : 1;
            RaggedCohort.Inputs in = c.inputs(7, Precision.F32, 0.0);
            long raggedBefore = RaggedUnionMask.builds();
            long memoBefore = UnionMaskMemo.current().builds() + UnionMaskMemo.current().hits();
            Cohorts.batched(c, in, c.rowQ0());
            wrong += RaggedUnionMask.builds() - raggedBefore;
            wrong += UnionMaskMemo.current().builds() + UnionMaskMemo.current().hits() - memoBefore == 1 ? 0 : 1;
        }
        ev.checkBitIdentical("uniform_calls_on_the_ragged_path", wrong);
        long before = RaggedUnionMask.builds();
        Cohorts.batched(RAGGED, RAGGED.inputs(7, Precision.F32, 0.0), RAGGED.rowQ0());
        ev.controlAtLeast("ragged_call_builds_a_ragged_mask", RaggedUnionMask.builds() - before, 1);
    }

    @Test
    @Claim("R3")
    void refusalsNameTheValues(Evidence ev) {
        long unclear = 0;
        unclear += refused(() -> RaggedRows.resolve(new long[] {5, 3}, 5, 3),
                "rowQ0.length = 2: must equal the batch 3 (rowQ0 = [5, 3])");
        unclear += refused(() -> RaggedRows.resolve(new long[] {5, 6, 2}, 5, 3),
                "rowQ0[1] = 6: must be <= the batch q0 = 5: a row cannot be ahead of the batch (rowQ0 = [5, 6, 2])");
        unclear += refused(() -> RaggedRows.resolve(new long[] {4, 3, 2}, 5, 3),
                "max(rowQ0) = 4: must equal the batch q0 = 5: some row must sit at the end column (rowQ0 = [4, 3, 2])");
        // A wrong-width vector is refused even when every value equals q0.
        unclear += refused(() -> RaggedRows.resolve(new long[] {5, 5}, 5, 3),
                "rowQ0.length = 2: must equal the batch 3 (rowQ0 = [5, 5])");
        ev.checkBitIdentical("refusals_not_as_specified", unclear);
        assertArrayEquals(new long[] {5, 3, 2}, RaggedRows.resolve(new long[] {5, 3, 2}, 5, 3));
    }

    @Test
    @Claim("R4")
    void perRowOffsetsReachAttentionOnlyWithTheFlagOn(Evidence ev) {
        long[] offsets = RAGGED.rowQ0();
        ev.checkEqual("offsets_passed_on_with_the_flag_off", RaggedRows.rowQ0From(offsets, false) == null ? 0 : 1, 0);
        ev.checkEqual("offsets_not_passed_on_with_the_flag_on",
                java.util.Arrays.equals(offsets, RaggedRows.rowQ0From(offsets, true)) ? 0 : 1, 0);
        for (String on : new String[] {"1", "true", "ON", "yes"}) {
            assertEquals(true, RaggedRows.flagOn(on), on);
        }
        for (String off : new String[] {null, "", "0", "false", "off", "no", "2"}) {
            assertEquals(false, RaggedRows.flagOn(off), String.valueOf(off));
        }
        RaggedCohort.Inputs in = RAGGED.inputs(9, Precision.F32, 0.0);
        long before = RaggedUnionMask.builds();
        Tensor off = Cohorts.batched(RAGGED, in, RaggedRows.rowQ0From(offsets, false));
        ev.check("ragged_builds_with_flag_off", RaggedUnionMask.builds() - before, 0, null);
        Tensor on = Cohorts.batched(RAGGED, in, RaggedRows.rowQ0From(offsets, true));
        ev.check("ragged_builds_with_flag_on_minus_one", Math.abs(RaggedUnionMask.builds() - before - 1), 0, null);
        // Bar: the tolerance rule's F32 limit at this output's magnitude (and no less than a 1e-3 signal).
        Diff flagGap = Diff.of(io.attnproof.attention.Tensors.toArray4(on), io.attnproof.attention.Tensors.toArray4(off));
        ev.controlGap("flag_changes_ragged_output", flagGap.maxAbs(),
                Math.max(1e-3, io.attnproof.fixtures.tolerance.Tolerance.fallbackLimit(Precision.F32,
                        flagGap.oracleMaxAbs())));
    }

    @Test
    @Claim("R5")
    void flagOffOrUniformIsByteIdenticalToTheScalarPath(Evidence ev) {
        long bits = 0;
        for (RaggedCohort c : new RaggedCohort[] {UNIFORM, SINGLE,
                new RaggedCohort(new int[] {31}, 1, 16, 128, 4, 16)}) {
            RaggedCohort.Inputs in = c.inputs(11, Precision.F32, 0.0);
            float[] scalar = Cohorts.batched(c, in, null).toFloatArray();
            for (boolean flag : new boolean[] {false, true}) {
                bits += Diff.bitsDiffering(scalar,
                        Cohorts.batched(c, in, RaggedRows.rowQ0From(c.rowQ0(), flag)).toFloatArray());
            }
        }
        ev.checkBitIdentical("bits_vs_scalar_path", bits);
    }

    /** 0 when {@code call} is refused with exactly {@code expected}; 1 when it is accepted or refused otherwise. */
    private static long refused(Runnable call, String expected) {
        try {
            call.run();
        } catch (IllegalArgumentException e) {
            if (!e.getMessage().equals(expected)) {
                System.err.println("refusal: " + e.getMessage() + "\n expected: " + expected);
                return 1;
            }
            return 0;
        }
        System.err.println("accepted, expected the refusal: " + expected);
        return 1;
    }
}
