package io.attnproof.conformance.corpus;

import java.util.List;

/**
 * The dispatch-boundary shapes of B1 the corpus exercises, as data so the list grows with the system's registry: each
 * edge at -1, 0 and +1. Today: the fused head-dim envelopes of docs/system.md §8 (64..256, and 512 behind ARC_FLASH_512),
 * the union kernel's tile of 64 admitted keys (LaneMath.TILE), and the split-K decode switch at kv_len 1024.
 */
final class Boundaries {
    private Boundaries() {
    }

    /** Head dims of the fused envelopes, each edge at -1, 0, +1. */
    static final List<Integer> HEAD_DIM_EDGES = List.of(64, 80, 96, 112, 128, 192, 256, 512);
    /** Head dims at which only the prefill kernel exists (Metal decode lacks them): decode calls there too. */
    static final List<Integer> DECODE_ONLY_PREFILL = List.of(112, 192);
    /** Key counts of the union kernel's tiles. */
    static final List<Integer> UNION_TILE_EDGES = List.of(64, 128);
    /** kv_len of the split-K decode switch. */
    static final List<Integer> SPLIT_K_EDGES = List.of(1024);
    /** The head dims of the small corpus. */
    static final List<Integer> SMALL_HEAD_DIMS = List.of(63, 64, 65, 512);

    /** Every edge of {@code edges} at -1, 0 and +1, in order. */
    static List<Integer> around(List<Integer> edges) {
        return edges.stream().flatMap(e -> java.util.stream.Stream.of(e - 1, e, e + 1)).toList();
    }
}
