package io.attnproof.attention.tensor;

import java.util.concurrent.atomic.AtomicLong;

/** A tensor's identity: equal ids mean the same handle, never merely equal values. */
public record TensorId(long value) {
    private static final AtomicLong NEXT = new AtomicLong(1);

    /** A fresh id, distinct from every id issued before in this process. */
    public static TensorId fresh() {
        return new TensorId(NEXT.getAndIncrement());
    }
}
