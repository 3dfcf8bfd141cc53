package io.attnproof.attention.engine;

import java.lang.foreign.MemorySegment;

/**
 * One call of the union kernel: {@code q[B,H,tq,D]} read in place, the union key and value rows, which columns each
 * query row admits, one sink logit per head (-inf: none), and the output {@code [B,H,tq,D]} being written (zeros on
 * entry; each row is its own accumulator). {@link Form} says how the rows are formed: the union kernel's, or one of
 * the sinks-attention forms that run on the same engines.
 */
record UnionCall(MemorySegment q, int batch, int heads, int tq, int headDim, float scale, UnionRows keys,
        UnionRows values, Admission admission, float[] sink, float[] out, Form form) {

    /**
     * How a call's rows are formed.
     *
     * @param sinkPeriod batch entries {@code b} and {@code b + sinkPeriod} share their sinks: the sink of row
     *     {@code (b, h)} is {@code sink[(b % sinkPeriod) * heads + h]} (1 for the union kernel; {@code Hkv} for GQA
     *     sinks attention, whose batch entries are the (batch, KV head) pairs)
     * @param twoPass the unfused form: the scores of all admitted keys first (one tile), then the softmax with the
     *     sink normalised ({@code p_i / (e^(sink-m) + sum p)}), then PV with the normalised weights; no final division
     * @param splitOnColumns split-K decided by the call's columns (the kv length) and chunked on column indices (the
     *     fused sinks kernels' rule), instead of on each row's admitted count and ordinals (the union kernel's)
     */
    record Form(int sinkPeriod, boolean twoPass, boolean splitOnColumns) {
        /** The union kernel: one sink per head, online softmax, split-K on admitted ordinals. */
        static final Form UNION = new Form(1, false, false);
    }

    /** A union-kernel call ({@link Form#UNION}). */
    UnionCall(MemorySegment q, int batch, int heads, int tq, int headDim, float scale, UnionRows keys,
            UnionRows values, Admission admission, float[] sink, float[] out) {
        this(q, batch, heads, tq, headDim, scale, keys, values, admission, sink, out, Form.UNION);
    }

    /** The sink logit of row {@code (b, h)}. */
    float sink(int b, int h) {
        return sink[(b % form.sinkPeriod()) * heads + h];
    }

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
