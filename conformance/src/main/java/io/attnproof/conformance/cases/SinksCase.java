package io.attnproof.conformance.cases;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One validated GPT-OSS sinks-attention case ({@code "kind": "sinks"}, README "Cases"): per-query-head sinks
 * ({@code -inf}: no sink), bottom-right-aligned causality with an optional sliding window ({@code window} 0: none),
 * an optional caller mask, or packed varlen rows with {@code cu_seqlens}. Dense: {@code q[B,Hq,tq,D]},
 * {@code k, v[B,Hkv,tk,D]}, output {@code [B,Hq,tq,D]}. Varlen ({@code cuSeqlensQ} non-null): {@code q[totalQ,Hq,D]},
 * {@code k, v[totalK,Hkv,D]}, output {@code [sequences,Hq,max_q,D]} with rows past a sequence's q_len zero.
 * Tensors are rounded to the dtype; {@code sinks} stays float32; {@code v} is the same handle as {@code k} when the
 * case names no {@code v}.
 */
public record SinksCase(Path file, Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window,
        int[] cuSeqlensQ, int[] cuSeqlensK, DType dtype) implements AnyCase {

    public SinksCase {
        cuSeqlensQ = cuSeqlensQ == null ? null : cuSeqlensQ.clone();
        cuSeqlensK = cuSeqlensK == null ? null : cuSeqlensK.clone();
    }

    @Override
    public int[] cuSeqlensQ() {
        return cuSeqlensQ == null ? null : cuSeqlensQ.clone();
    }

    @Override
    public int[] cuSeqlensK() {
        return cuSeqlensK == null ? null : cuSeqlensK.clone();
    }

    /** Whether the case holds packed varlen rows. */
    public boolean varlen() {
        return cuSeqlensQ != null;
    }

    public int queryHeads() {
        return q.dim(1);
    }

    public int kvHeads() {
        return k.dim(1);
    }

    public int headDim() {
        return varlen() ? q.dim(2) : q.dim(3);
    }

    /** Dense batch, or the number of packed sequences. */
    public int batch() {
        return varlen() ? cuSeqlensQ.length - 1 : q.dim(0);
    }

    /** Dense tq, or the longest packed sequence's query rows. */
    public int tq() {
        if (!varlen()) {
            return q.dim(2);
        }
        int max = 0;
        for (int i = 0; i + 1 < cuSeqlensQ.length; i++) {
            max = Math.max(max, cuSeqlensQ[i + 1] - cuSeqlensQ[i]);
        }
        return max;
    }

    @Override
    public int[] outputShape() {
        return new int[] {batch(), queryHeads(), tq(), headDim()};
    }

    @Override
    public String describe() {
        String shapes = varlen()
                ? "varlen " + batch() + " sequences, cu_seqlens_q " + Arrays.toString(cuSeqlensQ) + ", cu_seqlens_k "
                        + Arrays.toString(cuSeqlensK) + ", Hq=" + queryHeads() + " Hkv=" + kvHeads() + " D=" + headDim()
                : "B=" + batch() + " Hq=" + queryHeads() + " Hkv=" + kvHeads() + " tq=" + tq() + " tk=" + k.dim(2)
                        + " D=" + headDim();
        return "sinks attention, " + shapes + ", window " + window + ", " + dtype + (v == k ? ", v = k" : "")
                + (mask == null ? "" : ", mask " + Arrays.toString(mask.shape()));
    }
}
