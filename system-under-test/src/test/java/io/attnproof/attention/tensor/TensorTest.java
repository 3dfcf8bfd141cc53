package io.attnproof.attention.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Identity rules (docs/system.md §1), rounding on write, and shape operations. */
class TensorTest {

    @Test
    void identityRules() {
        Tensor a = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, DType.F32, Device.CPU, 1, 2, 3);
        Tensor alias = a;
        assertEquals(a.id(), alias.id());
        assertNotEquals(a.id(), a.copy().id(), "copy() makes a new id");
        assertArrayEquals(a.toFloatArray(), a.copy().toFloatArray(), "with equal values");
        assertNotEquals(a.id(), a.contiguous().id());
        assertNotEquals(a.id(), a.narrow(2, 0, 2).id());
        assertNotEquals(a.id(), Tensor.cat(2, a, a).id());
        assertNotEquals(a.id(), a.reshape(2, 3).id(), "a shape-changing reshape is a new tensor");
        assertSame(a, a.reshape(1, 2, 3), "a trivial reshape keeps the handle");
    }

    @Test
    void sixteenBitTypesRoundOnEveryWrite() {
        float x = 1.0f + 0x1p-12f; // below half an F16 ulp at 1.0 (2^-11): rounds to 1.0
        Tensor h = Tensor.of(new float[] {x, 1.0f + 0x1p-10f}, DType.F16, Device.CPU, 2);
        assertEquals(1.0f, h.flat(0));
        assertEquals(1.0f + 0x1p-10f, h.flat(1), "representable in F16");
        h.set(1.0f + 3 * 0x1p-12f, 0); // 1 + 0.75 ulp: rounds up to 1 + 2^-10
        assertEquals(1.0f + 0x1p-10f, h.flat(0));
        Tensor b = Tensor.zeros(DType.BF16, Device.CPU, 1);
        b.set(1.0f + 0x1p-9f, 0); // exactly half a BF16 ulp (2^-8 at 1.0): ties to even, 1.0
        assertEquals(1.0f, b.flat(0));
        b.set(1.0f + 3 * 0x1p-9f, 0); // 1.5 ulp: tie to even rounds up to 1 + 2^-7
        assertEquals(1.0f + 0x1p-7f, b.flat(0));
        assertEquals(Float.NEGATIVE_INFINITY, DType.BF16.round(Float.NEGATIVE_INFINITY));
        assertEquals(Float.NEGATIVE_INFINITY, DType.F16.round(Float.NEGATIVE_INFINITY));
    }

    @Test
    void narrowAndCatAreInverse() {
        Tensor a = Tensor.of(new float[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, DType.F32, Device.CPU, 2, 3, 2);
        Tensor left = a.narrow(1, 0, 1);
        Tensor right = a.narrow(1, 1, 2);
        assertArrayEquals(new float[] {0, 1, 6, 7}, left.toFloatArray());
        assertArrayEquals(a.toFloatArray(), Tensor.cat(1, left, right).toFloatArray());
        assertArrayEquals(new int[] {2, 3, 2}, Tensor.cat(-2, left, right).shape());
    }

    @Test
    void badInputIsRefused() {
        Tensor a = Tensor.zeros(DType.F32, Device.CPU, 2, 3);
        assertThrows(IllegalArgumentException.class, () -> a.narrow(1, 2, 2));
        assertThrows(IllegalArgumentException.class, () -> a.get(0, 3));
        assertThrows(IllegalArgumentException.class, () -> a.reshape(4, 2));
        assertThrows(IllegalArgumentException.class, () -> Tensor.cat(0, a, Tensor.zeros(DType.F16, Device.CPU, 2, 3)));
        assertThrows(IllegalArgumentException.class, () -> Tensor.of(new float[5], DType.F32, Device.CPU, 2, 3));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Device(Device.Kind.CPU, 1));
        assertEquals("ordinal = 1: must be 0 for the CPU", e.getMessage());
        Tensor ro = Tensor.readOnly(new float[] {1}, DType.F32, Device.CPU, 1);
        assertThrows(UnsupportedOperationException.class, () -> ro.set(2f, 0));
        assertEquals("cuda:1", Device.cuda(1).toString());
    }
}
