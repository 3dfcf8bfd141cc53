package io.attnproof.attention.tensor;

import io.attnproof.attention.Require;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A dense row-major tensor with an identity. Aliasing the handle keeps the id; {@link #copy},
 * {@link #narrow}, {@link #contiguous}, {@link #cat} and a shape-changing {@link #reshape} make new ids.
 * A read-only tensor refuses every write, so a shared (memoised) tensor can never be changed.
 */
public final class Tensor {
    private final TensorId id;
    private final int[] shape;
    private final DType dtype;
    private final Device device;
    private final float[] data;
    private final boolean readOnly;

    private Tensor(int[] shape, DType dtype, Device device, float[] data, boolean readOnly) {
        this.id = TensorId.fresh();
        this.shape = shape;
        this.dtype = dtype;
        this.device = device;
        this.data = data;
        this.readOnly = readOnly;
    }

    /** A writable tensor of zeros. */
    public static Tensor zeros(DType dtype, Device device, int... shape) {
        int[] s = checkedShape(shape);
        return new Tensor(s, Require.present("dtype", dtype), Require.present("device", device),
                new float[numel(s)], false);
    }

    /** A writable tensor holding {@code values} rounded to {@code dtype} (the array is copied). */
    public static Tensor of(float[] values, DType dtype, Device device, int... shape) {
        Tensor t = zeros(dtype, device, shape);
        Require.present("values", values);
        Require.that(values.length == t.data.length, "values.length", values.length,
                "equal the element count " + t.data.length + " of shape " + Arrays.toString(t.shape));
        for (int i = 0; i < values.length; i++) {
            t.data[i] = dtype.round(values[i]);
        }
        return t;
    }

    /**
     * A writable tensor that takes {@code values} over without copying them (each is rounded to {@code dtype} in
     * place): the caller hands the array over and must not touch it afterwards. For kernels that build their output
     * in a fresh array, so that the result is not copied once more.
     */
    public static Tensor wrap(float[] values, DType dtype, Device device, int... shape) {
        int[] s = checkedShape(shape);
        Require.present("dtype", dtype);
        Require.present("device", device);
        Require.present("values", values);
        Require.that(values.length == numel(s), "values.length", values.length,
                "equal the element count " + numel(s) + " of shape " + Arrays.toString(s));
        if (dtype != DType.F32) {
            for (int i = 0; i < values.length; i++) {
                values[i] = dtype.round(values[i]);
            }
        }
        return new Tensor(s, dtype, device, values, false);
    }

    /** A read-only tensor holding {@code values} rounded to {@code dtype} (the array is copied). */
    public static Tensor readOnly(float[] values, DType dtype, Device device, int... shape) {
        Tensor t = of(values, dtype, device, shape);
        return new Tensor(t.shape, dtype, device, t.data, true);
    }

    public TensorId id() {
        return id;
    }

    public DType dtype() {
        return dtype;
    }

    public Device device() {
        return device;
    }

    public boolean isReadOnly() {
        return readOnly;
    }

    public int rank() {
        return shape.length;
    }

    /** Size of axis {@code axis}; negative axes count from the end. */
    public int dim(int axis) {
        return shape[axisIndex(axis)];
    }

    public int[] shape() {
        return shape.clone();
    }

    public int numel() {
        return data.length;
    }

    /** Element at a full multi-index. */
    public float get(int... index) {
        return data[offset(index)];
    }

    /** Element at a row-major flat index. */
    public float flat(int i) {
        return data[i];
    }

    /** Writes {@code value} rounded to dtype at a full multi-index. */
    public void set(float value, int... index) {
        checkWritable();
        data[offset(index)] = dtype.round(value);
    }

    /** Overwrites element {@code i} (row-major) with {@code value} rounded to dtype. */
    public void setFlat(int i, float value) {
        checkWritable();
        Require.that(i >= 0 && i < data.length, "i", i, "lie in [0, " + data.length + ")");
        data[i] = dtype.round(value);
    }

    /**
     * A read-only view of all elements, row-major, without copying them: element {@code i} is the
     * {@code ValueLayout.JAVA_FLOAT} at byte offset {@code 4 * i}. Kernels read their inputs through it instead of
     * {@link #toFloatArray()}; any write through the view throws, so it cannot change this tensor. A later write to
     * this (writable) tensor is visible through the view.
     */
    public MemorySegment view() {
        return MemorySegment.ofArray(data).asReadOnly();
    }

    /** Copies elements {@code [from, from + length)} (row-major) into {@code dst} at {@code dstPos}. */
    public void copyInto(int from, float[] dst, int dstPos, int length) {
        Require.present("dst", dst);
        Require.that(from >= 0 && length >= 0 && from + length <= data.length, "copyInto(from, length)",
                "[" + from + ", " + length + "]", "stay inside the " + data.length + " elements");
        System.arraycopy(data, from, dst, dstPos, length);
    }

    /** A copy of all elements, row-major. */
    public float[] toFloatArray() {
        return data.clone();
    }

    /** Same values, new identity, writable. */
    public Tensor copy() {
        return new Tensor(shape.clone(), dtype, device, data.clone(), false);
    }

    /** Same values and identity rules as {@link #copy}: the layout is always contiguous here. */
    public Tensor contiguous() {
        return copy();
    }

    /** A read-only copy with a new identity. */
    public Tensor frozenCopy() {
        return new Tensor(shape.clone(), dtype, device, data.clone(), true);
    }

    /** Elements {@code [start, start+length)} of {@code axis}, as a new tensor. */
    public Tensor narrow(int axis, int start, int length) {
        int a = axisIndex(axis);
        Require.that(start >= 0 && length >= 0 && start + length <= shape[a], "narrow(" + a + ", start, length)",
                "[" + start + ", " + length + "]", "stay inside axis size " + shape[a]);
        int[] out = shape.clone();
        out[a] = length;
        int outer = 1;
        for (int i = 0; i < a; i++) {
            outer *= shape[i];
        }
        int inner = 1;
        for (int i = a + 1; i < shape.length; i++) {
            inner *= shape[i];
        }
        float[] dst = new float[outer * length * inner];
        for (int o = 0; o < outer; o++) {
            System.arraycopy(data, (o * shape[a] + start) * inner, dst, o * length * inner, length * inner);
        }
        return new Tensor(out, dtype, device, dst, false);
    }

    /** Concatenation along {@code axis}; all other axes, dtype and device must match. */
    public static Tensor cat(int axis, Tensor... parts) {
        Require.that(parts != null && parts.length > 0, "parts", parts == null ? "null" : "[]", "hold at least one tensor");
        Tensor first = parts[0];
        int a = first.axisIndex(axis);
        int total = 0;
        for (int p = 0; p < parts.length; p++) {
            Tensor t = parts[p];
            Require.that(t.rank() == first.rank(), "parts[" + p + "].rank", t.rank(), "equal " + first.rank());
            Require.that(t.dtype == first.dtype, "parts[" + p + "].dtype", t.dtype, "equal " + first.dtype);
            Require.that(t.device.equals(first.device), "parts[" + p + "].device", t.device, "equal " + first.device);
            for (int i = 0; i < t.rank(); i++) {
                Require.that(i == a || t.shape[i] == first.shape[i], "parts[" + p + "].shape", t.shape,
                        "match " + Arrays.toString(first.shape) + " off axis " + a);
            }
            total += t.shape[a];
        }
        int[] out = first.shape.clone();
        out[a] = total;
        int outer = 1;
        for (int i = 0; i < a; i++) {
            outer *= out[i];
        }
        int inner = 1;
        for (int i = a + 1; i < out.length; i++) {
            inner *= out[i];
        }
        float[] dst = new float[outer * total * inner];
        int at = 0;
        for (int o = 0; o < outer; o++) {
            for (Tensor t : parts) {
                int run = t.shape[a] * inner;
                System.arraycopy(t.data, o * run, dst, at, run);
                at += run;
            }
        }
        return new Tensor(out, first.dtype, first.device, dst, false);
    }

    /** The same elements under another shape; the same handle when the shape is unchanged. */
    public Tensor reshape(int... newShape) {
        int[] s = checkedShape(newShape);
        Require.that(numel(s) == data.length, "shape", s, "hold " + data.length + " elements like " + Arrays.toString(shape));
        if (Arrays.equals(s, shape)) {
            return this;
        }
        return new Tensor(s, dtype, device, data.clone(), readOnly);
    }

    @Override
    public String toString() {
        return "Tensor#" + id.value() + Arrays.toString(shape) + " " + dtype + " @" + device;
    }

    private void checkWritable() {
        if (readOnly) {
            throw new UnsupportedOperationException(this + " is read-only (a memoised mask is shared and immutable)");
        }
    }

    private int axisIndex(int axis) {
        int a = axis < 0 ? axis + shape.length : axis;
        Require.that(a >= 0 && a < shape.length, "axis", axis, "lie in [-" + shape.length + ", " + shape.length + ")");
        return a;
    }

    private int offset(int[] index) {
        // The messages are built only on failure: this runs on every element access.
        if (index.length != shape.length) {
            Require.that(false, "index", index, "have rank " + shape.length);
        }
        int off = 0;
        for (int i = 0; i < shape.length; i++) {
            if (index[i] < 0 || index[i] >= shape[i]) {
                Require.that(false, "index", index, "lie inside shape " + Arrays.toString(shape));
            }
            off = off * shape[i] + index[i];
        }
        return off;
    }

    private static int[] checkedShape(int[] shape) {
        Require.present("shape", shape);
        for (int d : shape) {
            Require.that(d >= 0, "shape", shape, "have no negative sizes");
        }
        Require.that(numelLong(shape) <= Require.MAX_ARRAY, "shape", shape, "hold at most 2^31-9 elements");
        return shape.clone();
    }

    /** The element count, or {@link Long#MAX_VALUE} where it overflows a long (a zero size makes it 0). */
    private static long numelLong(int[] shape) {
        for (int d : shape) {
            if (d == 0) {
                return 0; // empty whatever the other sizes, even where their product alone would overflow
            }
        }
        long n = 1;
        try {
            for (int d : shape) {
                n = Math.multiplyExact(n, d);
            }
        } catch (ArithmeticException overflow) {
            return Long.MAX_VALUE;
        }
        return n;
    }

    private static int numel(int[] shape) {
        return (int) numelLong(shape);
    }
}
