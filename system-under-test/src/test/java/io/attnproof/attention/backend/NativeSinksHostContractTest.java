package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The host side of the native lanes ({@link NativeSinks}) through a fake driver boundary: a {@link KernelRunner} that
 * records every launch sequence (kernel names, grids, buffer lengths) and can leave a status word, as a kernel would.
 * Checks the argument refusals by their exact messages, the launch geometry computed by hand ({@code ceil(work /
 * 128)} grid-stride blocks, {@code ceil(t_q / 8)} fused row blocks), the split-K switch, the status-word handling
 * and the row chunking of the unfused path, none of which depends on a device.
 */
class NativeSinksHostContractTest {
    /** Records launches; leaves {@code status} in every status buffer, as a refusing kernel does. */
    static final class FakeRunner implements KernelRunner {
        final List<List<KernelLaunch>> runs = new ArrayList<>();
        int status;
        int blocks = 1024;

        @Override
        public String lane() {
            return "fake";
        }

        @Override
        public int gridStrideBlocks() {
            return blocks;
        }

        @Override
        public void run(List<KernelLaunch> launches) {
            runs.add(launches);
            for (KernelLaunch l : launches) {
                for (KernelArg a : l.args()) {
                    if (a instanceof KernelArg.Buffer(DeviceBuffer b) && b.name().equals("status")) {
                        b.ints()[0] = status;
                    }
                }
            }
        }

        List<String> kernels() {
            List<String> out = new ArrayList<>();
            for (List<KernelLaunch> r : runs) {
                for (KernelLaunch l : r) {
                    out.add(l.kernel());
                }
            }
            return out;
        }

        KernelLaunch launch(String kernel) {
            for (List<KernelLaunch> r : runs) {
                for (KernelLaunch l : r) {
                    if (l.kernel().equals(kernel)) {
                        return l;
                    }
                }
            }
            throw new AssertionError("no launch of " + kernel + " in " + kernels());
        }
    }

    static final Device CUDA = Device.cuda(0);

    final FakeRunner fake = new FakeRunner();
    final NativeSinks cuda = new NativeSinks("fake-cuda", CUDA, NativeSinks.Dialect.CUDA, fake);
    final NativeSinks metal = new NativeSinks("fake-metal", Device.metal(0), NativeSinks.Dialect.METAL, fake);

    static Tensor t(Device device, int... shape) {
        return Tensor.zeros(DType.F32, device, shape);
    }

    static Tensor c(int... shape) {
        return t(CUDA, shape);
    }

    static void refused(String message, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(message, e.getMessage());
    }

    static void failed(String message, Executable call) {
        NativeKernelException e = assertThrows(NativeKernelException.class, call);
        assertEquals(message, e.getMessage());
    }

    // ---- flash_attn_sinks ----

    @Test
    void aFusedCallWithNoRowsReturnsZerosWithoutALaunchAndRefusesAMaskInTheKernelsWords() {
        Tensor none = cuda.flashAttnSinks(c(0, 2, 3, 4), c(0, 1, 5, 4), c(0, 1, 5, 4), c(2), null, 0);
        assertArrayEquals(new int[] {0, 2, 3, 4}, none.shape());
        Tensor noRows = cuda.flashAttnSinks(c(2, 2, 0, 4), c(2, 1, 5, 4), c(2, 1, 5, 4), c(2), null, 0);
        assertArrayEquals(new int[] {2, 2, 0, 4}, noRows.shape());
        assertEquals(0, noRows.numel());
        assertEquals(0, fake.runs.size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> cuda.flashAttnSinks(c(2, 2, 0, 4), c(2, 1, 5, 4), c(2, 1, 5, 4), c(2), c(0, 5), 0));
        assertTrue(e.getMessage().startsWith("mask = "), e.getMessage());
        assertTrue(e.getMessage().endsWith(": must be null: flash_attn_sinks applies causality and the window itself"
                + " and cannot honour a caller mask; the fake-cuda kernel refused it at its interface (no rows to"
                + " launch)"), e.getMessage());
    }

