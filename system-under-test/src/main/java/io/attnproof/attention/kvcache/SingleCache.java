package io.attnproof.attention.kvcache;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * One layer's K and V for a left-aligned batch of {@code batch} rows (engine: {@code SingleCache}): each row a
 * buffer of {@code capacity} positions × {@code headDim} (one shared KV head), stored at the cache's dtype. All rows
 * share one width, {@link #currentSeqLen}: every row's last token sits at that end column, and a shorter row
 * carries a zero-filled dead prefix in front (see {@link CacheOps#frontAlignBatch}).
 *
 * <p><b>V ≡ K.</b> While every append passed V as the very handle of K (V4's K = V), the cache keeps ONE storage
 * and {@link #v} returns the same tensor handle as {@link #k}, so the dense arm's V≡K dedup (docs/system.md §9) sees
 * the alias. The first append with a distinct V (a {@code copy()} included) splits the storage for good: V then
 * lives in its own buffer and {@code v()} is a handle of its own.
 *
 * <p>Every mutating method validates all of its input before writing anything: a refused call leaves the cache
 * exactly as it was. Not thread-safe.
 */
public final class SingleCache implements KvCache {
    private final int batch;
    private final int capacity;
    private final int headDim;
    private final DType dtype;
    private final Device device;
    private float[] k;        // [batch][capacity][headDim], row-major
    private float[] v;        // the same array as k while V aliases K
    private int len;
    private int written;      // positions [0, written) of every row hold appended or padded data
    private long version;
    private long viewVersion = -1;
    private Tensor kView;
    private Tensor vView;

    private SingleCache(int batch, int capacity, int headDim, DType dtype, Device device, float[] k, float[] v,
            int len, int written) {
        this.batch = batch;
        this.capacity = capacity;
        this.headDim = headDim;
        this.dtype = dtype;
        this.device = device;
        this.k = k;
        this.v = v;
        this.len = len;
        this.written = written;
    }

    /** An empty cache ({@code current_seq_len} 0) of {@code batch} rows × {@code capacity} positions × {@code headDim}. */
    public static SingleCache create(int batch, int capacity, int headDim, DType dtype, Device device) {
        Require.that(batch >= 1, "batch", batch, "be >= 1");
        Require.nonNegative("capacity", capacity);
        Require.that(headDim >= 1, "headDim", headDim, "be >= 1");
        Require.present("dtype", dtype);
        Require.present("device", device);
        int n = Require.arrayLength("batch * capacity * headDim", (long) batch * capacity * headDim, "be <= 2^31-9");
        float[] storage = new float[n];
        return new SingleCache(batch, capacity, headDim, dtype, device, storage, storage, 0, 0);
    }

    /** An empty CPU cache. */
    public static SingleCache create(int batch, int capacity, int headDim, DType dtype) {
        return create(batch, capacity, headDim, dtype, Device.CPU);
    }

    /** A cache of {@code capacity} positions holding {@code k} and {@code v} ([B,1,t,D]) appended once. */
    public static SingleCache of(Tensor k, Tensor v, int capacity) {
        Require.present("k", k);
        Require.that(k.rank() == 4, "k.rank", k.rank(), "be 4 [B, 1, t, D]");
        Require.that(k.dim(0) >= 1 && k.dim(3) >= 1, "k.shape", k.shape(), "have B >= 1 and D >= 1");
        SingleCache cache = create(k.dim(0), capacity, k.dim(3), k.dtype(), k.device());
        cache.append(k, v);
        return cache;
    }

    /** Package: a cache over the given storage ({@code v == k} for an aliased V); CacheOps builds through this. */
    static SingleCache over(int batch, int capacity, int headDim, DType dtype, Device device, float[] k, float[] v,
            int len) {
        return new SingleCache(batch, capacity, headDim, dtype, device, k, v, len, len);
    }

    /**
     * Appends {@code t} positions to every row at the end column: {@code k} and {@code v} are [B,1,t,D] at the
     * cache's dtype and device. Passing the same handle twice keeps V aliased to K (see the class comment).
     *
     * @throws IllegalArgumentException naming the parameter, value and rule; nothing is written then
     */
    public void append(Tensor k, Tensor v) {
        CacheOps.checkAppend(k, v, batch, headDim, dtype, device);
        int t = k.dim(2);
        Require.that((long) len + t <= capacity, "current_seq_len + t", (long) len + t,
                "be <= capacity = " + capacity + " (current_seq_len " + len + ", t " + t + ")");
        boolean aliased = k.id().equals(v.id());
        if (!aliased && this.v == this.k) {
            this.v = this.k.clone();
        }
        float[] kIn = k.toFloatArray();
        float[] vIn = aliased ? kIn : v.toFloatArray();
        for (int b = 0; b < batch; b++) {
            System.arraycopy(kIn, b * t * headDim, this.k, (b * capacity + len) * headDim, t * headDim);
            if (this.v != this.k) {
                System.arraycopy(vIn, b * t * headDim, this.v, (b * capacity + len) * headDim, t * headDim);
            }
        }
        len += t;
        written = Math.max(written, len);
        version++;
    }

    /**
     * The live span of K, [B,1,current_seq_len,D], read-only; the same handle until the cache next changes.
     */
    public Tensor k() {
        refreshViews();
        return kView;
    }

    /** The live span of V, [B,1,current_seq_len,D], read-only; the very handle of {@link #k} while V aliases K. */
    public Tensor v() {
        refreshViews();
        return vView;
    }

    /** Whether V shares K's storage (every append so far passed V as K's handle); then {@code v() == k()}. */
    public boolean vAliasesK() {
        return v == k;
    }

    /** {@code current_seq_len}: the batched buffer's width, the end column every row's last token sits at. */
    public int currentSeqLen() {
        return len;
    }

    /** The high-water mark: positions {@code [0, written)} hold appended or padded data; {@link #setLen} stays inside it. */
    public int written() {
        return written;
    }

    /**
     * {@code set_len}: truncates to {@code n}, or re-extends over positions already written (a speculative rollback
     * undone); never beyond {@link #written} nor {@link #capacity}.
     *
     * @throws IllegalArgumentException naming {@code n} and the bound it broke; the length is unchanged then
     */
    public void setLen(int n) {
        Require.nonNegative("n", n);
        Require.that(n <= capacity, "n", n, "be <= capacity = " + capacity);
        Require.that(n <= written, "n", n, "be <= written = " + written
                + " (set_len truncates, or re-extends only over positions already written)");
        if (n != len) {
            len = n;
            version++;
        }
    }

    public int capacity() {
        return capacity;
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

    /** A one-row copy of row {@code i}: same capacity, length, high-water mark, storage and V aliasing. */
    public SingleCache row(int i) {
        Require.that(i >= 0 && i < batch, "row", i, "lie in [0, " + batch + ")");
        int stride = capacity * headDim;
        float[] rk = Arrays.copyOfRange(k, i * stride, (i + 1) * stride);
        float[] rv = v == k ? rk : Arrays.copyOfRange(v, i * stride, (i + 1) * stride);
        return new SingleCache(1, capacity, headDim, dtype, device, rk, rv, len, written);
    }

    /** A deep copy: same geometry, length, high-water mark, storage bits and V aliasing. */
    public SingleCache copy() {
        float[] ck = k.clone();
        return new SingleCache(batch, capacity, headDim, dtype, device, ck, v == k ? ck : v.clone(), len, written);
    }

    /**
     * Whether {@code other} holds the same state bit for bit: {@link #sameContents} and the same V layout (aliased
     * to K or split).
     */
    public boolean identicalTo(SingleCache other) {
        return sameContents(other) && vAliasesK() == other.vAliasesK();
    }

    /**
     * Whether {@code other} holds the same data bit for bit, V layout aside: geometry, dtype, device, length,
     * high-water mark, and every stored K and V element over the whole capacity (raw float bits).
     */
    public boolean sameContents(SingleCache other) {
        return other != null && batch == other.batch && capacity == other.capacity && headDim == other.headDim
                && dtype == other.dtype && device.equals(other.device) && len == other.len
                && written == other.written && sameBits(k, other.k) && sameBits(v, other.v);
    }

    @Override
    public boolean supportsPerSequenceAdvance() {
        return true;
    }

    @Override
    public String describe() {
        return "SingleCache(batch " + batch + ", capacity " + capacity + ", D " + headDim + ", " + dtype + ")";
    }

    @Override
    public String toString() {
        return describe() + "[current_seq_len " + len + ", written " + written + (vAliasesK() ? ", V=K" : "") + "]";
    }

    /** Package: the raw K storage [batch][capacity][headDim] (CacheOps reads it, never keeps it). */
    float[] kData() {
        return k;
    }

    /** Package: the raw V storage; the same array as {@link #kData} while V aliases K. */
    float[] vData() {
        return v;
    }

    /** Package: replaces the storage (keep {@code v == k} for an aliased V); length and high-water mark become {@code n}. */
    void replace(float[] newK, float[] newV, int n) {
        this.k = newK;
        this.v = newV;
        this.len = n;
        this.written = n;
        version++;
    }

    private void refreshViews() {
        if (viewVersion == version) {
            return;
        }
        kView = span(k);
        vView = v == k ? kView : span(v);
        viewVersion = version;
    }

    private Tensor span(float[] storage) {
        float[] out = new float[batch * len * headDim];
        for (int b = 0; b < batch; b++) {
            System.arraycopy(storage, b * capacity * headDim, out, b * len * headDim, len * headDim);
        }
        return Tensor.readOnly(out, dtype, device, batch, 1, len, headDim);
    }

    private static boolean sameBits(float[] a, float[] b) {
        if (a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (Float.floatToRawIntBits(a[i]) != Float.floatToRawIntBits(b[i])) {
                return false;
            }
        }
        return true;
    }
}
