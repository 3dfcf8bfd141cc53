package io.attnproof.attention.v4;

import io.attnproof.attention.Tensors;
import io.attnproof.attention.UnionRun;
import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.FusedVStats;
import io.attnproof.attention.dsv4.VkDedup;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * V4: the call-site trace. Dense, dummy and graph decode alias V to K (both duplication sites fire); paged serving
 * never does; passing the gathered K twice in the paged arm is bitwise identical and makes it alias too.
 */
@Claim("V4")
class AttentionArmTraceTest {
    static final long SEED = 404;
    /**
     * {@link V4Config#small} with the first 5 layers of the V4 schedule (ratio 0, 0, CSA, HCA, CSA) instead of all
     * 43: every kind of layer, so every arm's prefill and decode calls (graph decode on the compressed layers, dense
     * on the ratio-0 ones) still reach the dedup sites; the other 38 layers repeated those calls 9x more slowly.
     */
    static final int LAYERS = 5;

    static V4Config config(long seed) {
        V4Config s = V4Config.small(seed);
        return new V4Config(s.vocab(), s.hidden(), s.heads(), s.headDim(), s.window(), LAYERS, s.capacity(),
                s.prior(), seed);
    }

    @Test
    void whichArmsAliasAndPagedKTwiceIsBitwiseIdentical(Evidence ev) {
        ev.seed(SEED);
        UnionRun.Spec spec = new UnionRun.Spec(1, 4, 1, 40, 10, 16, 16, CompressRatio.CSA, 0, Precision.F32);
        UnionInputs in = spec.inputs(SEED);
        Tensor q = Tensors.of4(in.q(), DType.F32);
        Tensor k = Tensors.kv(in.k(), DType.F32);
        Tensor c = Tensors.kv(in.compressed(), DType.F32);
        Tensor sinks = Tensors.sinks(in.sinks());
        FusedVStats stats = VkDedup.fusedVStats();
        Map<AttentionArm, FusedVStats.Snapshot> table = new EnumMap<>(AttentionArm.class);
        Map<AttentionArm, float[]> outputs = new EnumMap<>(AttentionArm.class);
        for (AttentionArm arm : AttentionArm.values()) {
            FusedVStats.Snapshot before = stats.snapshot();
            outputs.put(arm, arm.call(q, k, c, sinks, spec.config(), false).toFloatArray());
            table.put(arm, stats.snapshot().minus(before));
        }
        long wrong = 0;
        for (AttentionArm arm : AttentionArm.values()) {
            FusedVStats.Snapshot s = table.get(arm);
            boolean aliases = arm != AttentionArm.PAGED;
            wrong += aliases ? (s.aliased() == 2 && s.materialized() == 0 ? 0 : 1)
                    : (s.aliased() == 0 && s.materialized() == 2 ? 0 : 1);
            ev.info("aliased_sites:" + arm, s.aliased());
            ev.info("materialized_sites:" + arm, s.materialized());
        }
        ev.checkBitIdentical("arms_with_unexpected_counters", wrong);

        FusedVStats.Snapshot before = stats.snapshot();
        float[] pagedTwice = AttentionArm.PAGED.call(q, k, c, sinks, spec.config(), true).toFloatArray();
        FusedVStats.Snapshot twice = stats.snapshot().minus(before);
        ev.checkBitIdentical("bits_paged_k_twice_vs_k_and_v",
                Diff.bitsDiffering(outputs.get(AttentionArm.PAGED), pagedTwice));
        ev.check("paged_k_twice_aliased_sites_missing", 2 - twice.aliased(), 0, null);
        // Every arm computes the same attention: the handles differ, the bits do not.
        long armBits = 0;
        for (AttentionArm arm : AttentionArm.values()) {
            armBits += Diff.bitsDiffering(outputs.get(AttentionArm.DENSE), outputs.get(arm));
        }
        ev.checkBitIdentical("bits_between_arms", armBits);
        // Control: a V that differs from K in one element changes the paged output.
        Tensor vOff = k.copy();
        vOff.set(vOff.get(0, 0, 39, 0) + 1f, 0, 0, 39, 0);
        float[] distinct = io.attnproof.attention.dsv4.Dsv4Attention.attention(q, k, vOff, c, null, sinks,
                spec.config()).toFloatArray();
        ev.controlAtLeast("bits_with_a_distinct_v", Diff.bitsDiffering(outputs.get(AttentionArm.PAGED), distinct), 1);
        System.out.println("V4 arm table (aliased, materialized): " + table + "; paged K twice: " + twice);
    }

    /**
     * V4 on the engine's own calls: the V4 model decodes a prompt (its prefill and decode-step call sites) through each
     * serving arm; the dedup counters of those calls say which arms alias, and every arm gives the same tokens.
     */
    @Test
    void theModelsOwnCallsAliasExactlyOnTheAliasingArms(Evidence ev) {
        ev.seed(SEED);
        FusedVStats stats = VkDedup.fusedVStats();
        java.util.List<Integer> prompt = java.util.List.of(3, 14, 15, 9, 2, 6, 5, 3, 5, 8, 9, 7);
        int newTokens = 6;
        Map<AttentionArm, FusedVStats.Snapshot> table = new EnumMap<>(AttentionArm.class);
        Map<AttentionArm, java.util.List<Integer>> tokens = new EnumMap<>(AttentionArm.class);
        int layers = 0;
        for (AttentionArm arm : AttentionArm.values()) {
            V4Model model = new V4Model(V4Weights.seeded(config(SEED)), true, arm);
            layers = model.config().layers();
            FusedVStats.Snapshot before = stats.snapshot();
            tokens.put(arm, io.attnproof.attention.mtp.GreedyDecoder.decodeAlone(model, prompt, newTokens));
            table.put(arm, stats.snapshot().minus(before));
        }
        // Degeneracy, measured: every arm's calls reached the dedup sites (prefill + each decode step, every layer).
        long minSites = table.values().stream().mapToLong(x -> x.aliased() + x.materialized()).min().orElse(0);
        ev.degeneracy("dedup_sites_per_arm_min", minSites, io.attnproof.fixtures.evidence.Comparison.GE,
                2L * layers, "prefill and the decode steps call attention through the arm, layer after layer");
        long wrong = 0;
        for (AttentionArm arm : AttentionArm.values()) {
            FusedVStats.Snapshot s = table.get(arm);
            boolean aliases = arm != AttentionArm.PAGED;
            wrong += aliases ? s.materialized() : s.aliased();
            ev.info("model_aliased_sites:" + arm, s.aliased());
            ev.info("model_materialized_sites:" + arm, s.materialized());
        }
        ev.checkEqual("model_sites_against_their_arms_rule", wrong, 0);
        long tokensDiffering = 0;
        for (AttentionArm arm : AttentionArm.values()) {
            tokensDiffering += tokens.get(arm).equals(tokens.get(AttentionArm.DENSE)) ? 0 : 1;
        }
        ev.checkEqual("arms_decoding_other_tokens_than_dense", tokensDiffering, 0);
        System.out.println("V4 model arm table (aliased, materialized): " + table);
    }
}
