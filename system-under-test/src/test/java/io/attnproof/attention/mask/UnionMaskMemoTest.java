package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.memo.MemoFixture;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.DenseMasks;
import io.attnproof.oracles.Precision;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** M1–M4, M5 (graph decode), M8: the thread-local union-mask memo. */
class UnionMaskMemoTest {
    static final UnionMaskKey BASE = new UnionMaskKey(34, 1, 27, 8, 8, 9, 4, DType.F32, Device.CPU);

    final UnionMaskMemo memo = UnionMaskMemo.current();

    @BeforeEach
    void clear() {
        memo.clear();
    }

    @Test
    @Claim("M1")
    void aHitReturnsTheCachedTensorWithoutBuilding(Evidence ev) {
        Tensor first = memo.get(BASE);
        long builds = memo.builds();
        Tensor again = memo.get(BASE);
        ev.checkEqual("builds_on_hit", memo.builds() - builds, 0);
        assertSame(first, again, "a hit returns the cached handle");
        assertEquals(builds, memo.builds(), "a hit runs no builder");
        assertEquals(1, memo.hits());
        Tensor other = memo.get(withQ0(BASE, 35));
        ev.check("builds_after_changed_key_minus_one", Math.abs(memo.builds() - builds - 1), 0, null);
        ev.controlAtLeast("changed_key_gets_another_tensor", first == other ? 0 : 1, 1);
    }

    @Test
    @Claim("M2")
    void memoisedMasksAreBitIdenticalToFreshBuildsAcrossCtx35To36(Evidence ev) {
        MemoFixture fx = MemoFixture.ctx35to36();
        fx.assertDegenerate();
        UnionMaskKey before = keyAt(fx, fx.ctxBefore());
        UnionMaskKey after = keyAt(fx, fx.ctxAfter());
        ev.degeneracy("same_shape", before.keep() == after.keep() && before.tc() == after.tc(),
                before + " vs " + after);
        ev.degeneracy("admitted_block_sets_differ",
                fx.admittedBlocks(fx.ctxBefore()) != fx.admittedBlocks(fx.ctxAfter()),
                fx.admittedBlocks(fx.ctxBefore()) + " vs " + fx.admittedBlocks(fx.ctxAfter()));
        long differing = 0;
        for (UnionMaskKey key : List.of(before, after, before, after)) {
            Tensor got = memo.get(key);
            differing += Diff.bitsDiffering(got.toFloatArray(), UnionMaskMemo.buildValid(key).toFloatArray());
            double[][] oracle = DenseMasks.union(key.q0(), key.tq(), key.base(), key.keep(), key.window(), key.tc(),
                    key.ratio());
            for (int c = 0; c < key.keep() + key.tc(); c++) {
                differing += (got.flat(c) == 0f) == (oracle[0][c] == 0.0) ? 0 : 1;
            }
        }
        ev.checkBitIdentical("bits_memo_vs_fresh_and_oracle", differing);
        ev.controlAtLeast("stale_ctx35_mask_served_at_ctx36_cells",
                Diff.bitsDiffering(memo.get(before).toFloatArray(), UnionMaskMemo.buildValid(after).toFloatArray()), 1);

        // Through dsv4_attention: decode at ctx 35 then 36 with the memo warm equals a cold memo, bit for bit.
        UnionRun.Spec spec36 = new UnionRun.Spec(2, 2, 1, fx.ctxAfter(), fx.tc(), 8, fx.window(), CompressRatio.CSA, 0,
                Precision.F32);
        UnionRun.Spec spec35 = new UnionRun.Spec(2, 2, 1, fx.ctxBefore(), fx.tc(), 8, fx.window(), CompressRatio.CSA,
                0, Precision.F32);
        UnionInputs in35 = spec35.inputs(35);
        UnionInputs in36 = spec36.inputs(36);
        memo.clear();
        UnionRun.run(spec35, in35, in35.sinks(), null);
        Tensor warm = UnionRun.run(spec36, in36, in36.sinks(), null);
        memo.clear();
        Tensor cold = UnionRun.run(spec36, in36, in36.sinks(), null);
        ev.checkBitIdentical("bits_warm_vs_cold_dsv4_ctx36", Diff.bitsDiffering(warm.toFloatArray(),
                cold.toFloatArray()));
    }

