package io.attnproof.conformance.cases;

import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.Dsv4Config;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One validated union-attention case (README "Cases"): the system under test's tensors, already rounded to the
 * case's dtype ({@code sinks} stays float32), and the layer config. {@code v} is the same handle as {@code k} when
 * the case names no {@code v}; {@code compressedKv} and {@code mask} may be null; {@code rowQ0} is null for a case
 * without per-row positions.
 */
public record AttnCase(Path file, Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor compressedKv, Tensor mask,
        CompressRatio ratio, int window, int rawPrefix, long[] rowQ0, DType dtype) implements AnyCase {

    public AttnCase {
        rowQ0 = rowQ0 == null ? null : rowQ0.clone();
    }

    @Override
    public long[] rowQ0() {
        return rowQ0 == null ? null : rowQ0.clone();
    }

    public int batch() {
        return q.dim(0);
    }

    public int heads() {
        return q.dim(1);
    }

    public int tq() {
        return q.dim(2);
    }

    public int headDim() {
        return q.dim(3);
    }

    public int tk() {
        return k.dim(2);
    }

    /** Compressed columns the system sees: 0 without compressed_kv. */
    public int tc() {
        return compressedKv == null ? 0 : compressedKv.dim(2);
    }

    public long tkFull() {
        return (long) rawPrefix + tk();
    }

    /** The batch's position of query row 0. */
    public long q0() {
        return tkFull() - tq();
    }

    /** Whether V is K itself (the case names no {@code v}). */
    public boolean vIsK() {
        return v == k;
    }

    /** The config handed to {@code Dsv4Attention}. */
    public Dsv4Config config() {
        return Dsv4Config.of(ratio, window, rawPrefix).withRowQ0(rowQ0);
    }

    /** The output shape {@code [B, H, tq, D]}. */
    @Override
    public int[] outputShape() {
        return new int[] {batch(), heads(), tq(), headDim()};
    }

    /** Shapes and config in one line, for reports. */
    @Override
    public String describe() {
        return "B=" + batch() + " H=" + heads() + " tq=" + tq() + " tk=" + tk() + " tc=" + tc() + " D=" + headDim()
                + ", ratio " + ratio.value() + ", W " + window + ", rawPrefix " + rawPrefix
                + (rowQ0 == null ? "" : ", rowQ0 " + Arrays.toString(rowQ0)) + ", " + dtype
                + (vIsK() ? ", v = k" : "") + (mask == null ? "" : ", mask " + Arrays.toString(mask.shape()));
    }
}
