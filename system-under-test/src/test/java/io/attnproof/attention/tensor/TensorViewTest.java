package io.attnproof.attention.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The accessors the CPU fast path reads through: a read-only view, a bulk copy, and an output taken over as is. */
class TensorViewTest {

    @Test
    void theViewReadsInPlaceAndRefusesWrites() {
        Tensor t = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, DType.F32, Device.CPU, 2, 3);
        MemorySegment view = t.view();
        assertTrue(view.isReadOnly());
        assertEquals(6 * Float.BYTES, view.byteSize());
        assertEquals(5f, view.getAtIndex(ValueLayout.JAVA_FLOAT, 4));
        assertThrows(IllegalArgumentException.class, () -> view.setAtIndex(ValueLayout.JAVA_FLOAT, 0, 9f));
        t.set(7f, 1, 1); // no copy: a later write to the tensor shows through the view
        assertEquals(7f, view.getAtIndex(ValueLayout.JAVA_FLOAT, 4));
        // (the JDK refuses a write to a read-only segment with an IllegalArgumentException)
        Tensor frozen = Tensor.readOnly(new float[] {1}, DType.F32, Device.CPU, 1);
        assertThrows(IllegalArgumentException.class, () -> frozen.view().setAtIndex(ValueLayout.JAVA_FLOAT, 0, 2f));
    }

    @Test
    void copyIntoCopiesARangeAndChecksIt() {
        Tensor t = Tensor.of(new float[] {1, 2, 3, 4}, DType.F32, Device.CPU, 4);
        float[] dst = new float[5];
        t.copyInto(1, dst, 2, 3);
        assertArrayEquals(new float[] {0, 0, 2, 3, 4}, dst);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.copyInto(2, dst, 0, 3));
        assertEquals("copyInto(from, length) = [2, 3]: must stay inside the 4 elements", e.getMessage());
    }

    @Test
    void wrapTakesTheArrayOverAndRoundsInPlace() {
        float[] values = {1.0f + 0x1p-12f, 2f};
        Tensor h = Tensor.wrap(values, DType.F16, Device.CPU, 2);
        assertEquals(1.0f, h.flat(0), "rounded to F16");
        assertEquals(1.0f, values[0], "in place: the array is the tensor's storage now");
        assertThrows(IllegalArgumentException.class, () -> Tensor.wrap(new float[3], DType.F32, Device.CPU, 2));
    }
}
