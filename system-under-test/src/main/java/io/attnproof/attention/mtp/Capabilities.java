package io.attnproof.attention.mtp;

import java.util.Optional;

/**
 * The three checks PER_SEQUENCE KV advance needs, in the order they are asked:
 * {@code cache_supports_per_sequence_advance} (the cache can carry a per-row length),
 * {@code target_masks_ragged_batches} (the target model masks left-aligned ragged cohorts) and
 * {@code step_carries_per_sequence_lengths} (the fused step keys on per-row lengths, not one shared cache_len).
 */
public record Capabilities(Check cache, Check target, Check step) {

    /** One capability check: whether it passed, and what was found when it did not. */
    public record Check(String name, boolean passed, String finding) {
        public static Check pass(String name) {
            return new Check(name, true, "");
        }

        public static Check fail(String name, String finding) {
            return new Check(name, false, finding);
        }
    }

    public static final String CACHE = "cache_supports_per_sequence_advance";
    public static final String TARGET = "target_masks_ragged_batches";
    public static final String STEP = "step_carries_per_sequence_lengths";

    /**
     * The refusal text for a PER_SEQUENCE request, naming the first failing check (and never a cleared one);
     * empty when all three pass.
     */
    public Optional<String> refusal() {
        for (Check c : new Check[] {cache, target, step}) {
            if (!c.passed()) {
                return Optional.of("KvAdvance::PerSequence requested but this stack cannot honour it: " + c.name()
                        + " failed: " + c.finding() + ". Falling back to KvAdvance::Cohort.");
            }
        }
        return Optional.empty();
    }
}
