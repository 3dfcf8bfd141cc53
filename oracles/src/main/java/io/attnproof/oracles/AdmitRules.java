package io.attnproof.oracles;

/** The two visibility rules of union attention, written straight from docs/system.md §4.3 and §4.4. */
public final class AdmitRules {
    private AdmitRules() {}

    /** Raw window: key j visible to query p iff p - window < j <= p. window >= 1. */
    public static boolean rawAdmits(long p, long j, int window) {
        Require.atLeast("p", p, 0);
        Require.atLeast("j", j, 0);
        Require.atLeast("window", window, 1);
        return p - window < j && j <= p;
    }

    /** Compressed: block b visible to p iff ratio > 0 and b < floor((p+1)/ratio). ratio 0 -> false. */
    public static boolean compressedAdmits(long p, long b, int ratio) {
        Require.atLeast("b", b, 0);
        return b < compressedThreshold(p, ratio);
    }

    /** Number of compressed blocks visible to p: floor((p+1)/ratio), 0 for ratio 0. */
    public static long compressedThreshold(long p, int ratio) {
        Require.atLeast("p", p, 0);
        Require.atLeast("ratio", ratio, 0);
        return ratio == 0 ? 0 : (p + 1) / ratio;
    }
}
