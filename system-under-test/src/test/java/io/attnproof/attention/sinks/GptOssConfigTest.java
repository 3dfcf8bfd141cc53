package io.attnproof.attention.sinks;

import io.attnproof.attention.dispatch.SinksArm;
import io.attnproof.attention.dispatch.SinksDispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.mask.VarlenCausalMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.fixtures.tolerance.Diff;
import io.attnproof.oracles.Precision;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * GPT-OSS layers: window 128 on even layers, full causal on odd, sinks everywhere, 64 query heads over 8 KV heads at
 * head_dim 64; its own mask always routes a call to the unfused path, where it adds nothing to the causal rule.
 */
class GptOssConfigTest {
    static System.Logger quiet;

    @BeforeAll
    static void silenceTheOnceWarning() {
        quiet = SinksAttention.useLogger(new CapturingLogger());
    }

    @AfterAll
    static void restoreTheLogger() {
        SinksAttention.useLogger(quiet);
    }

    @Test
    void layersAlternateWindowedAndFullCausal() {
        GptOssConfig c = GptOssConfig.gptOss(24);
        assertEquals(new GptOssConfig(24, 64, 8, 64, 128), c);
        assertEquals(8, c.group());
        for (int layer = 0; layer < 24; layer++) {
            assertEquals(layer % 2 == 0 ? 128 : 0, c.window(layer), "layer " + layer);
            assertTrue(c.hasSinks(layer));
        }
        assertTrue(SinksDispatch.metalEnvelope(c.headDim()) && SinksDispatch.cudaEnvelope(c.headDim(), false),
                "head_dim 64 is in both fused envelopes: a dropped guard would be reachable");
    }

    @Test
    void theLayerMaskIsTheFusedRuleAndKeepsCallsUnfused() {
        GptOssConfig c = new GptOssConfig(4, 8, 2, 64, 3);
        int tq = 5;
        int tk = 9;
        for (int layer = 0; layer < 4; layer++) {
            Tensor mask = c.layerMask(layer, tq, tk, Device.metal(0));
            assertEquals(Device.metal(0), mask.device());
            Tensor rule = new VarlenCausalMask(tq, tk, c.window(layer)).materialize();
            assertEquals(0, Diff.bitsDiffering(rule.toFloatArray(), mask.toFloatArray()), "layer " + layer);
            for (Device device : new Device[] {Device.CPU, Device.cuda(0), Device.metal(0)}) {
                Tensor q = Tensor.zeros(DType.F32, device, 1, 8, tq, 64);
                assertEquals(SinksArm.UNFUSED, SinksAttention.armFor(q, mask, true), device + " layer " + layer);
            }
        }
    }

    @Test
    void theGptOssMaskAddsNothingToTheRuleOnTheUnfusedPath() {
        GptOssConfig c = GptOssConfig.gptOss(2);
        int tq = 6;
        int tk = 10;
        SinksInputs in = SinksInputs.generate(900, 1, 64, 8, tq, tk, 64, Precision.F32, 2.0);
        for (int layer = 0; layer < 2; layer++) {
            Device metal = Device.metal(0);
            Tensor q = SinksRun.tensor(in.q(), DType.F32, metal);
            Tensor k = SinksRun.tensor(in.k(), DType.F32, metal);
            Tensor v = SinksRun.tensor(in.v(), DType.F32, metal);
            Tensor sinks = SinksRun.sinks(in.sinks(), metal);
            Tensor masked = c.attention(layer, q, k, v, sinks, c.layerMask(layer, tq, tk, metal));
            Tensor ruleOnly = SinksAttention.sinksAttnCpu(q, k, v, sinks, null, c.window(layer));
            assertEquals(0, Diff.bitsDiffering(masked.toFloatArray(), ruleOnly.toFloatArray()), "layer " + layer);
            SinksRun run = SinksRun.of(SinksRun.problem(in, null, c.window(layer)), masked, Precision.F32);
            assertTrue(run.diff().maxAbs() <= run.limit(), run.diff() + " vs " + run.limit());
        }
    }
}
