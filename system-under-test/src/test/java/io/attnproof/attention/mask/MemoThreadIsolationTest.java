package io.attnproof.attention.mask;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import io.attnproof.fixtures.tolerance.Diff;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** M7: concurrent threads never see each other's memo entries. */
@Claim("M7")
class MemoThreadIsolationTest {
    static final int THREADS = 8;
    static final int LOOKUPS_PER_THREAD = 2_000;
    static final long SEED = 77;

    /** Per-thread result: the keys it asked for, the handles it got, and its own memo's view. */
    record Seen(Set<UnionMaskKey> asked, Map<Tensor, UnionMaskKey> handles, List<UnionMaskKey> heldKeys, long builds,
            long hits, long wrongBits) {
    }

    @Test
    void threadsNeverSeeEachOthersEntries(Evidence ev) throws Exception {
        ev.seed(SEED);
        // Half the keys are shared by every thread (the same integers), half are private to one thread.
        List<UnionMaskKey> shared = keys(0, 6);
        CyclicBarrier start = new CyclicBarrier(THREADS);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<Seen>> futures = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            futures.add(pool.submit(() -> run(thread, shared, keys(100 * (thread + 1), 6), start)));
        }
        List<Seen> seen = new ArrayList<>();
        for (Future<Seen> f : futures) {
            seen.add(f.get(60, TimeUnit.SECONDS));
        }
        pool.shutdown();

        long foreign = 0;
        long wrongBits = 0;
        Map<Tensor, Integer> owner = new IdentityHashMap<>();
        long handlesShared = 0;
        for (int t = 0; t < THREADS; t++) {
            Seen s = seen.get(t);
            wrongBits += s.wrongBits();
            for (UnionMaskKey k : s.heldKeys()) {
                foreign += s.asked().contains(k) ? 0 : 1;
            }
            for (Tensor handle : s.handles().keySet()) {
                Integer prev = owner.put(handle, t);
                handlesShared += prev != null && prev != t ? 1 : 0;
            }
        }
        // The stress has teeth only if every thread missed and rebuilt the shared keys on its own.
        long minBuilds = seen.stream().mapToLong(Seen::builds).min().orElse(0);
        ev.degeneracy("threads_evict_and_rebuild", minBuilds, Comparison.GT, 12, "min builds per thread");
        long threadsAskingAllShared = seen.stream().filter(s -> s.asked().containsAll(shared)).count();
        ev.degeneracy("threads_asking_every_shared_key", threadsAskingAllShared, Comparison.EQ, seen.size(),
                threadsAskingAllShared + " of " + seen.size());
        // Read from the memos: the lookups they answered (builds + hits).
        long lookups = seen.stream().mapToLong(s -> s.builds() + s.hits()).sum();
        ev.degeneracy("lookups_answered_by_the_memos", lookups, Comparison.GE, 10_000, THREADS + " threads");

        ev.checkBitIdentical("foreign_keys_held", foreign);
        ev.checkBitIdentical("handles_seen_by_two_threads", handlesShared);
        ev.checkBitIdentical("cells_differing_from_fresh_build", wrongBits);
    }

    private static Seen run(int thread, List<UnionMaskKey> shared, List<UnionMaskKey> own, CyclicBarrier start)
            throws Exception {
        UnionMaskMemo memo = UnionMaskMemo.current();
        memo.clear();
        SplittableRandom rng = Streams.row(SEED, thread);
        Set<UnionMaskKey> asked = new HashSet<>();
        Map<Tensor, UnionMaskKey> handles = new IdentityHashMap<>();
        long wrong = 0;
        start.await();
        for (int i = 0; i < LOOKUPS_PER_THREAD; i++) {
            List<UnionMaskKey> from = rng.nextBoolean() ? shared : own;
            UnionMaskKey key = from.get(rng.nextInt(from.size()));
            asked.add(key);
            Tensor got = memo.get(key);
            UnionMaskKey prev = handles.put(got, key);
            if (prev != null && !prev.equals(key)) {
                wrong++;
            }
            if (i % 16 == 0) {
                wrong += Diff.bitsDiffering(got.toFloatArray(), UnionMaskMemo.buildValid(key).toFloatArray());
            }
        }
        return new Seen(asked, handles, Collections.unmodifiableList(memo.keys()), memo.builds(), memo.hits(), wrong);
    }

    private static List<UnionMaskKey> keys(int q0Base, int count) {
        List<UnionMaskKey> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long q0 = 40 + q0Base + i;
            out.add(new UnionMaskKey(q0, 2, q0 - 6, 8, 8, 12, 4, DType.F32, Device.CPU));
        }
        return out;
    }
}