    @Test
    void theFusedGridHasCeilTqOver8RowBlocks() {
        cuda.flashAttnSinks(c(1, 2, 8, 4), c(1, 1, 5, 4), c(1, 1, 5, 4), c(2), null, 0);
        assertArrayEquals(new int[] {1, 2, 1}, fake.launch("flash_attn_sinks").grid());
        fake.runs.clear();
        cuda.flashAttnSinks(c(3, 2, 9, 4), c(3, 1, 5, 4), c(3, 1, 5, 4), c(2), null, 0);
        assertArrayEquals(new int[] {2, 2, 3}, fake.launch("flash_attn_sinks").grid());
        assertArrayEquals(new int[] {128, 1, 1}, fake.launch("flash_attn_sinks").block());
    }

    @Test
    void aSingleQueryAtTheLargestSplitKHeadDimTakesSplitK() {
        // D = 512 = the CUDA split-K kernels' MAX_D: still split-K (t_q = 1, 1024 keys = 4 chunks of 256).
        cuda.flashAttnSinks(c(1, 1, 1, 512), c(1, 1, 1024, 512), c(1, 1, 1024, 512), c(1), null, 0);
        assertEquals(List.of("sinks_decode_splitk_partial", "sinks_decode_splitk_reduce"), fake.kernels());
        assertArrayEquals(new int[] {4, 1, 1}, fake.launch("sinks_decode_splitk_partial").grid());
    }

    @Test
    void theFusedKernelsStatusWordsBecomeTheirErrors() {
        fake.status = NativeSinks.STATUS_LAUNCH_CONFIG;
        failed("fake-cuda: flash_attn_sinks failed: STATUS_LAUNCH_CONFIG: the kernel rejected its launch configuration"
                + " or arguments", () -> cuda.flashAttnSinks(c(1, 2, 2, 4), c(1, 1, 5, 4), c(1, 1, 5, 4), c(2), null, 0));
        fake.status = 9;
        failed("fake-cuda: flash_attn_sinks failed: STATUS_9: the kernel rejected its launch configuration or arguments",
                () -> cuda.flashAttnSinks(c(1, 2, 2, 4), c(1, 1, 5, 4), c(1, 1, 5, 4), c(2), null, 0));
    }

    @Test
    void theSplitKKernelsStatusWordsBecomeTheirErrors() {
        fake.status = NativeSinks.STATUS_HEAD_DIM;
        refused("head_dim = 4: must be at most 512 for sinks_decode_splitk_partial (the fake-cuda kernel refused it,"
                + " status 2)", () -> cuda.flashAttnSinks(c(1, 1, 1, 4), c(1, 1, 1024, 4), c(1, 1, 1024, 4), c(1), null,
                0));
        fake.status = NativeSinks.STATUS_LAUNCH_CONFIG;
        failed("fake-cuda: sinks_decode_splitk_partial/sinks_decode_splitk_reduce failed: STATUS_LAUNCH_CONFIG: the"
                + " kernel rejected its launch configuration or arguments",
                () -> cuda.flashAttnSinks(c(1, 1, 1, 4), c(1, 1, 1024, 4), c(1, 1, 1024, 4), c(1), null, 0));
    }

    @Test
    void aSplitKPartialBufferPastOneDeviceBufferIsRefusedByName() {
        // B * Hq * chunks * (D + 2) = 1 * 2^18 * 4096 * 3 = 3221225472 > 2^31 - 9 (D = 1, 2^20 keys).
        int hq = 1 << 18;
        int tk = 1 << 20;
        refused("B*Hq*chunks*(D+2) = 3221225472: must fit one device buffer",
                () -> cuda.flashAttnSinks(c(1, hq, 1, 1), c(1, 1, tk, 1), c(1, 1, tk, 1), c(hq), null, 0));
    }

    // ---- union attention's last stage ----

