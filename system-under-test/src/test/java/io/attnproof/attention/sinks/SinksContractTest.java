package io.attnproof.attention.sinks;

import io.attnproof.attention.dispatch.SinksArm;
import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.dispatch.SinksKernel;
import io.attnproof.attention.engine.CuSeqlens;
import io.attnproof.attention.engine.FusedSinksKernel;
import io.attnproof.attention.engine.SinksCall;
import io.attnproof.attention.engine.SoftmaxWithSinks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The sinks package's argument contracts not reached by the claim tests: each refusal by its exact message, the
 * boundary value just inside each guard accepted, and the small values (group size, kernel choice) by hand.
 */
class SinksContractTest {
    static Tensor t(int... shape) {
        return Tensor.zeros(DType.F32, Device.CPU, shape);
    }

    static Tensor metal(int... shape) {
        return Tensor.zeros(DType.F32, Device.metal(0), shape);
    }

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    @Test
    void aSingleSequenceBoundaryListIsAcceptedAndAnEmptyOneRefused() {
        CuSeqlens none = CuSeqlens.of(new int[] {0}, new int[] {0}, 0, 0);
        assertEquals(0, none.sequences());
        assertEquals(0, none.maxQ());
        refused("cu_seqlens_q = []: must start at 0", () -> CuSeqlens.of(new int[] {}, new int[] {0}, 0, 0));
    }

