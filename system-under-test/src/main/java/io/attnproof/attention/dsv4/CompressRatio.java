package io.attnproof.attention.dsv4;

import io.attnproof.attention.Require;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A layer's key compression: none (STANDARD), overlapping blocks of 4 (CSA) or disjoint blocks of 128 (HCA). */
public enum CompressRatio {
    STANDARD(0),
    CSA(4),
    HCA(128);

    /** V4 has 43 layers plus the MTP block. */
    public static final int V4_LAYERS = 44;

    private final int value;

    CompressRatio(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    /** The ratio of V4 layer {@code layer} (43 is the MTP block): 0 at 0, 1 and 43; 4 at even 2..42; 128 at odd 3..41. */
    public static CompressRatio forV4Layer(int layer) {
        Require.that(layer >= 0 && layer < V4_LAYERS, "layer", layer, "lie in [0, " + V4_LAYERS + ")");
        if (layer < 2 || layer == V4_LAYERS - 1) {
            return STANDARD;
        }
        return layer % 2 == 0 ? CSA : HCA;
    }

    /** All 44 V4 ratios in layer order. */
    public static List<CompressRatio> v4Schedule() {
        List<CompressRatio> out = new ArrayList<>(V4_LAYERS);
        for (int layer = 0; layer < V4_LAYERS; layer++) {
            out.add(forV4Layer(layer));
        }
        return Collections.unmodifiableList(out);
    }
}
