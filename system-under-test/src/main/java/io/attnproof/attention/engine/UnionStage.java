package io.attnproof.attention.engine;

import io.attnproof.attention.mask.CallerMasks;
import io.attnproof.attention.mask.UnionMask;
import io.attnproof.attention.tensor.Tensor;

/**
 * Union attention's last stage, handed to a lane ({@code Backend.attendUnion}): {@code q[B,H,tq,D]} against the
 * narrowed raw keys {@code [from, from + keep)} of {@code k}/{@code v} followed by the compressed blocks, under the
 * local mask composed with the caller's, softmax with {@code sink[H]} (null: none), times V. It carries both forms a
 * lane may read: the in-place rows and the admission rule (the Java engines), and the dense tensors and composed
 * additive mask (the native kernels, which take dense arguments).
 *
 * @param keys       the union key columns in place ({@code V}'s when V aliases K)
 * @param values     the union value columns in place
 * @param rule       the uniform rule of the memoised local mask; null when the call is not uniform
 * @param localMask  the local additive mask (dense; the memo's for a uniform call)
 * @param callerMask the caller's mask, or null
 * @param span       the call's shape, for composing the caller's mask onto the local one
 * @param absorbed   the absorbed-MQA path (decode with sinks) rather than repeat-KV
 */
public record UnionStage(Tensor q, Tensor k, Tensor v, Tensor compressed, int from, int keep, boolean vAliasesK,
        UnionRows keys, UnionRows values, UnionMask rule, Tensor localMask, Tensor callerMask, CallerMasks.Span span,
        boolean absorbed, float[] sink) {

    /** The local mask with the caller's composed onto it: {@code [B|1, H|1, tq, keep + tc]}. */
    public Tensor composedMask() {
        return CallerMasks.compose(localMask, callerMask, span);
    }

    /** The raw keep span of K, then the compressed blocks, as one dense {@code [B, 1, keep + tc, D]} tensor. */
    public Tensor denseKeys() {
        Tensor raw = k.narrow(2, from, keep);
        return compressed == null ? raw : Tensor.cat(2, raw, compressed);
    }

    /** {@link #denseKeys()} for V: the same tensor when V aliases K. */
    public Tensor denseValues(Tensor denseKeys) {
        if (vAliasesK) {
            return denseKeys;
        }
        Tensor raw = v.narrow(2, from, keep);
        return compressed == null ? raw : Tensor.cat(2, raw, compressed);
    }

    /**
     * The columns each row admits: read from the uniform rule when there is one and no caller mask beyond a scalar,
     * else from the composed dense mask.
     */
    Admission admission() {
        if (rule != null && (callerMask == null || callerMask.numel() == 1)) {
            return Admission.rule(rule);
        }
        return Admission.dense(composedMask(), q.dim(0), q.dim(1), q.dim(2), keys.columns());
    }
}
