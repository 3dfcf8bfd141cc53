package io.attnproof.attention.dsv4;

import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code fused_v_stats}: one count per V duplication site (narrow, cat) per {@code dsv4_attention} call, under
 * {@code aliased} when V reused K's tensor and {@code materialized} when V was built on its own. Thread-safe.
 */
public final class FusedVStats {
    private final AtomicLong aliased = new AtomicLong();
    private final AtomicLong materialized = new AtomicLong();

    /** The counters at one moment. */
    public record Snapshot(long aliased, long materialized) {
        /** The counts since {@code earlier}. */
        public Snapshot minus(Snapshot earlier) {
            return new Snapshot(aliased - earlier.aliased, materialized - earlier.materialized);
        }
    }

    FusedVStats() {
    }

    public long aliased() {
        return aliased.get();
    }

    public long materialized() {
        return materialized.get();
    }

    /** Both counters (each read atomically; concurrent calls may land between the two reads). */
    public Snapshot snapshot() {
        return new Snapshot(aliased.get(), materialized.get());
    }

    /** Zeroes both counters. */
    public void reset() {
        aliased.set(0);
        materialized.set(0);
    }

    /** Counts one duplication site. */
    void count(boolean vAliasesK) {
        (vAliasesK ? aliased : materialized).incrementAndGet();
    }
}
