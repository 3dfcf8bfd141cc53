package io.attnproof.attention.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Tensor's refusals with their exact texts and the boundary values just inside them, on 2x2 and 2x3 tensors. */
class TensorContractTest {

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    static Tensor t22() {
        return Tensor.of(new float[] {1f, 2f, 3f, 4f}, DType.F32, Device.CPU, 2, 2);
    }

    @Test
    void axesCountFromBothEndsAndStopAtTheRank() {
        Tensor t = Tensor.zeros(DType.F32, Device.CPU, 2, 3, 4, 5);
        assertEquals(2, t.dim(-4));
        assertEquals(5, t.dim(3));
        assertEquals(5, t.dim(-1));
        refused("axis = 4: must lie in [-4, 4)", () -> t.dim(4));
        refused("axis = -5: must lie in [-4, 4)", () -> t.dim(-5));
    }

    @Test
    void catNeedsPartsOfOneRankDtypeDeviceAndOffAxisShape() {
        Tensor a = t22();
        refused("parts = []: must hold at least one tensor", () -> Tensor.cat(0));
        refused("parts = null: must hold at least one tensor", () -> Tensor.cat(0, (Tensor[]) null));
        Tensor one = Tensor.cat(0, a);
        assertArrayEquals(new float[] {1f, 2f, 3f, 4f}, one.toFloatArray());
        refused("parts[1].rank = 3: must equal 2", () -> Tensor.cat(0, a, Tensor.zeros(DType.F32, Device.CPU, 1, 2, 2)));
        refused("parts[1].dtype = BF16: must equal F32", () -> Tensor.cat(0, a, Tensor.zeros(DType.BF16, Device.CPU, 2, 2)));
        refused("parts[1].device = cuda:0: must equal cpu",
                () -> Tensor.cat(0, a, Tensor.zeros(DType.F32, Device.cuda(0), 2, 2)));
        refused("parts[1].shape = [2, 3]: must match [2, 2] off axis 0",
                () -> Tensor.cat(0, a, Tensor.zeros(DType.F32, Device.CPU, 2, 3)));
        // the concatenation axis may differ: [2,2] ++ [1,2] along 0, [2,2] ++ [2,1] along 1
        Tensor rows = Tensor.cat(0, a, Tensor.of(new float[] {5f, 6f}, DType.F32, Device.CPU, 1, 2));
        assertArrayEquals(new int[] {3, 2}, rows.shape());
        assertArrayEquals(new float[] {1f, 2f, 3f, 4f, 5f, 6f}, rows.toFloatArray());
        Tensor cols = Tensor.cat(1, a, Tensor.of(new float[] {5f, 6f}, DType.F32, Device.CPU, 2, 1));
        assertArrayEquals(new float[] {1f, 2f, 5f, 3f, 4f, 6f}, cols.toFloatArray());
    }

    @Test
    void shapesAreBoundedBy2To31Minus9Elements() {
        refused("shape = [65536, 65536, 2]: must hold at most 2^31-9 elements",
                () -> Tensor.zeros(DType.F32, Device.CPU, 65536, 65536, 2));
        refused("shape = [-1, 2]: must have no negative sizes", () -> Tensor.zeros(DType.F32, Device.CPU, -1, 2));
        // a product past a long is refused, not wrapped round to a small count
        refused("shape = [2147483647, 2147483647, 2147483647]: must hold at most 2^31-9 elements",
                () -> Tensor.zeros(DType.F32, Device.CPU, Integer.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE));
        // a zero size makes a tensor empty whatever its other sizes, even where their product alone passes the bound
        for (int[] empty : new int[][] {{Integer.MAX_VALUE, 0}, {65536, 65536, 0}, {0, Integer.MAX_VALUE, 3}}) {
            Tensor e = Tensor.zeros(DType.F32, Device.CPU, empty);
            assertEquals(0, e.numel(), () -> java.util.Arrays.toString(empty));
            assertArrayEquals(empty, e.shape());
        }
        // exactly 2^31-9 elements is a legal shape: reshape checks it, then refuses the element count
        refused("shape = [2147483639]: must hold 4 elements like [2, 2]", () -> t22().reshape(2147483639));
    }

    @Test
    void indexingSetFlatCopyIntoAndNarrowStopExactlyAtTheirBounds() {
        Tensor t = t22();
        refused("index = [0]: must have rank 2", () -> t.get(0));
        refused("index = [0, 2]: must lie inside shape [2, 2]", () -> t.get(0, 2));
        t.setFlat(0, 7f);
        t.setFlat(3, 9f);
        assertArrayEquals(new float[] {7f, 2f, 3f, 9f}, t.toFloatArray());
        refused("i = 4: must lie in [0, 4)", () -> t.setFlat(4, 1f));
        refused("i = -1: must lie in [0, 4)", () -> t.setFlat(-1, 1f));
        float[] dst = new float[5];
        t.copyInto(0, dst, 1, 4);
        assertArrayEquals(new float[] {0f, 7f, 2f, 3f, 9f}, dst);
        t.copyInto(4, dst, 0, 0);
        refused("copyInto(from, length) = [-1, 1]: must stay inside the 4 elements", () -> t.copyInto(-1, dst, 0, 1));
        refused("copyInto(from, length) = [2, -1]: must stay inside the 4 elements", () -> t.copyInto(2, dst, 0, -1));
        refused("copyInto(from, length) = [1, 4]: must stay inside the 4 elements", () -> t.copyInto(1, dst, 0, 4));
        assertArrayEquals(new float[] {7f, 2f, 3f, 9f}, t.narrow(0, 0, 2).toFloatArray());
        assertEquals(0, t.narrow(1, 2, 0).numel());
        refused("narrow(0, start, length) = [1, 2]: must stay inside axis size 2", () -> t.narrow(0, 1, 2));
    }

    @Test
    void readOnlyFlagAndText() {
        Tensor t = t22();
        assertFalse(t.isReadOnly());
        assertTrue(Tensor.readOnly(new float[] {1f}, DType.F32, Device.CPU, 1).isReadOnly());
        assertEquals("Tensor#" + t.id().value() + "[2, 2] F32 @cpu", t.toString());
    }
}
