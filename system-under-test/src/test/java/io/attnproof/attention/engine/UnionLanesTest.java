package io.attnproof.attention.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.dsv4.UnionGeometry;
import io.attnproof.attention.mask.UnionMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The CPU fast path's engines agree bit for bit: the Vector API engine (heads in lanes and keys in lanes, on one
 * thread or split over several) and the scalar engine run the same IEEE operations per query row, so every
 * bit-identity claim (U3, U6, R1, R5, V1) holds whichever one runs. The results are also checked against an fp64
 * reference of the same admitted keys.
 */
class UnionLanesTest {

    /** Scratch is reused while long enough, else at least doubled: growing calls reallocate it O(log n) times. */
    @Test
    void growKeepsALargeEnoughArrayAndAtLeastDoublesAnotherOne() {
        float[] a = new float[8];
        assertSame(a, UnionLanes.grow(a, 8));
        assertSame(a, UnionLanes.grow(a, 3));
        assertEquals(16, UnionLanes.grow(a, 9).length);
        assertEquals(40, UnionLanes.grow(a, 40).length);
        assertEquals(5, UnionLanes.grow(new float[0], 5).length);
    }

    @Test
    void theVectorEngineRunsWhereTheModuleIsPresent() {
        assertTrue(ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent(),
                "surefire's argLine adds jdk.incubator.vector (test.argLine in the parent pom)");
        assertNotNull(UnionLanes.vector());
        assertTrue(UnionLanes.engine() instanceof VectorLanes, UnionLanes.engine().describe());
        assertSame(ScalarLanes.INSTANCE, UnionLanes.scalar());
    }

