package io.attnproof.attention.engine;

import io.attnproof.attention.dispatch.DispatchRegistry;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ObjIntConsumer;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * An engine for the union kernel. Both engines compute, for every query row (batch entry b, head h, position r), the
 * same sequence of IEEE f32 operations over the row's admitted columns {@code c_0 < c_1 < ...} (ordinals i):
 * <ol>
 *   <li>score {@code s_i = fma-chain_d(q[d], k_i[d]) * scale (+ bias_i)}: {@code acc = fma(q[d], k_i[d], acc)} for
 *       d = 0 .. D-1 from {@code acc = 0};</li>
 *   <li>online softmax over tiles of {@link LaneMath#TILE} consecutive ordinals, the running max {@code m} started at
 *       the head's sink: {@code mNew = max(m, max_tile s_i)}; {@code alpha = exp(m - mNew)},
 *       {@code p_i = exp(s_i - mNew)} (both 0 while {@code mNew} is -inf); {@code l = l * alpha}, then
 *       {@code l = l + p_i} in ordinal order; {@code o[d] = o[d] * alpha}, then {@code o[d] = fma(p_i, v_i[d], o[d])}
 *       in ordinal order;</li>
 *   <li>finally {@code o[d] / (l + exp(sink - m))}, or zeros when {@code m} is still -inf (no sink, nothing
 *       admitted).</li>
 * </ol>
 * {@code exp} is {@link LaneMath#exp}. A row's result depends only on its admitted keys in order (their values and
 * biases), never on the column indices, the rows computed beside it, the vector length, the tiling of the work over
 * threads, or which engine ran: so narrowing to the keep span, a ragged row against the same row alone, the absorbed
 * against the repeat-KV traversal and a rule against the same dense mask all agree bit for bit. A column a row does
 * not admit is never read for it.
 */
abstract sealed class UnionLanes permits ScalarLanes, VectorLanes {
    /** Below this many multiply-adds a call runs on the calling thread alone. */
    static final long PARALLEL_MIN_MACS = DispatchRegistry.CPU_PARALLEL_MIN_MACS;
    /** {@code -Dattnproof.cpu.threads=1} keeps every call on the calling thread (single-thread measurements). */
    static final boolean SINGLE_THREAD = Integer.getInteger("attnproof.cpu.threads", 0) == 1;

    private static final UnionLanes DEFAULT = choose();
    /** {@code -Dattnproof.cpu.lanes=vector}: the vector engine for every call, however small (where present). */
    private static final boolean ALWAYS = "vector".equals(System.getProperty("attnproof.cpu.lanes"));

    /** Runs {@code call}, writing its output. */
    abstract void run(UnionCall call);

    /** What this engine is, for reports. */
    abstract String describe();

    /** Below this many multiply-adds a call takes the scalar engine: the same bits, and no vector warm-up to pay. */
    static final long VECTOR_MIN_MACS = DispatchRegistry.CPU_VECTOR_MIN_MACS;

    /** The engine {@code dsv4_attention} uses: the Vector API one where {@code jdk.incubator.vector} is present. */
    static UnionLanes engine() {
        return DEFAULT;
    }

    /**
     * The engine for {@code call}: {@link #engine()}, except that small calls run on the scalar engine. Vector API
     * code is only fast once C2 has compiled it (before that every vector operation allocates); a process that
     * makes few or tiny calls (a test run, each mutant's fresh class loader) would pay for that warm-up and gain
     * nothing. The engines agree bit for bit, so the choice never shows in a result.
     */
    static UnionLanes forCall(UnionCall call) {
        return smallCall(call.macs()) ? ScalarLanes.INSTANCE : DEFAULT;
    }

    /** Whether a call of {@code macs} multiply-adds is small enough for the scalar engine (the registry's switch). */
    static boolean smallCall(long macs) {
        return macs < VECTOR_MIN_MACS && !ALWAYS;
    }

    /** Whether a call of {@code macs} multiply-adds runs on the fork-join pool (the registry's switch). */
    static boolean parallel(long macs) {
        return macs >= PARALLEL_MIN_MACS;
    }

    /** The scalar engine: the same arithmetic without the Vector API. */
    static UnionLanes scalar() {
        return ScalarLanes.INSTANCE;
    }

    /** The Vector API engine, or null where {@code jdk.incubator.vector} is not in the boot layer. */
    static UnionLanes vector() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return null;
        }
        try {
            return (UnionLanes) Class.forName("io.attnproof.attention.engine.VectorLanes").getDeclaredConstructor()
                    .newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    private static UnionLanes choose() {
        if ("scalar".equals(System.getProperty("attnproof.cpu.lanes"))) {
            return scalar();
        }
        UnionLanes v = vector();
        return v == null ? scalar() : v;
    }

    /**
     * Scratch buffers lent to whichever thread runs a work item and taken back after it. (A thread-local would not
     * do: common-pool workers drop their thread locals after every task, so the buffers would be reallocated on
     * every call.) It holds at most as many as ever ran at once.
     */
    static final class Pool<S> {
        private final ConcurrentLinkedDeque<S> free = new ConcurrentLinkedDeque<>();
        private final Supplier<S> make;

        Pool(Supplier<S> make) {
            this.make = make;
        }

        S take() {
            S s = free.pollFirst();
            return s == null ? make.get() : s;
        }

        void give(S s) {
            free.offerFirst(s);
        }
    }

    /**
     * Runs {@code body(scratch, 0 .. items-1)}, on the common fork-join pool when {@code parallel}: one task per thread,
     * each taking the next item until none is left (items of unequal cost, such as causal rows, would leave a thread
     * idle under a fixed split).
     */
    static <S> void forEach(int items, boolean parallel, Pool<S> pool, ObjIntConsumer<S> body) {
        if (!parallel || items < 2 || SINGLE_THREAD) {
            S s = pool.take();
            try {
                for (int i = 0; i < items; i++) {
                    body.accept(s, i);
                }
            } finally {
                pool.give(s);
            }
        } else {
            AtomicInteger next = new AtomicInteger();
            IntStream.range(0, Math.min(items, threads())).parallel().forEach(w -> {
                S s = pool.take();
                try {
                    for (int i = next.getAndIncrement(); i < items; i = next.getAndIncrement()) {
                        body.accept(s, i);
                    }
                } finally {
                    pool.give(s);
                }
            });
        }
    }

    /** Threads a parallel call runs on: the common pool's workers and the caller. */
    static int threads() {
        return SINGLE_THREAD ? 1 : ForkJoinPool.getCommonPoolParallelism() + 1;
    }

    static float[] grow(float[] a, int n) {
        return a.length >= n ? a : new float[Math.max(n, a.length * 2)];
    }
}
