package io.attnproof.oracles;

/**
 * Which same-precision naive reference a tolerance is built from (docs/claims.md "Tolerance rule"): both round the inputs
 * and the output to the dtype and accumulate matmuls in f32 for 16-bit dtypes; they differ in the intermediates.
 */
public enum NaiveTier {
    /** FlashAttention's {@code attention_ref} without upcast: logits and probabilities rounded to the dtype too. */
    COMPATIBILITY,
    /** The precision the system promises: logits and probabilities kept in the accumulator precision (f32). */
    CONTRACT;

    /** The precision intermediates (logits, probabilities) are rounded to under this tier. */
    Precision intermediates(Precision precision, Precision accumulator) {
        return this == CONTRACT ? accumulator : precision;
    }
}
