package io.attnproof.attention.dsv4;

import java.lang.foreign.MemorySegment;

/**
 * One call of the union kernel: {@code q[B,H,tq,D]} read in place, the union key and value rows, which columns each
 * query row admits, one sink logit per head (-inf: none), and the output {@code [B,H,tq,D]} being written (zeros on
 * entry; each row is its own accumulator).
 */
record UnionCall(MemorySegment q, int batch, int heads, int tq, int headDim, float scale, UnionRows keys,
        UnionRows values, Admission admission, float[] sink, float[] out) {

    /** Byte offset of {@code q[b, h, r, 0]} in {@link #q()}. */
    long qByteOffset(int b, int h, int r) {
        return (((long) b * heads + h) * tq + r) * headDim * Float.BYTES;
    }

    /** Index of {@code out[b, h, r, 0]}. */
    int outOffset(int b, int h, int r) {
        return ((b * heads + h) * tq + r) * headDim;
    }

    /** Union columns of the keys. */
    int columns() {
        return keys.columns();
    }

    /** An upper bound of the multiply-adds: every row against every column, scores and PV. */
    long macs() {
        return 2L * batch * heads * tq * columns() * headDim;
    }
}
