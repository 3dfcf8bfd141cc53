package io.attnproof.attention.dsv4;

import io.attnproof.attention.Require;
import java.util.Arrays;

/**
 * Per-call configuration of {@code dsv4_attention}: the layer's ratio, the sliding window {@code W}, how many raw
 * keys precede the passed K ({@code rawPrefix}), and, for graph decode only, each batch row's device position.
 */
public record Dsv4Config(CompressRatio compressRatio, int slidingWindow, int rawPrefix, long[] graphPositions) {

    public Dsv4Config {
        Require.present("compressRatio", compressRatio);
        Require.that(slidingWindow >= 1, "slidingWindow", slidingWindow, "be >= 1");
        Require.nonNegative("rawPrefix", rawPrefix);
        if (graphPositions != null) {
            Require.that(compressRatio != CompressRatio.STANDARD, "compressRatio", compressRatio,
                    "be CSA or HCA with graphPositions: graph decode builds a compressed half, which ratio 0 lacks");
            for (long p : graphPositions) {
                Require.that(p >= 0, "graphPositions", graphPositions, "hold positions >= 0");
            }
            graphPositions = graphPositions.clone();
        }
    }

    /** A dense (non-graph) call. */
    public static Dsv4Config of(CompressRatio ratio, int slidingWindow, int rawPrefix) {
        return new Dsv4Config(ratio, slidingWindow, rawPrefix, null);
    }

    /** This config in graph-decode mode at {@code positions}. */
    public Dsv4Config withGraphPositions(long... positions) {
        return new Dsv4Config(compressRatio, slidingWindow, rawPrefix, positions);
    }

    @Override
    public long[] graphPositions() {
        return graphPositions == null ? null : graphPositions.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Dsv4Config c && compressRatio == c.compressRatio && slidingWindow == c.slidingWindow
                && rawPrefix == c.rawPrefix && Arrays.equals(graphPositions, c.graphPositions);
    }

    @Override
    public int hashCode() {
        return ((compressRatio.hashCode() * 31 + slidingWindow) * 31 + rawPrefix) * 31 + Arrays.hashCode(graphPositions);
    }

    @Override
    public String toString() {
        return "Dsv4Config[" + compressRatio + ", W=" + slidingWindow + ", rawPrefix=" + rawPrefix
                + (graphPositions == null ? "" : ", graphPositions=" + Arrays.toString(graphPositions)) + "]";
    }
}