    @Test
    void attendMaskedRefusesBadShapesByNameAndAcceptsBroadcastMasks() {
        Tensor q = c(2, 2, 1, 4);
        Tensor kv = c(2, 1, 3, 4);
        refused("q.rank = 3: must be 4 [B, H, t_q, D]", () -> cuda.attendMasked(c(2, 1, 4), kv, kv, c(1, 1, 1, 3), null));
        refused("keys.shape = [2, 2, 3, 4]: must be [2, 1, n, 4]",
                () -> cuda.attendMasked(q, c(2, 2, 3, 4), kv, c(1, 1, 1, 3), null));
        refused("values.shape = [2, 1, 4, 4]: must equal keys.shape [2, 1, 3, 4]",
                () -> cuda.attendMasked(q, kv, c(2, 1, 4, 4), c(1, 1, 1, 3), null));
        String rule = ": must be [2|1, 2|1, 1, 3]";
        refused("mask.shape = [1, 1, 3]" + rule, () -> cuda.attendMasked(q, kv, kv, c(1, 1, 3), null));
        refused("mask.shape = [3, 1, 1, 3]" + rule, () -> cuda.attendMasked(q, kv, kv, c(3, 1, 1, 3), null));
        refused("mask.shape = [1, 3, 1, 3]" + rule, () -> cuda.attendMasked(q, kv, kv, c(1, 3, 1, 3), null));
        refused("mask.shape = [1, 1, 2, 3]" + rule, () -> cuda.attendMasked(q, kv, kv, c(1, 1, 2, 3), null));
        refused("mask.shape = [1, 1, 1, 4]" + rule, () -> cuda.attendMasked(q, kv, kv, c(1, 1, 1, 4), null));
        refused("sink.length = 1: must equal the heads 2",
                () -> cuda.attendMasked(q, kv, kv, c(1, 1, 1, 3), new float[] {0f}));
        assertEquals(16, cuda.attendMasked(q, kv, kv, c(1, 1, 1, 3), new float[] {0f, 1f}).length);
        assertEquals(16, cuda.attendMasked(q, kv, kv, c(2, 2, 1, 3), null).length);
        assertEquals(2, fake.runs.size());
    }

    @Test
    void theSplitKSwitchOfAUnionDecodeCountsTheMostAdmittedKeysOfAnyMaskRow() {
        // Two batch rows over 1100 keys: row 0 admits 10 keys (under the 1024 split-K minimum), row 1 admits all.
        int n = 1100;
        float[] m = new float[2 * n];
        Arrays.fill(m, 10, n, Float.NEGATIVE_INFINITY);
        Tensor mask = Tensor.of(m, DType.F32, CUDA, 2, 1, 1, n);
        cuda.attendMasked(c(2, 1, 1, 4), c(2, 1, n, 4), c(2, 1, n, 4), mask, null);
        assertEquals(List.of("sinks_decode_splitk_partial", "sinks_decode_splitk_reduce"), fake.kernels());
    }

    // ---- unfused ----

    @Test
    void theUnfusedPathChecksTheDeviceAndReturnsZerosWithNoRows() {
        Tensor cpu = t(Device.CPU, 1, 2, 2, 4);
        Tensor cpuKv = t(Device.CPU, 1, 1, 3, 4);
        refused("q.device = cpu: must be a cuda device for the fake-cuda backend",
                () -> cuda.sinksAttnUnfused(cpu, cpuKv, cpuKv, t(Device.CPU, 2), null, 0));
        Tensor none = cuda.sinksAttnUnfused(c(0, 2, 2, 4), c(0, 1, 3, 4), c(0, 1, 3, 4), c(2), null, 0);
        assertArrayEquals(new int[] {0, 2, 2, 4}, none.shape());
        assertEquals(0, fake.runs.size());
    }

    @Test
    void theSoftmaxGridHasCeilRowsOver128BlocksOnBothDialects() {
        // B * Hq * t_q = 2 * 3 * 50 = 300 softmax rows: ceil(300 / 128) = 3 blocks.
        float[] q = new float[300];
        float[] kv = new float[2];
        float[] sink = new float[3];
        cuda.unfused(2, 3, 1, 50, 1, 1, q, kv, kv, sink, null, false, 0, Long.MAX_VALUE);
        assertArrayEquals(new int[] {3, 1, 1}, fake.launch("softmax_with_sinks").grid());
        assertArrayEquals(new int[] {3, 1, 1}, fake.launch("sinks_scores").grid());
        fake.runs.clear();
        metal.unfused(2, 3, 1, 50, 1, 1, q, kv, kv, sink, null, false, 0, Long.MAX_VALUE);
        assertArrayEquals(new int[] {3, 1, 1}, fake.launch("softmax_with_sinks_metal").grid());
    }

