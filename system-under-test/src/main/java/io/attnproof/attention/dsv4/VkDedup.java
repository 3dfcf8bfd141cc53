package io.attnproof.attention.dsv4;

import io.attnproof.attention.engine.UnionRows;
import io.attnproof.attention.tensor.Tensor;
import java.util.function.Supplier;

/**
 * V≡K dedup (docs/system.md §9): when V is the same handle as K ({@code v_aliases_k}, decided before narrowing makes new
 * ids), the narrowed K and the concatenated union K serve as V instead of materialising V twice; each duplication
 * site counts into {@code fused_v_stats}.
 */
public final class VkDedup {
    private static final FusedVStats STATS = new FusedVStats();

    private VkDedup() {
    }

    /** {@code v_aliases_k}: handle identity, never equal values. */
    public static boolean vAliasesK(Tensor k, Tensor v) {
        return k.id().equals(v.id());
    }

    /** The process-wide {@code fused_v_stats}. */
    public static FusedVStats fusedVStats() {
        return STATS;
    }

    /**
     * One duplication site: {@code k}'s result reused when V aliases K, else {@code materializeV} run. The sites of
     * {@code dsv4_attention} hand over in-place row views ({@link UnionRows}), so "materialising" V builds a view of
     * V's own storage and copies nothing either way.
     */
    static <T> T site(boolean vAliasesK, T k, Supplier<T> materializeV) {
        STATS.count(vAliasesK);
        return vAliasesK ? k : materializeV.get();
    }
}
