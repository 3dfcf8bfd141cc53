package io.attnproof.attention.mask;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;

/** The full memo key of a uniform union mask: its seven integers plus dtype and device; all nine fields count. */
public record UnionMaskKey(long q0, int tq, long base, int keep, int window, int tc, int ratio, DType dtype, Device device) {

    public UnionMaskKey {
        Require.present("dtype", dtype);
        Require.present("device", device);
    }

    /** The key of {@code mask} at {@code dtype} on {@code device}. */
    public static UnionMaskKey of(UnionMask mask, DType dtype, Device device) {
        return new UnionMaskKey(mask.q0(), mask.tq(), mask.base(), mask.keep(), mask.window(), mask.tc(), mask.ratio(),
                dtype, device);
    }

    /** The mask this key names. */
    public UnionMask mask() {
        return new UnionMask(q0, tq, base, keep, window, tc, ratio);
    }
}
