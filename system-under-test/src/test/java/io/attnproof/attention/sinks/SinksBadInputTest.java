package io.attnproof.attention.sinks;

import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.engine.FusedSinksKernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every sinks entry point refuses bad input with the parameter, the value and the rule in the message. */
class SinksBadInputTest {
    static Tensor t(int... shape) {
        return Tensor.zeros(DType.F32, Device.CPU, shape);
    }

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    static final Tensor Q = t(2, 4, 3, 8);
    static final Tensor K = t(2, 2, 5, 8);
    static final Tensor S = t(4);

    static Tensor attn(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        return SinksAttention.sinksAttn(q, k, v, sinks, mask, window, true);
    }

    static Tensor varlen(int[] cuQ, int[] cuK) {
        return SinksAttention.sinksAttnCpuVarlen(t(6, 4, 8), t(9, 2, 8), t(9, 2, 8), S, cuQ, cuK, 0);
    }

    @Test
    void cuSeqlensMustStartAtZeroNeverDecreaseAndStayInside() {
        refused("cu_seqlens_q = [1, 3, 6]: must start at 0", () -> varlen(new int[] {1, 3, 6}, new int[] {0, 4, 9}));
        refused("cu_seqlens_k = [2, 4, 9]: must start at 0", () -> varlen(new int[] {0, 3, 6}, new int[] {2, 4, 9}));
        refused("cu_seqlens_q = []: must start at 0", () -> varlen(new int[] {}, new int[] {}));
        refused("cu_seqlens_q = [0, 4, 3]: must be non-decreasing (entry 2 = 3 < entry 1 = 4)",
                () -> varlen(new int[] {0, 4, 3}, new int[] {0, 4, 9}));
        refused("cu_seqlens_k = [0, 5, 4, 9]: must be non-decreasing (entry 2 = 4 < entry 1 = 5)",
                () -> varlen(new int[] {0, 2, 4, 6}, new int[] {0, 5, 4, 9}));
        refused("cu_seqlens_q = [0, 3, 7]: must end within the packed length 6 of q",
                () -> varlen(new int[] {0, 3, 7}, new int[] {0, 4, 9}));
        refused("cu_seqlens_k = [0, 4, 10]: must end within the packed length 9 of k",
                () -> varlen(new int[] {0, 3, 6}, new int[] {0, 4, 10}));
        refused("cu_seqlens_k.length = 2: must equal cu_seqlens_q.length = 3 (one boundary per sequence, plus the"
                + " start)", () -> varlen(new int[] {0, 3, 6}, new int[] {0, 9}));
        refused("cu_seqlens_q = null: must be present", () -> varlen(null, new int[] {0, 9}));
        // A sequence may be empty, and the packed tensors may hold unused rows past the last boundary.
        assertEquals(3, varlen(new int[] {0, 0, 3, 5}, new int[] {0, 2, 2, 8}).dim(0));
    }

    @Test
    void sinksMustHaveOneLogitPerQueryHead() {
        refused("sinks.shape = [2]: must be [4], one logit per query head", () -> attn(Q, K, K, t(2), null, 0));
        refused("sinks.shape = [1, 4]: must be [4], one logit per query head", () -> attn(Q, K, K, t(1, 4), null, 0));
        refused("sinks = null: must be present", () -> attn(Q, K, K, null, null, 0));
        refused("sinks.shape = [2]: must be [4], one logit per query head",
                () -> SinksAttention.sinksAttnCpuVarlen(t(3, 4, 8), t(3, 2, 8), t(3, 2, 8), t(2), new int[] {0, 3},
                        new int[] {0, 3}, 0));
        Tensor nan = Tensor.of(new float[] {0, 0, Float.NaN, 0}, DType.F32, Device.CPU, 4);
        refused("sinks[2] = NaN: must be finite (or -inf for no sink)", () -> attn(Q, K, K, nan, null, 0));
        refused("sinks.device = cuda:0: must equal q's device cpu",
                () -> attn(Q, K, K, Tensor.zeros(DType.F32, Device.cuda(0), 4), null, 0));
    }

