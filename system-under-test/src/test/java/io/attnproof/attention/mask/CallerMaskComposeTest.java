package io.attnproof.attention.mask;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * {@code compose_caller_mask} element by element, written from docs/system.md §4.6: out[b, h, r, c] = local[b or 0, 0, r,
 * c] + (c < keep ? caller[., ., r, base + c] : raw-only ? 0 : caller[., ., r, t_k_full + c - keep]), on a case with a
 * per-row local mask (B = 2), two query rows and compressed columns next to a raw-only caller mask. Found by PIT
 * (pit/triage.csv): the claim tests compose only B = 1 local masks and raw-only caller masks with t_c = 0.
 */
class CallerMaskComposeTest {

    private static float[] ramp(int n, float scale) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = -scale * ((i * 7) % 11);
        }
        return v;
    }

    @Test
    void aRawOnlyCallerMaskAddsOnTheKeepSpanAndZeroOnTheCompressedColumns() {
        int batch = 2;
        int tq = 2;
        int keep = 5;
        int tc = 3;
        int n = keep + tc;
        long tkFull = 9;
        long base = 3;
        Tensor local = Tensor.of(ramp(batch * tq * n, 1f), DType.F32, Device.CPU, batch, 1, tq, n);
        Tensor caller = Tensor.of(ramp(tq * (int) tkFull, 0.5f), DType.F32, Device.CPU, 1, 1, tq, (int) tkFull);
        Tensor out = CallerMasks.compose(local, caller, new CallerMasks.Span(batch, 1, tq, tkFull, base, keep, tc));
        assertEquals(batch * tq * n, out.numel());
        int differs = 0;
        for (int b = 0; b < batch; b++) {
            for (int r = 0; r < tq; r++) {
                for (int c = 0; c < n; c++) {
                    float add = c < keep ? caller.get(0, 0, r, (int) base + c) : 0f;
                    float expected = local.get(b, 0, r, c) + add;
                    assertEquals(expected, out.get(b, 0, r, c), "(" + b + ", " + r + ", " + c + ")");
                    differs += local.get(b, 0, r, c) != local.get(0, 0, 0, c) ? 1 : 0;
                }
            }
        }
        assertTrue(differs > 0, "the local rows must differ, or a wrong row index could not be seen");
    }

    @Test
    void aWrongKeyAxisNamesBothAllowedLengths() {
        Tensor local = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 2, 8);
        Tensor caller = Tensor.zeros(DType.F32, Device.CPU, 1, 1, 2, 10);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CallerMasks.compose(local, caller, new CallerMasks.Span(1, 1, 2, 9, 3, 5, 3)));
        assertTrue(e.getMessage().contains("be t_k_full = 9 or t_k_full + t_c = 12"), e.getMessage());
    }
}
