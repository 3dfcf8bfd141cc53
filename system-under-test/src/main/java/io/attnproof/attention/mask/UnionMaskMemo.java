package io.attnproof.attention.mask;

import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A thread-local FIFO memo of uniform union masks keyed on {@link UnionMaskKey}. One step touches at most three
 * keys (the STANDARD, CSA and HCA classes), so four slots hold a step with room to spare. A hit returns the
 * cached read-only tensor; a miss runs {@link #buildValid}, the exact unmemoised build.
 */
public final class UnionMaskMemo {
    /** Slots per thread. */
    public static final int SLOTS = 4;

    private static final ThreadLocal<UnionMaskMemo> CURRENT = ThreadLocal.withInitial(UnionMaskMemo::new);

    private record Entry(UnionMaskKey key, Tensor mask) {
    }

    private final ArrayDeque<Entry> entries = new ArrayDeque<>(SLOTS);
    private long builds;
    private long hits;

    private UnionMaskMemo() {
    }

    /** This thread's memo. */
    public static UnionMaskMemo current() {
        return CURRENT.get();
    }

    /** The unmemoised build: the dense additive mask of {@code key}, read-only. */
    public static Tensor buildValid(UnionMaskKey key) {
        return key.mask().materialize(key.dtype(), key.device());
    }

    /** The mask for {@code key}: cached if present, otherwise built, stored (evicting the oldest) and returned. */
    public Tensor get(UnionMaskKey key) {
        for (Entry e : entries) {
            if (e.key().equals(key)) {
                hits++;
                return e.mask();
            }
        }
        builds++;
        Tensor mask = buildValid(key);
        if (entries.size() == SLOTS) {
            entries.removeFirst();
        }
        entries.addLast(new Entry(key, mask));
        return mask;
    }

    /** Masks built by this thread's memo since it was created or cleared. */
    public long builds() {
        return builds;
    }

    /** Lookups served from a slot. */
    public long hits() {
        return hits;
    }

    /** Keys held now, oldest first. */
    public List<UnionMaskKey> keys() {
        List<UnionMaskKey> keys = new ArrayList<>(entries.size());
        entries.forEach(e -> keys.add(e.key()));
        return keys;
    }

    /** Empties the slots and zeroes the counters of this thread's memo. */
    public void clear() {
        entries.clear();
        builds = 0;
        hits = 0;
    }
}