    @Test
    void aMaskMustFitOneOfTheTwoShapes() {
        String rule = "must be [t_q, t_k] = [3, 5] or [B|1, Hq|1, t_q|1, t_k] = [2|1, 4|1, 3|1, 5]";
        for (int[] bad : new int[][] {{3, 4}, {4, 5}, {1, 5}, {3, 5, 1}, {1, 3, 5}, {5}, {3}, {1}, {1, 1, 3, 4},
            {3, 1, 3, 5}, {1, 2, 3, 5}, {1, 1, 2, 5}, {1, 1, 1, 1, 5}}) {
            refused("mask.shape = " + java.util.Arrays.toString(bad) + ": " + rule, () -> attn(Q, K, K, S, t(bad), 0));
            refused("mask.shape = " + java.util.Arrays.toString(bad) + ": " + rule,
                    () -> SinksAttention.sinksAttnCpu(Q, K, K, S, t(bad), 0));
        }
        for (int[] good : new int[][] {{3, 5}, {1, 1, 1, 5}, {2, 4, 3, 5}, {2, 1, 1, 5}, {1, 4, 3, 5}}) {
            assertEquals(4, attn(Q, K, K, S, t(good), 0).rank());
        }
        refused("mask.device = cuda:0: must equal q's device cpu",
                () -> attn(Q, K, K, S, Tensor.zeros(DType.F32, Device.cuda(0), 3, 5), 0));
        Tensor plusInf = t(3, 5);
        plusInf.set(Float.POSITIVE_INFINITY, 1, 1);
        refused("mask value = Infinity: must be finite or -inf", () -> attn(Q, K, K, S, plusInf, 0));
    }

    @Test
    void aFusedKernelRefusesAMaskBeforeAnythingElse() {
        Tensor mask = t(3, 5);
        String rule = ": must be null: flash_attn_sinks applies causality and the window itself and cannot honour a"
                + " caller mask (sinks_attn sends masked calls to sinks_attn_cpu)";
        refused("mask = " + mask + rule, () -> FusedSinksKernel.flashAttnSinks(Q, K, K, S, mask, 0));
        refused("mask = " + mask + rule.replace("flash_attn_sinks ", "flash_attn_sinks_metal "),
                () -> FusedSinksKernel.flashAttnSinksMetal(Q, K, K, S, mask, 0));
        // Even with otherwise broken arguments, the mask is what gets named.
        refused("mask = " + mask + rule, () -> FusedSinksKernel.flashAttnSinks(null, null, null, null, mask, -1));
    }

    @Test
    void queryHeadsMustBeAMultipleOfKvHeads() {
        refused("k.shape[1] (KV heads) = 3: must divide the query heads 4 (GQA: Hq a multiple of Hkv)",
                () -> attn(Q, t(2, 3, 5, 8), t(2, 3, 5, 8), S, null, 0));
        refused("k.shape[1] (KV heads) = 0: must divide the query heads 4 (GQA: Hq a multiple of Hkv)",
                () -> attn(Q, t(2, 0, 5, 8), t(2, 0, 5, 8), S, null, 0));
        refused("k.shape[1] (KV heads) = 3: must divide the query heads 4 (GQA: Hq a multiple of Hkv)",
                () -> FusedSinksKernel.attend(Q, t(2, 3, 5, 8), t(2, 3, 5, 8), S, null, 0));
        refused("k.shape[1] (KV heads) = 3: must divide the query heads 4 (GQA: Hq a multiple of Hkv)",
                () -> SinksAttention.sinksAttnCpuVarlen(t(3, 4, 8), t(3, 3, 8), t(3, 3, 8), S, new int[] {0, 3},
                        new int[] {0, 3}, 0));
        refused("kvHeads = 3: must divide queryHeads = 64 (GQA)", () -> new GptOssConfig(2, 64, 3, 64, 128));
    }

    @Test
    void shapesDtypesDevicesAndWindow() {
        refused("q.rank = 3: must be 4 [B, Hq, t_q, D]", () -> attn(t(4, 3, 8), K, K, S, null, 0));
        refused("k.rank = 3: must be 4 [B, Hkv, t_k, D]", () -> attn(Q, t(2, 5, 8), t(2, 5, 8), S, null, 0));
        refused("k.shape = [2, 2, 5, 7]: must be [2, Hkv, t_k, 8] (q's batch and head dim)",
                () -> attn(Q, t(2, 2, 5, 7), t(2, 2, 5, 7), S, null, 0));
        refused("k.shape = [1, 2, 5, 8]: must be [2, Hkv, t_k, 8] (q's batch and head dim)",
                () -> attn(Q, t(1, 2, 5, 8), t(1, 2, 5, 8), S, null, 0));
        refused("v.shape = [2, 2, 4, 8]: must equal k.shape [2, 2, 5, 8]", () -> attn(Q, K, t(2, 2, 4, 8), S, null, 0));
        Tensor f16 = Tensor.zeros(DType.F16, Device.CPU, 2, 2, 5, 8);
        refused("k = " + f16 + ": must share q's dtype F32 and device cpu", () -> attn(Q, f16, f16, S, null, 0));
        Tensor onCuda = Tensor.zeros(DType.F32, Device.cuda(0), 2, 2, 5, 8);
        refused("v = " + onCuda + ": must share q's dtype F32 and device cpu", () -> attn(Q, K, onCuda, S, null, 0));
        refused("window = -1: must be >= 0", () -> attn(Q, K, K, S, null, -1));
        refused("q = null: must be present", () -> attn(null, K, K, S, null, 0));
        refused("q.rank = 4: must be 3 [total_q, Hq, D] (packed rows)", () -> SinksAttention.sinksAttnCpuVarlen(Q, K,
                K, S, new int[] {0}, new int[] {0}, 0));
        refused("head_dim = 0: must be >= 1", () -> SinksDispatch.choose(Device.Kind.CUDA, 1, 0, false, true));
        refused("B = -1: must be >= 0", () -> SinksDispatch.choose(Device.Kind.CUDA, -1, 64, false, true));
    }

