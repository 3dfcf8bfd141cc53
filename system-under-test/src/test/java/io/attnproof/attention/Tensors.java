package io.attnproof.attention;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.oracles.Precision;

/** Converts between the fixtures' fp64 arrays and the system's tensors (test code only). */
public final class Tensors {
    private Tensors() {
    }

    public static DType dtype(Precision p) {
        return switch (p) {
            case F32 -> DType.F32;
            case F16 -> DType.F16;
            case BF16 -> DType.BF16;
            case F64 -> throw new IllegalArgumentException("the system under test has no F64 dtype");
        };
    }

    /** {@code [B][H][T][D]} as a {@code [B,H,T,D]} tensor. */
    public static Tensor of4(double[][][][] x, DType dtype) {
        int b = x.length;
        int h = b == 0 ? 0 : x[0].length;
        int t = h == 0 ? 0 : x[0][0].length;
        int d = t == 0 ? 0 : x[0][0][0].length;
        float[] flat = new float[b * h * t * d];
        int i = 0;
        for (double[][][] xb : x) {
            for (double[][] xh : xb) {
                for (double[] xt : xh) {
                    for (double v : xt) {
                        flat[i++] = (float) v;
                    }
                }
            }
        }
        return Tensor.of(flat, dtype, Device.CPU, b, h, t, d);
    }

    /** {@code [B][T][D]} as a single-head {@code [B,1,T,D]} tensor (one shared K/V head). */
    public static Tensor kv(double[][][] x, DType dtype) {
        double[][][][] wrapped = new double[x.length][][][];
        for (int b = 0; b < x.length; b++) {
            wrapped[b] = new double[][][] {x[b]};
        }
        return of4(wrapped, dtype);
    }

    /** {@code [H]} sink logits as an F32 tensor. */
    public static Tensor sinks(double[] s) {
        float[] f = new float[s.length];
        for (int i = 0; i < s.length; i++) {
            f[i] = (float) s[i];
        }
        return Tensor.of(f, DType.F32, Device.CPU, s.length);
    }

    /** A rank-4 tensor as {@code [B][H][T][D]} doubles. */
    public static double[][][][] toArray4(Tensor t) {
        int[] s = t.shape();
        double[][][][] out = new double[s[0]][s[1]][s[2]][s[3]];
        int i = 0;
        for (int b = 0; b < s[0]; b++) {
            for (int h = 0; h < s[1]; h++) {
                for (int r = 0; r < s[2]; r++) {
                    for (int c = 0; c < s[3]; c++) {
                        out[b][h][r][c] = t.flat(i++);
                    }
                }
            }
        }
        return out;
    }

    /** The {@code [tq][n]} plane {@code (b, h)} of a rank-4 mask, as doubles. */
    public static double[][] plane(Tensor mask, int b, int h) {
        return toArray4(mask)[b][h];
    }
}