    @Test
    void vectorExpIsTheScalarExpLaneForLane() {
        SplittableRandom rng = new SplittableRandom(7);
        float[] x = new float[4096];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (-100 * rng.nextDouble());
        }
        float[] special = {0f, -0f, Float.NEGATIVE_INFINITY, Float.NaN, LaneMath.EXP_LO, Math.nextUp(LaneMath.EXP_LO),
            Math.nextDown(LaneMath.EXP_LO), -1e-30f, -Float.MIN_VALUE, -88f, -0.5f * (float) Math.log(2), -1f, -2f};
        System.arraycopy(special, 0, x, 0, special.length);
        float[] vec = new float[x.length];
        VectorExp.exp(x, vec);
        double worstUlps = 0;
        for (int i = 0; i < x.length; i++) {
            float s = LaneMath.exp(x[i]);
            assertEquals(Float.floatToIntBits(s), Float.floatToIntBits(vec[i]), "exp(" + x[i] + ")");
            if (x[i] >= LaneMath.EXP_LO) {
                double exact = Math.exp(x[i]);
                worstUlps = Math.max(worstUlps, Math.abs(s - exact) / Math.ulp((float) exact));
            }
        }
        assertEquals(1f, LaneMath.exp(0f));
        assertEquals(0f, LaneMath.exp(Float.NEGATIVE_INFINITY));
        assertTrue(Float.isNaN(LaneMath.exp(Float.NaN)));
        assertTrue(worstUlps <= 2, "exp within 2 ulp of the fp64 exp; worst " + worstUlps);
    }

    @ParameterizedTest(name = "B {0} H {1} tq {2} tk {3} tc {4} D {5} W {6} R {7} mask {8} sinks {9}")
    @CsvSource({
        // rule admission, decode and prefill, tiles > 1, D with a scalar tail
        "1, 64, 1, 300, 75, 72, 128, 4, rule, finite",
        "1, 3, 9, 200, 50, 20, 16, 4, rule, none",
        "1, 20, 24, 513, 4, 48, 128, 128, rule, finite",
        "1, 1, 1, 40, 0, 8, 8, 0, rule, none",
        // dense 0/-inf, biased, per-head (some rows fully masked), -inf sinks
        "2, 16, 5, 260, 65, 40, 128, 4, dense, finite",
        "2, 5, 7, 150, 37, 33, 32, 4, biased, finite",
        "2, 17, 3, 90, 22, 16, 16, 4, perHead, none",
        "1, 4, 6, 300, 75, 24, 128, 4, perHead, finite",
        // large enough to split over threads (heads chunked, groups in parallel)
        "1, 64, 1, 900, 225, 256, 128, 4, rule, finite",
        "1, 8, 140, 140, 35, 64, 128, 4, rule, finite"})
    void everyEngineAndLayoutAgreesBitForBit(int batch, int heads, int tq, int tk, int tc, int d, int window,
            int ratio, String mask, String sinks) {
        SplittableRandom rng = new SplittableRandom(31L * heads + tq + tk + d);
        Tensor q = random(rng, 2.0, batch, heads, tq, d);
        Tensor k = random(rng, 2.0, batch, 1, tk, d);
        Tensor v = random(rng, 1.0, batch, 1, tk, d);
        Tensor c = tc == 0 ? null : random(rng, 2.0, batch, 1, tc, d);
        UnionGeometry g = UnionGeometry.of(tq, tk, tc, window, 0);
        int from = (int) g.base();
        UnionRows keys = UnionRows.of(UnionRows.Span.of(k, from, g.keep()), c == null ? null : UnionRows.Span.of(c, 0, tc));
        UnionRows values = UnionRows.of(UnionRows.Span.of(v, from, g.keep()), c == null ? null : UnionRows.Span.of(c, 0, tc));
        UnionMask rule = new UnionMask(g.q0(), tq, g.base(), g.keep(), window, tc, ratio);
        int n = g.nKeys();
        Admission admitted = switch (mask) {
            case "rule" -> Admission.rule(rule);
            case "dense" -> Admission.dense(rule.materialize(DType.F32, Device.CPU), batch, heads, tq, n);
            case "biased" -> Admission.dense(biased(rng, rule, batch, tq, n), batch, heads, tq, n);
            case "perHead" -> Admission.dense(perHead(rng, rule, batch, heads, tq, n), batch, heads, tq, n);
            default -> throw new IllegalArgumentException(mask);
        };
        float[] sink = new float[heads];
        for (int h = 0; h < heads; h++) {
            sink[h] = sinks.equals("none") ? Float.NEGATIVE_INFINITY : (float) (rng.nextGaussian() + Math.log(n));
        }
        float[] scalar = run(UnionLanes.scalar(), q, keys, values, admitted, sink, null);
        VectorLanes vector = (VectorLanes) UnionLanes.vector();
        float[] heads0 = run(vector, q, keys, values, admitted, sink, false);
        float[] keys0 = run(vector, q, keys, values, admitted, sink, true);
        float[] auto = run(vector, q, keys, values, admitted, sink, null);
        assertEquals(0, bitsDiffering(scalar, heads0), "vector heads-in-lanes vs scalar");
        assertEquals(0, bitsDiffering(scalar, keys0), "vector keys-in-lanes vs scalar");
        assertEquals(0, bitsDiffering(scalar, auto), "vector (its own layout choice) vs scalar");

        // And right: against fp64 over the same admitted keys (the claim tests hold the oracle's tolerance rule).
        double worst = 0;
        Admission.Row row = new Admission.Row();
        float scale = (float) (1.0 / Math.sqrt(d));
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < heads; h++) {
                for (int r = (b + h) % 3; r < tq; r += 3) { // every third row: enough to catch a wrong kernel
                    admitted.fill(b, h, r, row);
                    double[] ref = reference(q, keys, values, row, b, h, r, scale, sink[h]);
                    int o = ((b * heads + h) * tq + r) * d;
                    for (int e = 0; e < d; e++) {
                        worst = Math.max(worst, Math.abs(ref[e] - scalar[o + e]));
                    }
                }
            }
        }
        assertTrue(worst < 2e-5, "max |f32 - fp64| = " + worst);
    }

    private static float[] run(UnionLanes engine, Tensor q, UnionRows keys, UnionRows values, Admission admitted,
            float[] sink, Boolean keysInLanes) {
        int b = q.dim(0);
        int h = q.dim(1);
        int tq = q.dim(2);
        int d = q.dim(3);
        float[] out = new float[b * h * tq * d];
        UnionCall call = new UnionCall(q.view(), b, h, tq, d, (float) (1.0 / Math.sqrt(d)), keys, values, admitted,
                sink, out);
        if (keysInLanes == null) {
            engine.run(call);
        } else {
            ((VectorLanes) engine).run(call, keysInLanes);
        }
        return out;
    }

    private static double[] reference(Tensor q, UnionRows keys, UnionRows values, Admission.Row row, int b, int h,
            int r, float scale, float sink) {
        int d = q.dim(3);
        double[] s = new double[row.count];
        double m = sink;
        for (int i = 0; i < row.count; i++) {
            double dot = 0;
            for (int e = 0; e < d; e++) {
                dot += (double) q.flat(((b * q.dim(1) + h) * q.dim(2) + r) * d + e) * at(keys, b, row.cols[i], e);
            }
            s[i] = dot * scale + (row.biased ? row.bias[i] : 0);
            m = Math.max(m, s[i]);
        }
        double[] out = new double[d];
        if (m == Double.NEGATIVE_INFINITY) {
            return out;
        }
        double denom = Math.exp(sink - m);
        for (int i = 0; i < row.count; i++) {
            double p = Math.exp(s[i] - m);
            denom += p;
            for (int e = 0; e < d; e++) {
                out[e] += p * at(values, b, row.cols[i], e);
            }
        }
        for (int e = 0; e < d; e++) {
            out[e] /= denom;
        }
        return out;
    }

    private static float at(UnionRows rows, int b, int col, int e) {
        return rows.data(col).get(java.lang.foreign.ValueLayout.JAVA_FLOAT, rows.byteOffset(b, col) + 4L * e);
    }

    private static Tensor random(SplittableRandom rng, double scale, int... shape) {
        int n = 1;
        for (int s : shape) {
            n *= s;
        }
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) (scale * rng.nextGaussian());
        }
        return Tensor.of(a, DType.F32, Device.CPU, shape);
    }

    /** The rule's mask with finite biases on some admitted columns and a few admitted columns removed. */
    private static Tensor biased(SplittableRandom rng, UnionMask rule, int batch, int tq, int n) {
        float[] m = new float[batch * tq * n];
        for (int b = 0; b < batch; b++) {
            for (int r = 0; r < tq; r++) {
                for (int col = 0; col < n; col++) {
                    float x = !rule.admits(r, col) || rng.nextDouble() < 0.1 ? Float.NEGATIVE_INFINITY
                            : rng.nextDouble() < 0.5 ? 0f : (float) rng.nextGaussian();
                    m[(b * tq + r) * n + col] = x;
                }
            }
        }
        return Tensor.of(m, DType.F32, Device.CPU, batch, 1, tq, n);
    }

    /** Per head: the rule's columns thinned at random; one head of each query row fully masked. */
    private static Tensor perHead(SplittableRandom rng, UnionMask rule, int batch, int heads, int tq, int n) {
        float[] m = new float[batch * heads * tq * n];
        Arrays.fill(m, Float.NEGATIVE_INFINITY);
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < heads; h++) {
                for (int r = 0; r < tq; r++) {
                    if ((h + r) % heads == heads - 1 && heads > 1) {
                        continue;
                    }
                    for (int col = 0; col < n; col++) {
                        if (rule.admits(r, col) && rng.nextDouble() < 0.7) {
                            m[((b * heads + h) * tq + r) * n + col] = rng.nextDouble() < 0.5 ? 0f : 0.5f;
                        }
                    }
                }
            }
        }
        return Tensor.of(m, DType.F32, Device.CPU, batch, heads, tq, n);
    }

    private static long bitsDiffering(float[] a, float[] b) {
        long n = 0;
        for (int i = 0; i < a.length; i++) {
            n += Float.floatToIntBits(a[i]) == Float.floatToIntBits(b[i]) ? 0 : 1;
        }
        return n;
    }
}