    @Test
    void gptOssLayersAndShapes() {
        GptOssConfig c = GptOssConfig.gptOss(24);
        refused("layer = 24: must lie in [0, 24)", () -> c.window(24));
        refused("layer = -1: must lie in [0, 24)", () -> c.hasSinks(-1));
        refused("q.shape = [2, 4, 3, 8]: must be [B, 64, t_q, 64]", () -> c.attention(0, Q, K, K, S, null));
        refused("slidingWindow = 0: must be >= 1", () -> new GptOssConfig(2, 64, 8, 64, 0));
        refused("layers = 0: must be >= 1", () -> GptOssConfig.gptOss(0));
    }
    static Tensor varlenOf(Tensor q, Tensor k, Tensor v, int window) {
        return SinksAttention.sinksAttnCpuVarlen(q, k, v, t(q.rank() == 3 ? q.dim(1) : 4), new int[] {0, 3},
                new int[] {0, 4}, window);
    }

    @Test
    void theVarlenPathRefusesBadShapesDtypesAndWindowsByName() {
        refused("q.rank = 4: must be 3 [total_q, Hq, D] (packed rows)",
                () -> SinksAttention.sinksAttnCpuVarlen(t(1, 3, 4, 8), t(4, 2, 8), t(4, 2, 8), S, new int[] {0, 3},
                        new int[] {0, 4}, 0));
        refused("k.rank = 4: must be 3 [total_k, Hkv, D] (packed rows)",
                () -> varlenOf(t(3, 4, 8), t(1, 4, 2, 8), t(1, 4, 2, 8), 0));
        refused("q.shape[1] (query heads) = 0: must be >= 1", () -> varlenOf(t(3, 0, 8), t(4, 2, 8), t(4, 2, 8), 0));
        refused("q.shape[2] (head dim) = 0: must be >= 1", () -> varlenOf(t(3, 4, 0), t(4, 2, 0), t(4, 2, 0), 0));
        refused("k.shape = [4, 2, 6]: must be [total_k, Hkv, 8] (q's head dim)",
                () -> varlenOf(t(3, 4, 8), t(4, 2, 6), t(4, 2, 6), 0));
        refused("k.shape[1] (KV heads) = 3: must divide the query heads 4 (GQA: Hq a multiple of Hkv)",
                () -> varlenOf(t(3, 4, 8), t(4, 3, 8), t(4, 3, 8), 0));
        refused("v.shape = [5, 2, 8]: must equal k.shape [4, 2, 8]",
                () -> varlenOf(t(3, 4, 8), t(4, 2, 8), t(5, 2, 8), 0));
        Tensor half = Tensor.zeros(DType.F16, Device.CPU, 4, 2, 8);
        IllegalArgumentException dtype = assertThrows(IllegalArgumentException.class,
                () -> varlenOf(t(3, 4, 8), half, half, 0));
        org.junit.jupiter.api.Assertions.assertTrue(dtype.getMessage().startsWith("k/v = ")
                && dtype.getMessage().contains("must share q's dtype F32"), dtype.getMessage());
        refused("window = -1: must be >= 0", () -> varlenOf(t(3, 4, 8), t(4, 2, 8), t(4, 2, 8), -1));
        // The smallest legal call: one query head, head dim 1.
        assertEquals(1, varlenOf(t(3, 1, 1), t(4, 1, 1), t(4, 1, 1), 0).dim(1));
    }

    @Test
    void theArmForAQueryOfAnotherRankIsRefusedByName() {
        refused("q.rank = 3: must be 4 [B, Hq, t_q, D]", () -> SinksAttention.armFor(t(4, 3, 8), null, false));
    }
}
