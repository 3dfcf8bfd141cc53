package io.attnproof.conformance.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attnproof.attention.tensor.DType;
import io.attnproof.conformance.cases.SinksCase;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The shrinker on a failure that needs a row without a key (a dense case with tq > tk): with a stand-in lane that
 * faults exactly on such cases it reaches tq 2 over tk 1 (one keyless row, one row with its key), one query head,
 * deterministically; the first-rows candidate never asks for a case with no key left. Control: a lane that faults on
 * every case shrinks the same start to one row and one key, so the keyless bound comes from the failure, not from the
 * candidates.
 */
class ShrinkerKeylessTest {
    /** A lane that faults out of bounds exactly where {@code faults} holds and passes elsewhere. */
    static StandInLane faultingWhere(Predicate<SinksCase> faults) {
        return new StandInLane(c -> new KernelLibrary.Call(null, faults.test(c) ? "out-of-bounds access (stand-in)"
                : "stand-in: passes"));
    }

    static Shrinker.Shape start() {
        SplittableRandom r = new SplittableRandom(29_300);
        List<float[][][]> q = List.<float[][][]>of(fill(r, 2, 10, 64));
        List<float[][][]> k = List.<float[][][]>of(fill(r, 1, 4, 64));
        List<float[][][]> v = List.<float[][][]>of(fill(r, 1, 4, 64));
        return new Shrinker.Shape(false, DType.F32, 0, new float[] {Float.NEGATIVE_INFINITY, 0.5f}, q, k, v, false);
    }

    static float[][][] fill(SplittableRandom r, int h, int n, int d) {
        float[][][] x = new float[h][n][d];
        for (float[][] a : x) {
            for (float[] b : a) {
                for (int i = 0; i < d; i++) {
                    b[i] = (float) r.nextGaussian();
                }
            }
        }
        return x;
    }

    static String shape(Shrinker.Shape s) {
        return "Hq " + s.qHeads() + ", tq " + s.maxRows() + ", tk " + s.maxKeys() + ", D " + s.headDim();
    }

    @Test
    void aFailureThatNeedsAKeylessRowShrinksToTwoRowsOverOneKey() {
        Adapter a = Adapter.read(KernelLaneTest.ADAPTER);
        StandInLane keyless = faultingWhere(c -> c.tq() > c.k().dim(2));
        Object[] one = Shrinker.shrink(a, keyless, start(), "out-of-bounds");
        assertEquals("Hq 1, tq 2, tk 1, D 64", shape((Shrinker.Shape) one[0]));
        // No candidate had every key cut away (a case the reader would refuse).
        assertEquals(0, keyless.seen().stream().filter(c -> c.k().dim(2) == 0).count(), "cases without a key");
        Object[] two = Shrinker.shrink(a, faultingWhere(c -> c.tq() > c.k().dim(2)), start(), "out-of-bounds");
        assertEquals(shape((Shrinker.Shape) one[0]), shape((Shrinker.Shape) two[0]));
        assertEquals(one[2], two[2], "kernel calls of two shrinks");
        Object[] control = Shrinker.shrink(a, faultingWhere(c -> true), start(), "out-of-bounds");
        assertEquals("Hq 1, tq 1, tk 1, D 64", shape((Shrinker.Shape) control[0]));
    }
}