    @Test
    void theMetalDecodeKernelRefusesAMaskAnotherHeadDimAndSeveralRows() {
        Tensor q = metal(1, 1, 1, 64);
        Tensor k = metal(1, 1, 3, 64);
        Tensor s = metal(1);
        Tensor mask = metal(1, 3);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FusedSinksKernel.flashAttnSinksMetalDecode(q, k, k, s, mask, 0));
        assertEquals("mask = " + mask + ": must be null: flash_attn_sinks_metal_decode applies causality and the window"
                + " itself and cannot honour a caller mask (sinks_attn sends masked calls to sinks_attn_cpu)",
                e.getMessage());
        refused("head_dim = 112: must be in flash_attn_sinks_metal_decode's envelope [64, 80, 96, 128, 256] (the decode"
                + " kernel does not exist at other head dims)",
                () -> FusedSinksKernel.flashAttnSinksMetalDecode(metal(1, 1, 1, 112), metal(1, 1, 3, 112),
                        metal(1, 1, 3, 112), s, null, 0));
        refused("t_q = 2: must be <= 1 (flash_attn_sinks_metal_decode is the single-query kernel)",
                () -> FusedSinksKernel.flashAttnSinksMetalDecode(metal(1, 1, 2, 64), k, k, s, null, 0));
        assertArrayEquals(new int[] {1, 1, 1, 64}, FusedSinksKernel.flashAttnSinksMetalDecode(q, k, k, s, null, 0)
                .shape());
    }

    @Test
    void gptOssGeometryRefusesEachNonPositiveSizeAndAcceptsOnes() {
        GptOssConfig smallest = new GptOssConfig(1, 1, 1, 1, 1);
        assertEquals(1, smallest.group());
        refused("layers = 0: must be >= 1", () -> new GptOssConfig(0, 1, 1, 1, 1));
        refused("queryHeads = 0: must be >= 1", () -> new GptOssConfig(1, 0, 1, 1, 1));
        refused("kvHeads = 0: must divide queryHeads = 1 (GQA)", () -> new GptOssConfig(1, 1, 0, 1, 1));
        refused("headDim = 0: must be >= 1", () -> new GptOssConfig(1, 1, 1, 0, 1));
        refused("slidingWindow = 0: must be >= 1", () -> new GptOssConfig(1, 1, 1, 1, 0));
    }

    @Test
    void gptOssAttentionRefusesKeysOfAnotherKvHeadCount() {
        GptOssConfig cfg = new GptOssConfig(2, 4, 2, 8, 16);
        refused("k.shape = [1, 4, 3, 8]: must be [B, 2, t_k, 8]",
                () -> cfg.attention(1, t(1, 4, 2, 8), t(1, 4, 3, 8), t(1, 4, 3, 8), t(4), null));
        refused("k.shape = [4, 3, 8]: must be [B, 2, t_k, 8]",
                () -> cfg.attention(1, t(1, 4, 2, 8), t(4, 3, 8), t(4, 3, 8), t(4), null));
    }

    @Test
    void aCallsGroupIsQueryHeadsPerKvHeadAndEachSizeAtLeastOne() {
        SinksCall call = SinksCall.of(t(1, 6, 2, 4), t(1, 2, 3, 4), t(1, 2, 3, 4), t(6), 0);
        assertEquals(3, call.group());
        SinksCall one = SinksCall.of(t(1, 1, 1, 1), t(1, 1, 1, 1), t(1, 1, 1, 1), t(1), 0);
        assertEquals(1, one.queryHeads());
        assertEquals(1, one.headDim());
        refused("q.shape[1] (query heads) = 0: must be >= 1",
                () -> SinksCall.of(t(1, 0, 2, 4), t(1, 1, 3, 4), t(1, 1, 3, 4), t(0), 0));
        refused("q.shape[3] (head dim) = 0: must be >= 1",
                () -> SinksCall.of(t(1, 2, 2, 0), t(1, 1, 3, 0), t(1, 1, 3, 0), t(2), 0));
    }

    @Test
    void onlyAFusedArmHasAKernel() {
        refused("arm = UNFUSED: must be a fused arm (CUDA_FUSED or METAL_FUSED)",
                () -> SinksDispatch.kernelFor(SinksArm.UNFUSED, 1, 64));
        assertEquals(SinksKernel.CUDA_FLASH, SinksDispatch.kernelFor(SinksArm.CUDA_FUSED, 1, 64));
        assertEquals(SinksKernel.CUDA_FLASH, SinksDispatch.kernelFor(SinksArm.CUDA_FUSED, 7, 512));
    }

    @Test
    void softmaxWithSinksRefusesBadShapesByNameAndAcceptsEveryBroadcast() {
        Tensor logits = t(2, 3, 4, 5);
        Tensor sinks = t(3);
        refused("logits.rank = 3: must be 4 [b, h, q, k]", () -> SoftmaxWithSinks.apply(t(3, 4, 5), sinks, null));
        refused("mask.rank = 3: must be 4 [b|1, h|1, q|1, k]", () -> SoftmaxWithSinks.apply(logits, sinks, t(3, 4, 5)));
        String rule = ": must broadcast to logits shape [2, 3, 4, 5]";
        refused("mask.shape = [3, 1, 1, 5]" + rule, () -> SoftmaxWithSinks.apply(logits, sinks, t(3, 1, 1, 5)));
        refused("mask.shape = [1, 2, 1, 5]" + rule, () -> SoftmaxWithSinks.apply(logits, sinks, t(1, 2, 1, 5)));
        refused("mask.shape = [1, 1, 3, 5]" + rule, () -> SoftmaxWithSinks.apply(logits, sinks, t(1, 1, 3, 5)));
        refused("mask.shape = [1, 1, 1, 4]" + rule, () -> SoftmaxWithSinks.apply(logits, sinks, t(1, 1, 1, 4)));
        // Zero logits, zero mask, sink 0 (= e^0 in the denominator): every probability is 1 / (k + 1) = 1 / 6.
        for (Tensor mask : new Tensor[] {t(1, 1, 1, 5), t(2, 3, 4, 5), t(2, 1, 4, 5), t(1, 3, 1, 5)}) {
            Tensor y = SoftmaxWithSinks.apply(logits, sinks, mask);
            assertEquals(1f / 6f, y.flat(0), 1e-7f);
            assertEquals(1f / 6f, y.flat(119), 1e-7f);
        }
    }

    @Test
    void aFullyMaskedRowWithNoSinkOverwritesItsOutputWithZeros() {
        float[] x = {Float.NEGATIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NEGATIVE_INFINITY};
        float[] y = {7f, 7f, 7f, 7f, 7f};
        SoftmaxWithSinks.row(x, 0, 3, Float.NEGATIVE_INFINITY, y, 1);
        assertArrayEquals(new float[] {7f, 0f, 0f, 0f, 7f}, y);
    }
}