    @Test
    void theGridStrideBlocksRoundUpAndStopAtTheRunnersLimit() {
        // 256 rows: exactly 2 blocks of 128 threads; 257: 3; a runner limit of 2 caps the grid.
        cuda.softmaxWithSinks(c(1, 1, 256, 1), c(1), null);
        assertArrayEquals(new int[] {2, 1, 1}, fake.launch("softmax_with_sinks").grid());
        fake.runs.clear();
        cuda.softmaxWithSinks(c(1, 1, 257, 1), c(1), null);
        assertArrayEquals(new int[] {3, 1, 1}, fake.launch("softmax_with_sinks").grid());
        fake.runs.clear();
        fake.blocks = 2;
        cuda.softmaxWithSinks(c(1, 1, 257, 1), c(1), null);
        assertArrayEquals(new int[] {2, 1, 1}, fake.launch("softmax_with_sinks").grid());
        fake.runs.clear();
        // 300 rows of the softmax operation itself: 3 blocks.
        fake.blocks = 1024;
        cuda.softmaxWithSinks(c(2, 3, 50, 1), c(3), null);
        assertArrayEquals(new int[] {3, 1, 1}, fake.launch("softmax_with_sinks").grid());
    }

    @Test
    void chunkedRowsRunOnePassPerChunkAndSkipChunksBeforeTheFirstKey() {
        float[] q = new float[4];
        float[] kv = new float[3];
        float[] sink = {0f};
        // t_q = 4 rows in chunks of 2 (bound 2 * t_k): two passes, none at r0 = t_q.
        cuda.unfused(1, 1, 1, 4, 3, 1, q, kv, kv, sink, null, false, 0, 6);
        assertEquals(2, fake.runs.size());
        fake.runs.clear();
        // Causal, t_q = 4 over t_k = 2, one row a chunk: rows 0 and 1 end before the first key (keys -1 and 0),
        // skipped; rows 2 and 3 read 1 and 2 keys.
        cuda.unfused(1, 1, 1, 4, 2, 1, q, new float[2], new float[2], sink, null, true, 0, 2);
        assertEquals(2, fake.runs.size());
        assertEquals(1, ((KernelArg.I32) fake.runs.get(0).get(0).args().get(8)).value());
        assertEquals(2, ((KernelArg.I32) fake.runs.get(1).get(0).args().get(8)).value());
    }

    @Test
    void chunkedRowsSliceTheMaskPerRowOnlyWhenItHasRows() {
        float[] sink = {0f, 0f};
        // A mask broadcast over rows ([1, 1, 1, 3]) is handed whole to every chunk.
        Tensor shared = Tensor.of(new float[] {0f, -1f, -2f}, DType.F32, CUDA, 1, 1, 1, 3);
        cuda.unfused(1, 1, 1, 4, 3, 1, new float[4], new float[3], new float[3], new float[] {0f}, shared, false, 0, 6);
        assertEquals(2, fake.runs.size());
        for (List<KernelLaunch> run : fake.runs) {
            KernelArg.Buffer mask = (KernelArg.Buffer) run.get(0).args().get(2);
            assertArrayEquals(new float[] {0f, -1f, -2f}, mask.buffer().floats());
        }
        fake.runs.clear();
        // A per-row mask [2, 2, 4, 3] over B = 2, Hq = 2 in chunks of 2 rows: each chunk's mask holds
        // B * Hq * 2 rows * 3 keys = 24 values.
        Tensor perRow = Tensor.of(new float[2 * 2 * 4 * 3], DType.F32, CUDA, 2, 2, 4, 3);
        cuda.unfused(2, 2, 1, 4, 3, 1, new float[16], new float[6], new float[6], sink, perRow, false, 0, 24);
        assertEquals(2, fake.runs.size());
        assertEquals(24, ((KernelArg.Buffer) fake.runs.get(0).get(0).args().get(2)).buffer().length());
    }

