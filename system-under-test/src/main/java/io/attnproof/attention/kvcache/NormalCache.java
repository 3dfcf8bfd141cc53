package io.attnproof.attention.kvcache;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import java.util.ArrayList;
import java.util.List;

/**
 * The dense cache of a whole model (engine: {@code NormalCache}): one {@link SingleCache} per layer, all of one
 * batch, capacity, head dim, dtype and device ({@link #V4_LAYERS} for V4: 43 layers plus the MTP block).
 * {@link #setLen} applies to every layer or, refused, to none.
 */
public final class NormalCache implements KvCache {
    /** V4's layer count: 43 decoder layers plus the MTP block. */
    public static final int V4_LAYERS = 44;

    private final List<SingleCache> layers;

    private NormalCache(List<SingleCache> layers) {
        this.layers = List.copyOf(layers);
    }

    /** {@code numLayers} empty layers of {@code batch} rows × {@code capacity} positions × {@code headDim}. */
    public static NormalCache create(int numLayers, int batch, int capacity, int headDim, DType dtype, Device device) {
        Require.that(numLayers >= 1, "numLayers", numLayers, "be >= 1");
        List<SingleCache> layers = new ArrayList<>(numLayers);
        for (int i = 0; i < numLayers; i++) {
            layers.add(SingleCache.create(batch, capacity, headDim, dtype, device));
        }
        return new NormalCache(layers);
    }

    /**
     * A cache over {@code layers} (taken, not copied): at least one, pairwise distinct objects, all of layer 0's
     * batch, capacity, head dim, dtype and device.
     */
    public static NormalCache of(List<SingleCache> layers) {
        Require.present("layers", layers);
        Require.that(!layers.isEmpty(), "layers", "[]", "hold at least one layer");
        SingleCache first = Require.present("layers[0]", layers.get(0));
        for (int i = 1; i < layers.size(); i++) {
            SingleCache l = Require.present("layers[" + i + "]", layers.get(i));
            for (int j = 0; j < i; j++) {
                Require.that(l != layers.get(j), "layers[" + i + "]", l.describe(),
                        "be a distinct SingleCache (it is the same object as layers[" + j + "])");
            }
            CacheOps.requireSameGeometry("layers", i, l, first, true);
        }
        return new NormalCache(layers);
    }

    /** Layer {@code i}'s cache (the live object: appends through it land in this cache). */
    public SingleCache layer(int i) {
        Require.that(i >= 0 && i < layers.size(), "layer", i, "lie in [0, " + layers.size() + ")");
        return layers.get(i);
    }

    /** Every layer, in order (unmodifiable list of the live objects). */
    public List<SingleCache> layers() {
        return layers;
    }

    public int numLayers() {
        return layers.size();
    }

    public int batch() {
        return layers.get(0).batch();
    }

    public int capacity() {
        return layers.get(0).capacity();
    }

    public int headDim() {
        return layers.get(0).headDim();
    }

    public DType dtype() {
        return layers.get(0).dtype();
    }

    public Device device() {
        return layers.get(0).device();
    }

    /** Layer 0's {@code current_seq_len} (the engine's {@code current_normal_cache_len}). */
    public int currentSeqLen() {
        return layers.get(0).currentSeqLen();
    }

    /**
     * {@code set_len(n)} on every layer; every layer is checked first, so a refusal changes none.
     *
     * @throws IllegalArgumentException naming the first layer that cannot take {@code n}
     */
    public void setLen(int n) {
        Require.nonNegative("n", n);
        for (int i = 0; i < layers.size(); i++) {
            SingleCache l = layers.get(i);
            Require.that(n <= l.capacity(), "n", n, "be <= capacity = " + l.capacity() + " (layer " + i + ")");
            Require.that(n <= l.written(), "n", n, "be <= written = " + l.written() + " of layer " + i
                    + " (set_len truncates, or re-extends only over positions already written)");
        }
        for (SingleCache l : layers) {
            l.setLen(n);
        }
    }

    /** A one-row copy of row {@code i} of every layer. */
    public NormalCache row(int i) {
        Require.that(i >= 0 && i < batch(), "row", i, "lie in [0, " + batch() + ")");
        List<SingleCache> rows = new ArrayList<>(layers.size());
        for (SingleCache l : layers) {
            rows.add(l.row(i));
        }
        return new NormalCache(rows);
    }

    /** A deep copy of every layer. */
    public NormalCache copy() {
        List<SingleCache> copies = new ArrayList<>(layers.size());
        for (SingleCache l : layers) {
            copies.add(l.copy());
        }
        return new NormalCache(copies);
    }

    /** Whether every layer of {@code other} is {@link SingleCache#identicalTo} this one's. */
    public boolean identicalTo(NormalCache other) {
        return compare(other, true);
    }

    /** Whether every layer of {@code other} has {@link SingleCache#sameContents} as this one's (V layouts aside). */
    public boolean sameContents(NormalCache other) {
        return compare(other, false);
    }

    private boolean compare(NormalCache other, boolean layoutToo) {
        if (other == null || other.layers.size() != layers.size()) {
            return false;
        }
        for (int i = 0; i < layers.size(); i++) {
            SingleCache mine = layers.get(i);
            SingleCache theirs = other.layers.get(i);
            if (layoutToo ? !mine.identicalTo(theirs) : !mine.sameContents(theirs)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean supportsPerSequenceAdvance() {
        return true;
    }

    @Override
    public String describe() {
        return "NormalCache(" + layers.size() + " layers of " + layers.get(0).describe() + ")";
    }

    @Override
    public String toString() {
        return describe() + "[current_seq_len " + currentSeqLen() + "]";
    }
}
