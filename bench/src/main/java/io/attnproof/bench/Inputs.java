package io.attnproof.bench;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.SplittableRandom;

/** Seeded F32 inputs: N(0, 1) entries (q, K, blocks) and sinks N(0, 1) + ln(keys), as the claim tests draw them. */
public final class Inputs {
    private Inputs() {
    }

    /** N(0, 1) floats. */
    public static float[] gaussian(long seed, int n) {
        SplittableRandom rng = new SplittableRandom(seed);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) rng.nextGaussian();
        }
        return a;
    }

    /** An F32 CPU tensor of N(0, 1) entries. */
    public static Tensor tensor(long seed, int... shape) {
        int n = 1;
        for (int s : shape) {
            n *= s;
        }
        return Tensor.wrap(gaussian(seed, n), DType.F32, Device.CPU, shape);
    }

    /** Sinks competing with about {@code keys} keys each. */
    public static float[] sinks(long seed, int heads, int keys) {
        float[] s = gaussian(seed, heads);
        for (int h = 0; h < heads; h++) {
            s[h] += (float) Math.log(keys);
        }
        return s;
    }

    /** {@link #sinks} as a tensor. */
    public static Tensor sinkTensor(long seed, int heads, int keys) {
        return Tensor.wrap(sinks(seed, heads, keys), DType.F32, Device.CPU, heads);
    }
}