    @Test
    void scoreBuffersPastOneDeviceBufferAreRefusedByName() {
        // B * Hq * t_k = 2^16 * 2^16 = 2^32 for one query row.
        int h = 1 << 16;
        float[] q = new float[h];
        float[] kv = new float[h];
        float[] sink = new float[h];
        refused("B*Hq*t_k = 4294967296: must fit one device buffer (one query row)",
                () -> cuda.unfused(1, h, 1, 1, h, 1, q, kv, kv, sink, null, false, 0, 1L << 22));
        refused("B*Hq*t_q*t_k = 4294967296: must fit one device buffer",
                () -> cuda.unfused(1, h, 1, 1, h, 1, q, kv, kv, sink, null, false, 0, Long.MAX_VALUE));
    }

    // ---- varlen ----

    Tensor varlen(Tensor q, Tensor k, Tensor v, int[] cuQ, int[] cuK) {
        return cuda.sinksAttnVarlen(q, k, v, c(q.rank() == 3 ? q.dim(1) : 1), cuQ, cuK, 0);
    }

    @Test
    void theVarlenPathRefusesBadShapesByName() {
        int[] cuQ = {0, 3};
        int[] cuK = {0, 3};
        Tensor k = c(3, 2, 8);
        refused("q.rank = 4: must be 3 [total_q, Hq, D] (packed rows)", () -> varlen(c(1, 3, 4, 8), k, k, cuQ, cuK));
        refused("k.rank = 4: must be 3 [total_k, Hkv, D] (packed rows)",
                () -> varlen(c(3, 4, 8), c(1, 3, 2, 8), c(1, 3, 2, 8), cuQ, cuK));
        refused("q.shape[1] (query heads) = 0: must be >= 1", () -> varlen(c(3, 0, 8), k, k, cuQ, cuK));
        refused("q.shape[2] (head dim) = 0: must be >= 1", () -> varlen(c(3, 4, 0), k, k, cuQ, cuK));
        refused("k.shape = [3, 2, 4]: must be [total_k, Hkv, 8] (q's head dim)",
                () -> varlen(c(3, 4, 8), c(3, 2, 4), c(3, 2, 4), cuQ, cuK));
        refused("k.shape[1] (KV heads) = 3: must divide the query heads 4 (GQA: Hq a multiple of Hkv)",
                () -> varlen(c(3, 4, 8), c(3, 3, 8), c(3, 3, 8), cuQ, cuK));
        refused("v.shape = [2, 2, 8]: must equal k.shape [3, 2, 8]", () -> varlen(c(3, 4, 8), k, c(2, 2, 8), cuQ, cuK));
        Tensor f16 = Tensor.zeros(DType.F16, CUDA, 3, 2, 8);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> varlen(c(3, 4, 8), f16, f16, cuQ, cuK));
        assertTrue(e.getMessage().startsWith("k/v = ") && e.getMessage().endsWith(
                ": must share q's dtype F32 and device cuda:0"), e.getMessage());
        Tensor cpuQ = t(Device.CPU, 3, 1, 1);
        Tensor cpuK = t(Device.CPU, 3, 1, 1);
        refused("q.device = cpu: must be a cuda device for the fake-cuda backend",
                () -> cuda.sinksAttnVarlen(cpuQ, cpuK, cpuK, t(Device.CPU, 1), cuQ, cuK, 0));
        assertEquals(0, fake.runs.size());
        // The smallest legal call: one query head of head dim 1 runs the varlen kernel.
        Tensor one = varlen(c(3, 1, 1), c(3, 1, 1), c(3, 1, 1), cuQ, cuK);
        assertArrayEquals(new int[] {1, 1, 3, 1}, one.shape());
        assertEquals(List.of("flash_attn_sinks_varlen"), fake.kernels());
    }

    @Test
    void varlenSequencesWithNoQueryRowsGiveAnEmptyResultWithoutALaunch() {
        Tensor out = varlen(c(0, 2, 4), c(3, 1, 4), c(3, 1, 4), new int[] {0, 0}, new int[] {0, 3});
        assertArrayEquals(new int[] {1, 2, 0, 4}, out.shape());
        assertEquals(0, fake.runs.size());
    }

    @Test
    void theVarlenKernelsStatusWordsBecomeTheirErrors() {
        fake.status = NativeSinks.STATUS_BAD_SEQLENS;
        refused("cu_seqlens = [0, 3] / [0, 3]: must give every sequence 0 <= q_len <= max_q (the fake-cuda kernel"
                + " refused them, status 4)", () -> varlen(c(3, 1, 4), c(3, 1, 4), c(3, 1, 4), new int[] {0, 3},
                new int[] {0, 3}));
        fake.status = NativeSinks.STATUS_LAUNCH_CONFIG;
        failed("fake-cuda: flash_attn_sinks_varlen failed: STATUS_LAUNCH_CONFIG: the kernel rejected its launch"
                + " configuration or arguments", () -> varlen(c(3, 1, 4), c(3, 1, 4), c(3, 1, 4), new int[] {0, 3},
                new int[] {0, 3}));
    }

    // ---- softmax_with_sinks ----

    @Test
    void softmaxWithSinksRefusesBadShapesAndMaskValuesByNameAndAcceptsBroadcastMasks() {
        Tensor logits = c(2, 3, 4, 5);
        Tensor sinks = c(3);
        refused("logits.rank = 3: must be 4 [b, h, q, k]", () -> cuda.softmaxWithSinks(c(3, 4, 5), sinks, null));
        refused("mask.rank = 3: must be 4 [b|1, h|1, q|1, k]", () -> cuda.softmaxWithSinks(logits, sinks, c(3, 4, 5)));
        String rule = ": must broadcast to logits shape [2, 3, 4, 5]";
        refused("mask.shape = [3, 1, 1, 5]" + rule, () -> cuda.softmaxWithSinks(logits, sinks, c(3, 1, 1, 5)));
        refused("mask.shape = [1, 2, 1, 5]" + rule, () -> cuda.softmaxWithSinks(logits, sinks, c(1, 2, 1, 5)));
        refused("mask.shape = [1, 1, 3, 5]" + rule, () -> cuda.softmaxWithSinks(logits, sinks, c(1, 1, 3, 5)));
        refused("mask.shape = [1, 1, 1, 4]" + rule, () -> cuda.softmaxWithSinks(logits, sinks, c(1, 1, 1, 4)));
        Tensor nan = Tensor.of(new float[] {0f, Float.NaN, 0f, 0f, 0f}, DType.F32, CUDA, 1, 1, 1, 5);
        refused("mask value = NaN: must be finite or -inf", () -> cuda.softmaxWithSinks(logits, sinks, nan));
        refused("q.device = cpu: must be a cuda device for the fake-cuda backend",
                () -> cuda.softmaxWithSinks(t(Device.CPU, 2, 3, 4, 5), t(Device.CPU, 3), null));
        assertEquals(0, fake.runs.size());
        assertArrayEquals(new int[] {2, 3, 4, 5}, cuda.softmaxWithSinks(logits, sinks, c(1, 1, 1, 5)).shape());
        assertArrayEquals(new int[] {2, 3, 4, 5}, cuda.softmaxWithSinks(logits, sinks, c(2, 3, 4, 5)).shape());
        assertEquals(2, fake.runs.size());
    }

    @Test
    void softmaxWithSinksOfAnEmptyAxisReturnsItsShapeWithoutALaunch() {
        assertArrayEquals(new int[] {2, 0, 3, 4}, cuda.softmaxWithSinks(c(2, 0, 3, 4), c(0), null).shape());
        assertArrayEquals(new int[] {2, 3, 0, 4}, cuda.softmaxWithSinks(c(2, 3, 0, 4), c(3), null).shape());
        assertArrayEquals(new int[] {2, 3, 4, 0}, cuda.softmaxWithSinks(c(2, 3, 4, 0), c(3), null).shape());
        assertEquals(0, fake.runs.size());
    }

    @Test
    void theCudaEnvelopeAddsHeadDim512ToTheMetalOne() {
        assertEquals("[64, 80, 96, 112, 128, 192, 256, 512]", NativeSinks.Dialect.CUDA.envelope());
        assertEquals("[64, 80, 96, 112, 128, 192, 256]", NativeSinks.Dialect.METAL.envelope());
    }
}
