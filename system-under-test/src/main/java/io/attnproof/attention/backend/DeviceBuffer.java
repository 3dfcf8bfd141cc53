package io.attnproof.attention.backend;

/**
 * A device buffer of one launch sequence, described on the host: its f32 or i32 contents going in, and whether the
 * runner copies it back after the last launch (into {@link #floats()} / {@link #ints()}). A runner allocates each
 * distinct buffer once per sequence, so the launches of a sequence share it on the device. Never empty on the
 * device: a zero-length buffer is allocated with one element (Metal refuses zero-length buffers).
 */
public final class DeviceBuffer {
    private final String name;
    private final float[] floats;
    private final int[] ints;
    private final boolean readBack;

    private DeviceBuffer(String name, float[] floats, int[] ints, boolean readBack) {
        this.name = name;
        this.floats = floats;
        this.ints = ints;
        this.readBack = readBack;
    }

    /** An f32 input holding {@code values} (not copied: the runner only reads it). */
    public static DeviceBuffer input(String name, float[] values) {
        return new DeviceBuffer(name, values, null, false);
    }

    /** An i32 input holding {@code values}. */
    public static DeviceBuffer input(String name, int[] values) {
        return new DeviceBuffer(name, null, values, false);
    }

    /** An f32 buffer of {@code length} zeros, copied back after the sequence. */
    public static DeviceBuffer output(String name, int length) {
        return new DeviceBuffer(name, new float[length], null, true);
    }

    /** An f32 buffer of {@code length} zeros that stays on the device (an intermediate). */
    public static DeviceBuffer scratch(String name, int length) {
        return new DeviceBuffer(name, new float[length], null, false);
    }

    /** An i32 status word (0 going in), copied back: kernels report refusals through it. */
    public static DeviceBuffer status() {
        return new DeviceBuffer("status", null, new int[1], true);
    }

    public String name() {
        return name;
    }

    public boolean isFloat() {
        return floats != null;
    }

    /** Elements (not bytes). */
    public int length() {
        return floats != null ? floats.length : ints.length;
    }

    /** Bytes on the device (at least one element). */
    public long deviceBytes() {
        return 4L * Math.max(1, length());
    }

    public boolean readBack() {
        return readBack;
    }

    /** The f32 contents (after a run, the device's for a read-back buffer). */
    public float[] floats() {
        return floats;
    }

    /** The i32 contents. */
    public int[] ints() {
        return ints;
    }

    @Override
    public String toString() {
        return name + "[" + length() + (isFloat() ? " f32" : " i32") + "]";
    }
}
