package io.attnproof.attention.dsv4;

import io.attnproof.attention.Require;
import java.util.Arrays;

/**
 * Per-call configuration of {@code dsv4_attention}: the layer's ratio, the sliding window {@code W}, how many raw
 * keys precede the passed K ({@code rawPrefix}), each row's own past length for a left-aligned ragged cohort
 * ({@code rowQ0}, dense arm only) and, for graph decode only, each batch row's device position.
 */
public record Dsv4Config(CompressRatio compressRatio, int slidingWindow, int rawPrefix, long[] rowQ0,
        long[] graphPositions) {

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
            Require.that(rowQ0 == null, "rowQ0", java.util.Arrays.toString(rowQ0),
                    "be absent in graph decode: its columns are device slots, not a left-aligned cohort");
            graphPositions = graphPositions.clone();
        }
        rowQ0 = rowQ0 == null ? null : rowQ0.clone();
    }

    /** A dense (non-graph) call. */
    public static Dsv4Config of(CompressRatio ratio, int slidingWindow, int rawPrefix) {
        return new Dsv4Config(ratio, slidingWindow, rawPrefix, null, null);
    }

    /** This config in graph-decode mode at {@code positions}. */
    public Dsv4Config withGraphPositions(long... positions) {
        return new Dsv4Config(compressRatio, slidingWindow, rawPrefix, rowQ0, positions);
    }

    /** This config with per-row past lengths (null: the scalar path). */
    public Dsv4Config withRowQ0(long... rowQ0) {
        return new Dsv4Config(compressRatio, slidingWindow, rawPrefix, rowQ0, graphPositions);
    }

    @Override
    public long[] rowQ0() {
        return rowQ0 == null ? null : rowQ0.clone();
    }

    @Override
    public long[] graphPositions() {
        return graphPositions == null ? null : graphPositions.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Dsv4Config c && compressRatio == c.compressRatio && slidingWindow == c.slidingWindow
                && rawPrefix == c.rawPrefix && Arrays.equals(rowQ0, c.rowQ0)
                && Arrays.equals(graphPositions, c.graphPositions);
    }

    @Override
    public int hashCode() {
        return (((compressRatio.hashCode() * 31 + slidingWindow) * 31 + rawPrefix) * 31 + Arrays.hashCode(rowQ0)) * 31
                + Arrays.hashCode(graphPositions);
    }

    @Override
    public String toString() {
        return "Dsv4Config[" + compressRatio + ", W=" + slidingWindow + ", rawPrefix=" + rawPrefix
                + (rowQ0 == null ? "" : ", rowQ0=" + Arrays.toString(rowQ0))
                + (graphPositions == null ? "" : ", graphPositions=" + Arrays.toString(graphPositions)) + "]";
    }
}