    @Test
    @Claim("M3")
    void everyKeyFieldMatters(Evidence ev) {
        List<UnaryOperator<UnionMaskKey>> oneFieldChanged = List.of(
                k -> withQ0(k, k.q0() + 1),
                k -> new UnionMaskKey(k.q0(), k.tq() + 1, k.base(), k.keep(), k.window(), k.tc(), k.ratio(), k.dtype(), k.device()),
                k -> new UnionMaskKey(k.q0(), k.tq(), k.base() + 1, k.keep(), k.window(), k.tc(), k.ratio(), k.dtype(), k.device()),
                k -> new UnionMaskKey(k.q0(), k.tq(), k.base(), k.keep() + 1, k.window(), k.tc(), k.ratio(), k.dtype(), k.device()),
                k -> new UnionMaskKey(k.q0(), k.tq(), k.base(), k.keep(), k.window() + 1, k.tc(), k.ratio(), k.dtype(), k.device()),
                k -> new UnionMaskKey(k.q0(), k.tq(), k.base(), k.keep(), k.window(), k.tc() + 1, k.ratio(), k.dtype(), k.device()),
                k -> new UnionMaskKey(k.q0(), k.tq(), k.base(), k.keep(), k.window(), k.tc(), 128, k.dtype(), k.device()),
                k -> new UnionMaskKey(k.q0(), k.tq(), k.base(), k.keep(), k.window(), k.tc(), k.ratio(), DType.F16, k.device()),
                k -> new UnionMaskKey(k.q0(), k.tq(), k.base(), k.keep(), k.window(), k.tc(), k.ratio(), k.dtype(), Device.cuda(0)));
        long servedStale = 0;
        for (UnaryOperator<UnionMaskKey> change : oneFieldChanged) {
            memo.clear();
            Tensor base = memo.get(BASE);
            UnionMaskKey changed = change.apply(BASE);
            Tensor got = memo.get(changed);
            boolean missed = memo.builds() == 2 && got != base;
            boolean fresh = Diff.bitsDiffering(got.toFloatArray(), UnionMaskMemo.buildValid(changed).toFloatArray()) == 0
                    && got.dtype() == changed.dtype() && got.device().equals(changed.device());
            if (!missed || !fresh) {
                servedStale++;
                System.err.println("key field change served from the memo: " + changed);
            }
        }
        ev.checkBitIdentical("key_fields_ignored", servedStale);
        // One change per field of the key record: a field added to the key without a change here fails.
        ev.checkEqual("key_fields_tested_vs_key_record_components", oneFieldChanged.size(),
                UnionMaskKey.class.getRecordComponents().length);
    }

    @Test
    @Claim("M4")
    void a43LayerStepBuildsAtMostThreeMasks(Evidence ev) {
        int tk = 300;
        for (int step = 0; step < 2; step++) {
            long before = memo.builds();
            for (CompressRatio ratio : CompressRatio.v4Schedule()) {
                int tc = ratio == CompressRatio.STANDARD ? 0 : (tk + step) / ratio.value();
                UnionRun.Spec spec = new UnionRun.Spec(1, 2, 1, tk + step, tc, 8, 128, ratio, 0, Precision.F32);
                UnionInputs in = spec.inputs(step);
                UnionRun.run(spec, in, in.sinks(), null);
            }
            long builds = memo.builds() - before;
            ev.degeneracy("three_ratio_classes_in_the_schedule",
                    CompressRatio.v4Schedule().stream().distinct().count() == 3, "STANDARD, CSA, HCA");
            ev.check("mask_builds_per_step", builds, 3, null);
            ev.check("mask_builds_per_step_at_least", 3 - builds, 0, null);
        }
        assertEquals(44, CompressRatio.v4Schedule().size());
    }

    @Test
    @Claim("M4")
    void fifoKeepsFourSlotsAndAHitDoesNotRefresh(Evidence ev) {
        List<UnionMaskKey> keys = List.of(BASE, withQ0(BASE, 35), withQ0(BASE, 36), withQ0(BASE, 37), withQ0(BASE, 38));
        for (int i = 0; i < 4; i++) {
            memo.get(keys.get(i));
        }
        memo.get(keys.get(0)); // a hit: FIFO, not LRU, so the oldest stays oldest
        memo.get(keys.get(4));
        // M4's number from the catalog, not the system's constant: the FIFO keeps the 4 newest keys, in order.
        List<UnionMaskKey> held = memo.keys();
        ev.checkEqual("four_newest_keys_missing", keys.subList(1, 5).stream().filter(k -> !held.contains(k)).count(),
                0);
        ev.checkEqual("slots_held_after_five_distinct_keys", held.size(), 4);
        ev.checkEqual("held_keys_out_of_fifo_order", keys.subList(1, 5).equals(held) ? 0 : 1, 0);
        long builds = memo.builds();
        memo.get(keys.get(0));
        ev.check("evicted_key_rebuilds_minus_one", Math.abs(memo.builds() - builds - 1), 0, null);
    }

