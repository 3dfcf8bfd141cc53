package io.attnproof.attention.mask;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.memo.MemoFixture;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * M2 where the memo's tensor is consumed: the dense-mask path (a caller mask composed onto the memoised union mask)
 * on the cpu lane, and the native lanes, which receive the memoised dense mask. A warm memo must give the same output
 * bits as a cold one when the position advances (ctx 35 -> 36), when only the window changes, and after a consumer
 * tried to write into the mask it was handed.
 */
@Claim("M2")
class MemoEndToEndTest {
    static final MemoFixture FX = MemoFixture.ctx35to36();
    final UnionMaskMemo memo = UnionMaskMemo.current();

    /** The lanes that consume the memo's tensor: cpu with a caller mask, the native lanes with or without one. */
    static Stream<String> lanes() {
        return Backend.all().stream().map(Backend::name);
    }

    private static UnionRun.Spec spec(int ctx, int window) {
        return spec(1, ctx, window);
    }

    /** {@code tq} queries ending at {@code ctx}: a prefill ({@code tq == ctx}) keeps every key whatever the window. */
    private static UnionRun.Spec spec(int tq, int ctx, int window) {
        return new UnionRun.Spec(2, 2, tq, ctx, FX.tc(), 8, window, CompressRatio.CSA, 0, Precision.F32);
    }

    /** A small finite bias over the raw keys: it sends every call down the dense-mask path without hiding a key. */
    private static Tensor callerMask(int ctx) {
        Tensor m = Tensor.zeros(DType.F32, Device.CPU, 1, ctx);
        for (int j = 0; j < ctx; j++) {
            m.set((float) (0.05 * Math.sin(0.7 * j)), 0, j);
        }
        return m;
    }

    private Tensor run(Backend lane, int ctx, int window, boolean withMask) {
        return run(lane, 1, ctx, window, withMask);
    }

    private Tensor run(Backend lane, int tq, int ctx, int window, boolean withMask) {
        UnionRun.Spec spec = spec(tq, ctx, window);
        UnionInputs in = spec.inputs(ctx);
        return UnionRun.run(spec, in, in.sinks(), withMask ? callerMask(ctx) : null, lane);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lanes")
    void warmMemoGivesTheColdOutputWhereTheMaskIsConsumed(String laneName, Evidence ev) {
        Backend lane = Backend.named(laneName);
        Evidence e = ev.backend(laneName);
        if (lane.unavailable().isPresent()) {
            e.skipped(laneName, lane.unavailable().get());
            return;
        }
        FX.assertDegenerate();
        int before = FX.ctxBefore();
        int after = FX.ctxAfter();
        int w = FX.window();
        // The native lanes consume the dense mask on every call; the cpu lane only with a caller mask.
        List<Boolean> masks = laneName.equals("cpu") ? List.of(true) : List.of(true, false);
        for (boolean withMask : masks) {
            String label = "[" + laneName + (withMask ? ", caller mask]" : "]");
            // Degeneracy, on the fp64 oracle: serving the window-w mask to a window-(w+1) prefill of the same shape
            // (every key kept either way) moves the output by more than the tolerance limit (the ctx 35 -> 36 blocks
            // differ: FX.assertDegenerate()).
            UnionRun narrow = UnionRun.of(spec(after, after, w), after);
            UnionRun wide = UnionRun.of(spec(after, after, w + 1), after);
            e.degeneracy("window_w_vs_w_plus_1_changes_the_oracle_output" + label,
                    Diff.of(narrow.oracle(), wide.oracle()).maxAbs(), Comparison.GT, narrow.limit(),
                    "a stale window must be visible in the output");

            memo.clear();
            run(lane, before, w, withMask);
            Tensor warm = run(lane, after, w, withMask);
            memo.clear();
            Tensor cold = run(lane, after, w, withMask);
            e.checkBitIdentical("bits_warm_vs_cold_output_ctx35_to_36" + label,
                    Diff.bitsDiffering(warm.toFloatArray(), cold.toFloatArray()));

            memo.clear();
            run(lane, after, after, w, withMask);
            Tensor warmWindow = run(lane, after, after, w + 1, withMask);
            memo.clear();
            Tensor coldWindow = run(lane, after, after, w + 1, withMask);
            e.checkBitIdentical("bits_warm_vs_cold_output_window_w_to_w_plus_1" + label,
                    Diff.bitsDiffering(warmWindow.toFloatArray(), coldWindow.toFloatArray()));

            // A consumer writes into the mask it was handed (a lane adding its own bias in place): a cached mask is
            // read-only, so the next call still gets the fresh build's output.
            memo.clear();
            Tensor first = run(lane, after, w, withMask);
            e.degeneracy("memo_entries_after_a_call" + label, memo.keys().size(), Comparison.GE, 1,
                    "the call must go through the memo");
            UnionMaskKey handed = memo.keys().getLast();
            Tensor mask = memo.get(handed);
            try {
                mask.setFlat(0, Float.NEGATIVE_INFINITY);
            } catch (UnsupportedOperationException readOnly) {
                // the memo hands out read-only tensors
            }
            Tensor again = run(lane, after, w, withMask);
            e.checkBitIdentical("bits_output_after_a_consumer_wrote_into_the_handed_mask" + label,
                    Diff.bitsDiffering(first.toFloatArray(), again.toFloatArray()));
        }
    }
}
