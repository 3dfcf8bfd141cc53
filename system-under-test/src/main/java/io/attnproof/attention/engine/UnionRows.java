package io.attnproof.attention.engine;

import io.attnproof.attention.tensor.Tensor;
import java.lang.foreign.MemorySegment;

/**
 * The key (or value) rows of a call's union columns, read in place through read-only views ({@link Tensor#view()}):
 * column {@code c < head.rows()} is row {@code head.start() + c} of the head tensor (the raw keep span), column
 * {@code c >= head.rows()} is row {@code c - head.rows()} of the tail tensor (the compressed blocks). Narrowing to
 * the keep span and concatenating the compressed blocks are index arithmetic here: no element is copied.
 */
public record UnionRows(Span head, Span tail) {

    /** Rows {@code [start, start + rows)} of every batch entry of a {@code [B, 1, T, D]} tensor, in place. */
    public record Span(MemorySegment data, int batchRows, int start, int rows, int headDim) {

        /** Rows {@code [start, start + rows)} of {@code t} ({@code [B, 1, T, D]}). */
        public static Span of(Tensor t, int start, int rows) {
            return new Span(t.view(), t.dim(2), start, rows, t.dim(3));
        }

        /** Byte offset of row {@code row} (relative to {@code start}) of batch entry {@code b}. */
        long byteOffset(int b, int row) {
            return ((long) b * batchRows + start + row) * headDim * Float.BYTES;
        }
    }

    /** The union {@code [head ++ tail]}; {@code tail} null for none. */
    public static UnionRows of(Span head, Span tail) {
        return new UnionRows(head, tail);
    }

    /** All of a {@code [B, 1, n, D]} tensor as union columns (the dense reference form). */
    static UnionRows whole(Tensor t) {
        return new UnionRows(Span.of(t, 0, t.dim(2)), null);
    }

    /** Union columns: raw keep span, then compressed blocks. */
    int columns() {
        return head.rows() + (tail == null ? 0 : tail.rows());
    }

    /** The view holding column {@code c}. */
    MemorySegment data(int c) {
        return c < head.rows() ? head.data() : tail.data();
    }

    /** Byte offset of column {@code c} of batch entry {@code b} inside {@link #data(int)}. */
    long byteOffset(int b, int c) {
        return c < head.rows() ? head.byteOffset(b, c) : tail.byteOffset(b, c - head.rows());
    }
}
