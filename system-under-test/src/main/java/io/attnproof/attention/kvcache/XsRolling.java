package io.attnproof.attention.kvcache;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * A rolling cache of a fixed {@code window} (engine: {@code XsRolling}): position {@code p} of the stream lives in
 * slot {@code p mod window}, so once the window is full each append overwrites the oldest positions; one length
 * ({@link #currentSeqLen}, the tokens seen) serves the whole batch. It therefore cannot carry a per-row length:
 * {@link #supportsPerSequenceAdvance} is false and every per-row operation is refused, naming
 * {@code cache_supports_per_sequence_advance}, XsRolling and why. V aliasing follows {@link SingleCache}.
 */
public final class XsRolling implements KvCache {
    /** Why XsRolling fails {@code cache_supports_per_sequence_advance}; part of every per-row refusal. */
    public static final String WHY_NO_PER_ROW_LENGTH = "XsRolling overwrites its oldest position once the window is"
            + " full and keeps one length for the whole batch, so it cannot carry a per-row length";

    private final int batch;
    private final int window;
    private final int headDim;
    private final DType dtype;
    private final Device device;
    private final float[] k;  // ring [batch][window][headDim]
    private float[] v;        // the same array as k while V aliases K
    private int seen;
    private long version;
    private long viewVersion = -1;
    private Tensor kView;
    private Tensor vView;

    private XsRolling(int batch, int window, int headDim, DType dtype, Device device) {
        this.batch = batch;
        this.window = window;
        this.headDim = headDim;
        this.dtype = dtype;
        this.device = device;
        this.k = new float[batch * window * headDim];
        this.v = k;
    }

    /** An empty rolling cache of {@code batch} rows keeping the last {@code window} positions × {@code headDim}. */
    public static XsRolling create(int batch, int window, int headDim, DType dtype, Device device) {
        Require.that(batch >= 1, "batch", batch, "be >= 1");
        Require.that(window >= 1, "window", window, "be >= 1");
        Require.that(headDim >= 1, "headDim", headDim, "be >= 1");
        Require.present("dtype", dtype);
        Require.present("device", device);
        Require.arrayLength("batch * window * headDim", (long) batch * window * headDim, "be <= 2^31-9");
        return new XsRolling(batch, window, headDim, dtype, device);
    }

    /**
     * Appends {@code t} positions ([B,1,t,D]) to every row, overwriting the oldest once the window is full.
     *
     * @throws IllegalArgumentException naming the parameter, value and rule; nothing is written then
     */
    public void append(Tensor k, Tensor v) {
        CacheOps.checkAppend(k, v, batch, headDim, dtype, device);
        int t = k.dim(2);
        Require.that((long) seen + t <= Integer.MAX_VALUE, "current_seq_len + t", (long) seen + t, "be <= 2^31-1");
        boolean aliased = k.id().equals(v.id());
        if (!aliased && this.v == this.k) {
            this.v = this.k.clone();
        }
        float[] kIn = k.toFloatArray();
        float[] vIn = aliased ? kIn : v.toFloatArray();
        for (int b = 0; b < batch; b++) {
            for (int i = Math.max(0, t - window); i < t; i++) {
                int slot = (int) (((long) seen + i) % window);
                int from = (b * t + i) * headDim;
                int to = (b * window + slot) * headDim;
                System.arraycopy(kIn, from, this.k, to, headDim);
                if (this.v != this.k) {
                    System.arraycopy(vIn, from, this.v, to, headDim);
                }
            }
        }
        seen += t;
        version++;
    }

    /** The retained K in stream order, [B,1,{@link #live},D], read-only. */
    public Tensor k() {
        refreshViews();
        return kView;
    }

    /** The retained V in stream order; the very handle of {@link #k} while V aliases K. */
    public Tensor v() {
        refreshViews();
        return vView;
    }

    public boolean vAliasesK() {
        return v == k;
    }

    /** The tokens seen, one length for the whole batch. */
    public int currentSeqLen() {
        return seen;
    }

    /** Positions retained: {@code min(currentSeqLen, window)}. */
    public int live() {
        return Math.min(seen, window);
    }

    public int window() {
        return window;
    }

    public int batch() {
        return batch;
    }

    public int headDim() {
        return headDim;
    }

    public DType dtype() {
        return dtype;
    }

    public Device device() {
        return device;
    }

    /**
     * Always refused: a rolling cache has no row of its own to hand out.
     *
     * @throws IllegalArgumentException naming {@code cache_supports_per_sequence_advance}, XsRolling and why
     */
    public XsRolling row(int i) {
        throw refusal("row(" + i + ")");
    }

    /**
     * Always refused: per-row lengths are exactly what a rolling cache cannot carry. Nothing is changed.
     *
     * @throws IllegalArgumentException naming {@code cache_supports_per_sequence_advance}, XsRolling and why
     */
    public void setRowLens(int[] lens) {
        throw refusal("setRowLens(" + (lens == null ? "null" : Arrays.toString(lens)) + ")");
    }

    @Override
    public boolean supportsPerSequenceAdvance() {
        return false;
    }

    @Override
    public String describe() {
        return "XsRolling(window " + window + ", batch " + batch + ", D " + headDim + ", " + dtype + ")";
    }

    @Override
    public String toString() {
        return describe() + "[seen " + seen + (vAliasesK() ? ", V=K" : "") + "]";
    }

    /** The refusal of a per-row operation {@code op}: "cache_supports_per_sequence_advance = false for XsRolling(…): must hold for op: why". */
    IllegalArgumentException refusal(String op) {
        return new IllegalArgumentException("cache_supports_per_sequence_advance = false for " + describe()
                + ": must hold for " + op + ": " + WHY_NO_PER_ROW_LENGTH);
    }

    private void refreshViews() {
        if (viewVersion == version) {
            return;
        }
        kView = ordered(k);
        vView = v == k ? kView : ordered(v);
        viewVersion = version;
    }

    private Tensor ordered(float[] ring) {
        int n = live();
        float[] out = new float[batch * n * headDim];
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < n; i++) {
                int slot = (int) (((long) seen - n + i) % window);
                System.arraycopy(ring, (b * window + slot) * headDim, out, (b * n + i) * headDim, headDim);
            }
        }
        return Tensor.readOnly(out, dtype, device, batch, 1, n, headDim);
    }
}