    @Test
    @Claim("M5")
    void graphDecodeAndRaggedCohortsAreNeverMemoised(Evidence ev) {
        UnionRun.Spec spec = new UnionRun.Spec(2, 2, 1, 40, 10, 8, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(5);
        Tensor q = Tensors.of4(in.q(), DType.F32);
        Tensor k = Tensors.kv(in.k(), DType.F32);
        Tensor c = Tensors.kv(in.compressed(), DType.F32);
        Dsv4Config graph = spec.config().withGraphPositions(39, 20);
        for (int i = 0; i < 3; i++) {
            Dsv4Attention.attention(q, k, k, c, null, Tensors.sinks(in.sinks()), graph);
        }
        ev.check("memo_builds_in_graph_decode", memo.builds(), 0, null);
        ev.check("memo_entries_after_graph_decode", memo.keys().size(), 0, null);
        // A ragged cohort (per-row leads are content, not key) is never memoised either.
        Dsv4Attention.attention(q, k, k, c, null, Tensors.sinks(in.sinks()), spec.config().withRowQ0(39, 20));
        ev.check("memo_builds_for_a_ragged_cohort", memo.builds(), 0, null);
        ev.check("memo_entries_after_a_ragged_cohort", memo.keys().size(), 0, null);
        Dsv4Attention.attention(q, k, k, c, null, Tensors.sinks(in.sinks()), spec.config());
        ev.controlAtLeast("dense_call_is_memoised", memo.builds(), 1);
    }

    @Test
    @Claim("M8")
    void aCachedMaskIsImmutable(Evidence ev) {
        Tensor cached = memo.get(BASE);
        float[] snapshot = cached.toFloatArray();
        long writesAccepted = 0;
        for (Runnable write : new Runnable[] {() -> cached.set(0f, 0, 0, 0, 0), () -> cached.setFlat(0, 0f)}) {
            try {
                write.run();
                writesAccepted++;
            } catch (UnsupportedOperationException refused) {
                // a cached mask is read-only
            }
        }
        ev.checkBitIdentical("writes_accepted_by_the_cached_mask", writesAccepted);
        // Compose a caller mask onto it, then mutate the caller mask: the cached tensor never moves.
        Tensor caller = Tensor.zeros(DType.F32, Device.CPU, 1, 35 + 9);
        caller.set(Float.NEGATIVE_INFINITY, 0, 33);
        Tensor composed = CallerMasks.compose(cached, caller, new CallerMasks.Span(1, 1, 1, 35, 27, 8, 9));
        caller.set(5f, 0, 34);
        long composedChanged = Diff.bitsDiffering(composed.toFloatArray(), snapshot);
        ev.degeneracy("composition_changed_the_mask", composedChanged > 0, composedChanged + " cells");
        ev.checkBitIdentical("cached_bits_changed", Diff.bitsDiffering(memo.get(BASE).toFloatArray(), snapshot));
        ev.controlAtLeast("composed_vs_cached_cells", composedChanged, 1);

        // Through dsv4_attention with a caller mask, then inputs mutated after the call.
        UnionRun.Spec spec = new UnionRun.Spec(1, 2, 1, 35, 9, 8, 8, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(8);
        Tensor k = Tensors.kv(in.k(), DType.F32);
        Tensor callerFull = Tensor.zeros(DType.F32, Device.CPU, 1, 35 + 9);
        callerFull.set(Float.NEGATIVE_INFINITY, 0, 30);
        Dsv4Attention.attention(Tensors.of4(in.q(), DType.F32), k, k, Tensors.kv(in.compressed(), DType.F32),
                callerFull, Tensors.sinks(in.sinks()), spec.config());
        callerFull.set(Float.NEGATIVE_INFINITY, 0, 31);
        k.set(100f, 0, 0, 34, 0);
        ev.checkBitIdentical("cached_bits_changed_after_dsv4_call",
                Diff.bitsDiffering(memo.get(BASE).toFloatArray(), snapshot));
    }

    private static UnionMaskKey keyAt(MemoFixture fx, int ctx) {
        return new UnionMaskKey(fx.q0(ctx), fx.tq(), fx.base(ctx), fx.keep(ctx), fx.window(), fx.tc(), fx.ratio(),
                DType.F32, Device.CPU);
    }

    static UnionMaskKey withQ0(UnionMaskKey k, long q0) {
        return new UnionMaskKey(q0, k.tq(), k.base(), k.keep(), k.window(), k.tc(), k.ratio(), k.dtype(), k.device());
    }
}
