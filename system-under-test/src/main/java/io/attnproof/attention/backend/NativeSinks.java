package io.attnproof.attention.backend;

import io.attnproof.attention.Require;
import io.attnproof.attention.dispatch.DispatchRegistry;
import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.engine.CuSeqlens;
import io.attnproof.attention.engine.SinksCall;
import io.attnproof.attention.engine.SoftmaxWithSinks;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * The host side of the native lanes: validates a call like the Java kernels do, describes the launches of
 * {@code native/cuda/sinks_attn.cu} or {@code native/metal/sinks_attn.metal} (kernel names, grids, argument order),
 * has a {@link KernelRunner} run them, and turns the kernels' status words into the errors the Java kernels throw.
 * The emulated and the real lane of one dialect share this code; only the runner differs.
 */
final class NativeSinks {
    /** The kernel sources' tile sizes ({@code BLOCK_Q}, {@code BLOCK_K}) and threads per fused block. */
    static final int BLOCK_Q = 8;
    static final int FUSED_THREADS = 128;
    /** Threads per block of the grid-stride (unfused) kernels. */
    static final int LINEAR_THREADS = 128;

    /** Status words the kernels leave (native/cuda/sinks_attn.cu, native/metal/sinks_attn.metal). */
    static final int STATUS_OK = 0;
    static final int STATUS_MASK_REFUSED = 1;
    static final int STATUS_HEAD_DIM = 2;
    static final int STATUS_LAUNCH_CONFIG = 3;
    static final int STATUS_BAD_SEQLENS = 4;

    /** How a kernel source names its entry points and takes its arguments. */
    enum Dialect {
        /** Scalar parameters after the buffers; a null pointer for an absent buffer; max head dim 512. */
        CUDA("flash_attn_sinks", "flash_attn_sinks_varlen", "sinks_scores", "softmax_with_sinks", "sinks_pv",
                "sinks_decode_splitk_partial", "sinks_decode_splitk_reduce",
                DispatchRegistry.CUDA_NATIVE_MAX_HEAD_DIM),
        /** Buffers bound from index 0, then one {@code AttnParams} block; absent buffers are dummies; max 256. */
        METAL("flash_attn_sinks_metal", "flash_attn_sinks_varlen_metal", "sinks_scores_metal",
                "softmax_with_sinks_metal", "sinks_pv_metal", "sinks_decode_splitk_partial_metal",
                "sinks_decode_splitk_reduce_metal", DispatchRegistry.METAL_NATIVE_MAX_HEAD_DIM);

        final String fused;
        final String varlen;
        final String scores;
        final String softmax;
        final String pv;
        final String splitPartial;
        final String splitReduce;
        /** The varlen and split-K kernels' largest head dim ({@code MAX_D} of the source; the registry's). */
        final int maxHeadDim;

        Dialect(String fused, String varlen, String scores, String softmax, String pv, String splitPartial,
                String splitReduce, int maxHeadDim) {
            this.fused = fused;
            this.varlen = varlen;
            this.scores = scores;
            this.softmax = softmax;
            this.pv = pv;
            this.splitPartial = splitPartial;
            this.splitReduce = splitReduce;
            this.maxHeadDim = maxHeadDim;
        }

        String envelope() {
            TreeSet<Integer> dims = new TreeSet<>(SinksDispatch.FUSED_HEAD_DIMS);
            if (this == CUDA) {
                dims.add(SinksDispatch.FLASH_512_HEAD_DIM);
            }
            return dims.toString();
        }
    }

    /** The {@code AttnParams} block of the Metal kernels, word by word. */
    record Params(int b, int hq, int hkv, int tq, int tk, int d, int window, boolean hasMask, int nseq, int maxQ,
            int mb, int mh, int mq, boolean causal, float scale, int chunks) {
        /** Every kernel but the split-K reduce: no chunks. */
        Params(int b, int hq, int hkv, int tq, int tk, int d, int window, boolean hasMask, int nseq, int maxQ,
                int mb, int mh, int mq, boolean causal, float scale) {
            this(b, hq, hkv, tq, tk, d, window, hasMask, nseq, maxQ, mb, mh, mq, causal, scale, 0);
        }

        int[] words() {
            return new int[] {b, hq, hkv, tq, tk, d, window, hasMask ? 1 : 0, nseq, maxQ, mb, mh, mq, causal ? 1 : 0,
                Float.floatToRawIntBits(scale), chunks};
        }
    }

    private final String lane;
    private final Device device;
    private final Dialect dialect;
    private final KernelRunner runner;

    NativeSinks(String lane, Device device, Dialect dialect, KernelRunner runner) {
        this.lane = lane;
        this.device = device;
        this.dialect = dialect;
        this.runner = runner;
    }

    /** The scale the Java kernels use, {@code (float) (1 / sqrt(D))}, passed to every kernel. */
    static float scale(int headDim) {
        return (float) (1.0 / Math.sqrt(headDim));
    }

    Tensor flashAttnSinks(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        onLane(q);
        int b = call.batch();
        int hq = call.queryHeads();
        int tq = call.tq();
        int d = call.headDim();
        if (b == 0 || tq == 0) {
            // No block to launch, so no kernel to refuse the mask: refuse it here, with the kernel's words.
            if (mask != null) {
                refuseMask(mask, "(no rows to launch)");
            }
            return Tensor.of(new float[b * hq * tq * d], q.dtype(), q.device(), b, hq, tq, d);
        }
        DispatchTrace.last().sinksSplitChunks = 0;
        if (mask == null && tq == 1 && DispatchRegistry.splitK(tq, call.tk()) && d <= dialect.maxHeadDim) {
            // Split-K decode (the registry's switch and chunk, as the Java kernel): the causal/window rule inside.
            float[] o = splitKDecode(b, hq, call.kvHeads(), call.tk(), d, q.toFloatArray(), k.toFloatArray(),
                    v.toFloatArray(), call.sink(), null, new int[] {1, 1}, true, window);
            DispatchTrace.last().sinksSplitChunks = DispatchRegistry.splitChunks(call.tk());
            return Tensor.of(o, q.dtype(), q.device(), b, hq, tq, d);
        }
        DeviceBuffer qb = DeviceBuffer.input("q", q.toFloatArray());
        DeviceBuffer kb = DeviceBuffer.input("k", k.toFloatArray());
        DeviceBuffer vb = DeviceBuffer.input("v", v.toFloatArray());
        DeviceBuffer sb = DeviceBuffer.input("sinks", call.sink());
        DeviceBuffer out = DeviceBuffer.output("out", b * hq * tq * d);
        DeviceBuffer status = DeviceBuffer.status();
        // The mask goes to the kernel as given: refusing it is the kernel's job (and S3 checks that it does).
        KernelArg maskArg;
        if (mask == null) {
            maskArg = dialect == Dialect.CUDA ? new KernelArg.Null() : KernelArg.of(DeviceBuffer.input("mask", new float[1]));
        } else {
            maskArg = KernelArg.of(DeviceBuffer.input("mask", mask.toFloatArray()));
        }
        int[] grid = {ceilDiv(tq, BLOCK_Q), hq, b};
        int[] block = {FUSED_THREADS, 1, 1};
        List<KernelArg> args = new ArrayList<>(List.of(KernelArg.of(qb), KernelArg.of(kb), KernelArg.of(vb),
                KernelArg.of(sb), maskArg, KernelArg.of(out), KernelArg.of(status)));
        if (dialect == Dialect.CUDA) {
            args.addAll(List.of(KernelArg.i32(b), KernelArg.i32(hq), KernelArg.i32(call.kvHeads()), KernelArg.i32(tq),
                    KernelArg.i32(call.tk()), KernelArg.i32(d), KernelArg.i32(window), KernelArg.f32(scale(d))));
        } else {
            args.add(new KernelArg.Params(new Params(b, hq, call.kvHeads(), tq, call.tk(), d, window, mask != null, 0,
                    0, 1, 1, 1, false, scale(d)).words()));
        }
        runner.run(List.of(new KernelLaunch(dialect.fused, grid, block, args)));
        switch (status.ints()[0]) {
            case STATUS_OK -> {
            }
            case STATUS_MASK_REFUSED -> refuseMask(mask, "(status " + STATUS_MASK_REFUSED + ")");
            case STATUS_HEAD_DIM -> Require.that(false, "head_dim", d, "be in " + dialect.fused + "'s envelope "
                    + dialect.envelope() + " (the " + lane + " kernel refused it, status " + STATUS_HEAD_DIM + ")");
            default -> badStatus(dialect.fused, status.ints()[0]);
        }
        return Tensor.of(out.floats(), q.dtype(), q.device(), b, hq, tq, d);
    }

    Tensor sinksAttnVarlen(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuSeqlensQ, int[] cuSeqlensK, int window) {
        SinksCall.checkPacked(q, k, v, window);
        int hq = q.dim(1);
        int d = q.dim(2);
        int hkv = k.dim(1);
        onLane(q);
        float[] sink = SinksCall.sinkValues(sinks, q);
        CuSeqlens cu = CuSeqlens.of(cuSeqlensQ, cuSeqlensK, q.dim(0), k.dim(0));
        int nseq = cu.sequences();
        int maxQ = cu.maxQ();
        if (nseq == 0 || maxQ == 0) {
            return Tensor.of(new float[nseq * hq * maxQ * d], q.dtype(), q.device(), nseq, hq, maxQ, d);
        }
        if (d > dialect.maxHeadDim) {
            DispatchTrace.last().varlenKernel = "unfused-by-rows";
            return varlenByRows(q, k, v, sinks, cu, window);
        }
        DispatchTrace.last().varlenKernel = dialect.varlen;
        DeviceBuffer out = DeviceBuffer.output("out", nseq * hq * maxQ * d);
        DeviceBuffer status = DeviceBuffer.status();
        List<KernelArg> args = new ArrayList<>(List.of(KernelArg.of(DeviceBuffer.input("q", q.toFloatArray())),
                KernelArg.of(DeviceBuffer.input("k", k.toFloatArray())),
                KernelArg.of(DeviceBuffer.input("v", v.toFloatArray())), KernelArg.of(DeviceBuffer.input("sinks", sink)),
                KernelArg.of(DeviceBuffer.input("cu_seqlens_q", cuSeqlensQ.clone())),
                KernelArg.of(DeviceBuffer.input("cu_seqlens_k", cuSeqlensK.clone())), KernelArg.of(out),
                KernelArg.of(status)));
        if (dialect == Dialect.CUDA) {
            args.addAll(List.of(KernelArg.i32(nseq), KernelArg.i32(maxQ), KernelArg.i32(hq), KernelArg.i32(hkv),
                    KernelArg.i32(d), KernelArg.i32(window), KernelArg.f32(scale(d))));
        } else {
            args.add(new KernelArg.Params(new Params(0, hq, hkv, 0, 0, d, window, false, nseq, maxQ, 1, 1, 1, false,
                    scale(d)).words()));
        }
        runner.run(List.of(new KernelLaunch(dialect.varlen, new int[] {ceilDiv(maxQ, BLOCK_Q), hq, nseq},
                new int[] {FUSED_THREADS, 1, 1}, args)));
        switch (status.ints()[0]) {
            case STATUS_OK -> {
            }
            case STATUS_BAD_SEQLENS -> Require.that(false, "cu_seqlens", Arrays.toString(cuSeqlensQ) + " / "
                    + Arrays.toString(cuSeqlensK), "give every sequence 0 <= q_len <= max_q (the " + lane
                    + " kernel refused them, status " + STATUS_BAD_SEQLENS + ")");
            default -> badStatus(dialect.varlen, status.ints()[0]);
        }
        return Tensor.of(out.floats(), q.dtype(), q.device(), nseq, hq, maxQ, d);
    }

    Tensor sinksAttnUnfused(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        Tensor m = call.mask4(mask, q);
        onLane(q);
        float[] out = unfused(call.batch(), call.queryHeads(), call.kvHeads(), call.tq(), call.tk(), call.headDim(),
                q.toFloatArray(), k.toFloatArray(), v.toFloatArray(), call.sink(), m, true, window);
        return Tensor.of(out, q.dtype(), q.device(), call.batch(), call.queryHeads(), call.tq(), call.headDim());
    }

    float[] attendMasked(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink) {
        Require.present("q", q);
        Require.present("keys", keys);
        Require.present("values", values);
        Require.present("mask", mask);
        Require.that(q.rank() == 4, "q.rank", q.rank(), "be 4 [B, H, t_q, D]");
        int b = q.dim(0);
        int h = q.dim(1);
        int tq = q.dim(2);
        int d = q.dim(3);
        Require.that(keys.rank() == 4 && keys.dim(0) == b && keys.dim(1) == 1 && keys.dim(3) == d, "keys.shape",
                keys.shape(), "be [" + b + ", 1, n, " + d + "]");
        int n = keys.dim(2);
        Require.that(Arrays.equals(values.shape(), keys.shape()), "values.shape", values.shape(),
                "equal keys.shape " + Arrays.toString(keys.shape()));
        int[] ms = mask.shape();
        Require.that(ms.length == 4 && (ms[0] == 1 || ms[0] == b) && (ms[1] == 1 || ms[1] == h) && ms[2] == tq
                && ms[3] == n, "mask.shape", ms, "be [" + b + "|1, " + h + "|1, " + tq + ", " + n + "]");
        float[] s = new float[h];
        if (sink == null) {
            Arrays.fill(s, Float.NEGATIVE_INFINITY);
        } else {
            Require.that(sink.length == h, "sink.length", sink.length, "equal the heads " + h);
            System.arraycopy(sink, 0, s, 0, h);
        }
        DispatchTrace.last().unionSplitRows = 0;
        if (DispatchRegistry.splitK(tq, n) && tq == 1 && d <= dialect.maxHeadDim) {
            float[] m = checkedMask(mask);
            if (DispatchRegistry.splitK(tq, mostAdmitted(m, n))) {
                // The union decode through the split-K kernels, its composed mask applied inside (no causal rule).
                float[] o = splitKDecode(b, h, 1, n, d, q.toFloatArray(), keys.toFloatArray(), values.toFloatArray(),
                        s, m, new int[] {ms[0], ms[1]}, false, 0);
                DispatchTrace.last().unionSplitRows = b * h;
                return o;
            }
        }
        return unfused(b, h, 1, tq, n, d, q.toFloatArray(), keys.toFloatArray(), values.toFloatArray(), s, mask,
                false, 0);
    }

    /** The most keys one row of a single-query mask ({@code rows} rows of {@code n} columns) admits (not -inf). */
    private static int mostAdmitted(float[] mask, int n) {
        int most = 0;
        for (int r = 0; r < mask.length / n; r++) {
            int admitted = 0;
            for (int c = 0; c < n; c++) {
                admitted += mask[r * n + c] == Float.NEGATIVE_INFINITY ? 0 : 1;
            }
            most = Math.max(most, admitted);
        }
        return most;
    }

    /**
     * Split-K (two-pass) decode of one query row per (b, h) over {@code tk} keys: {@code sinks_decode_splitk_partial}
     * gives each chunk of {@link DispatchRegistry#SPLIT_K_CHUNK} keys its max, sum of exponentials and unnormalised
     * P.V, {@code sinks_decode_splitk_reduce} combines them with the sink entering once. {@code mask} is null or
     * {@code [md[0], md[1], 1, tk]}; {@code causal} applies the fused kernels' rule with {@code window}. Returns
     * {@code [B, Hq, 1, D]}.
     */
    private float[] splitKDecode(int b, int hq, int hkv, int tk, int d, float[] q, float[] k, float[] v, float[] sink,
            float[] mask, int[] md, boolean causal, int window) {
        int chunks = DispatchRegistry.splitChunks(tk);
        long partLong = (long) b * hq * chunks * (d + 2);
        int partLen = Require.arrayLength("B*Hq*chunks*(D+2)", partLong, "fit one device buffer");
        DeviceBuffer part = DeviceBuffer.scratch("part", partLen);
        DeviceBuffer out = DeviceBuffer.output("out", b * hq * d);
        DeviceBuffer status = DeviceBuffer.status();
        DeviceBuffer sb = DeviceBuffer.input("sinks", sink);
        KernelArg maskArg = maskArg(mask);
        int threads = DispatchRegistry.NATIVE_SPLIT_K_THREADS;
        List<KernelArg> partial = new ArrayList<>(List.of(KernelArg.of(DeviceBuffer.input("q", q)),
                KernelArg.of(DeviceBuffer.input("k", k)), KernelArg.of(DeviceBuffer.input("v", v)), maskArg,
                KernelArg.of(part), KernelArg.of(status)));
        List<KernelArg> reduce = new ArrayList<>(List.of(KernelArg.of(part), KernelArg.of(sb), KernelArg.of(out),
                KernelArg.of(status)));
        if (dialect == Dialect.CUDA) {
            partial.addAll(List.of(KernelArg.i32(b), KernelArg.i32(hq), KernelArg.i32(hkv), KernelArg.i32(tk),
                    KernelArg.i32(d), KernelArg.i32(md[0]), KernelArg.i32(md[1]), KernelArg.i32(causal ? 1 : 0),
                    KernelArg.i32(window), KernelArg.f32(scale(d))));
            reduce.addAll(List.of(KernelArg.i32(b), KernelArg.i32(hq), KernelArg.i32(chunks), KernelArg.i32(d)));
        } else {
            partial.add(new KernelArg.Params(new Params(b, hq, hkv, 1, tk, d, window, mask != null, 0, 0, md[0], md[1],
                    1, causal, scale(d)).words()));
            reduce.add(new KernelArg.Params(new Params(b, hq, hkv, 1, tk, d, 0, false, 0, 0, 1, 1, 1, false, scale(d),
                    chunks).words()));
        }
        runner.run(List.of(new KernelLaunch(dialect.splitPartial, new int[] {chunks, hq, b},
                new int[] {threads, 1, 1}, partial),
                new KernelLaunch(dialect.splitReduce, new int[] {1, hq, b}, new int[] {threads, 1, 1}, reduce)));
        switch (status.ints()[0]) {
            case STATUS_OK -> {
            }
            case STATUS_HEAD_DIM -> Require.that(false, "head_dim", d, "be at most " + dialect.maxHeadDim + " for "
                    + dialect.splitPartial + " (the " + lane + " kernel refused it, status " + STATUS_HEAD_DIM + ")");
            default -> badStatus(dialect.splitPartial + "/" + dialect.splitReduce, status.ints()[0]);
        }
        return out.floats();
    }

    Tensor softmaxWithSinks(Tensor logits, Tensor sinks, Tensor mask) {
        Require.present("logits", logits);
        Require.that(logits.rank() == 4, "logits.rank", logits.rank(), "be 4 [b, h, q, k]");
        int b = logits.dim(0);
        int h = logits.dim(1);
        int q = logits.dim(2);
        int k = logits.dim(3);
        float[] sink = SoftmaxWithSinks.sinkValues(sinks, h);
        int[] md = {1, 1, 1};
        if (mask != null) {
            int[] ms = mask.shape();
            Require.that(mask.rank() == 4, "mask.rank", mask.rank(), "be 4 [b|1, h|1, q|1, k]");
            Require.that((ms[0] == 1 || ms[0] == b) && (ms[1] == 1 || ms[1] == h) && (ms[2] == 1 || ms[2] == q)
                    && ms[3] == k, "mask.shape", ms, "broadcast to logits shape " + Arrays.toString(logits.shape()));
            md = new int[] {ms[0], ms[1], ms[2]};
        }
        onLane(logits);
        if (b * h * q * k == 0) {
            return Tensor.of(new float[b * h * q * k], logits.dtype(), logits.device(), logits.shape());
        }
        DeviceBuffer probs = DeviceBuffer.output("probs", b * h * q * k);
        KernelArg maskArg = maskArg(mask == null ? null : checkedMask(mask));
        List<KernelArg> args = new ArrayList<>(List.of(KernelArg.of(DeviceBuffer.input("logits", logits.toFloatArray())),
                KernelArg.of(DeviceBuffer.input("sinks", sink)), maskArg, KernelArg.of(probs)));
        if (dialect == Dialect.CUDA) {
            args.addAll(List.of(KernelArg.i32(b), KernelArg.i32(h), KernelArg.i32(q), KernelArg.i32(k),
                    KernelArg.i32(md[0]), KernelArg.i32(md[1]), KernelArg.i32(md[2])));
        } else {
            args.add(new KernelArg.Params(new Params(b, h, 1, q, k, 1, 0, mask != null, 0, 0, md[0], md[1], md[2],
                    false, 1f).words()));
        }
        runner.run(List.of(KernelLaunch.linear(dialect.softmax, blocks(b * (long) h * q), LINEAR_THREADS,
                args.toArray(KernelArg[]::new))));
        return Tensor.of(probs.floats(), logits.dtype(), logits.device(), logits.shape());
    }

    /**
     * The most score elements one pass of the unfused kernels holds ({@code scores} and {@code probs} are each at most
     * this long, 16 MiB of f32): a call whose {@code B * Hq * t_q * t_k} is larger runs in query-row chunks.
     */
    static final long SCORES_BOUND = 1L << 22;

    /**
     * The three unfused kernels (scores and probabilities stay on the device): {@code mask} is null or
     * {@code [B|1, Hq|1, tq|1, tk]}; {@code causal} adds the fused kernels' bottom-right rule with {@code window}.
     * Memory is bounded: the queries run in chunks of rows whose score buffer holds at most {@link #SCORES_BOUND}
     * elements (never a {@code B * Hq * t_q * t_k} array); with {@code causal} a chunk ending at row {@code r1} reads
     * only the first {@code t_k - (t_q - r1)} keys (the later ones lie past every row's diagonal), handed to the
     * kernels as a shorter {@code t_k}, which keeps each row's diagonal where it was. Each row's result is the same
     * sequence of operations either way: a chunked call gives the bits of one pass.
     */
    private float[] unfused(int b, int hq, int hkv, int tq, int tk, int d, float[] q, float[] k, float[] v,
            float[] sink, Tensor mask, boolean causal, int window) {
        return unfused(b, hq, hkv, tq, tk, d, q, k, v, sink, mask, causal, window, SCORES_BOUND);
    }

    /** {@link #unfused} with chunks of at most {@code bound} score elements (a test hook: small bounds). */
    float[] unfused(int b, int hq, int hkv, int tq, int tk, int d, float[] q, float[] k, float[] v,
            float[] sink, Tensor mask, boolean causal, int window, long bound) {
        int outLen = b * hq * tq * d;
        if (outLen == 0) {
            return new float[0];
        }
        int[] md = mask == null ? new int[] {1, 1, 1} : new int[] {mask.dim(0), mask.dim(1), mask.dim(2)};
        float[] maskValues = mask == null ? null : checkedMask(mask);
        long perRow = (long) b * hq * tk;
        if (perRow * tq <= bound) {
            return unfusedPass(b, hq, hkv, tq, tk, d, q, k, v, sink, maskValues, md, causal, window);
        }
        int rows = (int) Math.max(1, Math.min(tq, bound / Math.max(1, perRow)));
        Require.arrayLength("B*Hq*t_k", perRow, "fit one device buffer (one query row)");
        float[] out = new float[outLen];
        for (int r0 = 0; r0 < tq; r0 += rows) {
            int r1 = Math.min(tq, r0 + rows);
            int n = r1 - r0;
            int keys = causal ? tk - (tq - r1) : tk;
            if (keys <= 0) {
                continue; // every row of the chunk sits before the first key: no key admitted, zeros
            }
            float[] qc = slice(q, b * hq, tq, d, r0, n, d);
            float[] kc = keys == tk ? k : slice(k, b * hkv, tk, d, 0, keys, d);
            float[] vc = keys == tk ? v : slice(v, b * hkv, tk, d, 0, keys, d);
            float[] mc = null;
            int[] mdc = md;
            if (maskValues != null) {
                boolean perRowMask = md[2] > 1;
                mc = sliceMask(maskValues, md[0] * md[1], md[2], tk, perRowMask ? r0 : 0, perRowMask ? n : 1, keys);
                mdc = new int[] {md[0], md[1], perRowMask ? n : 1};
            }
            float[] o = unfusedPass(b, hq, hkv, n, keys, d, qc, kc, vc, sink, mc, mdc, causal, window);
            for (int bh = 0; bh < b * hq; bh++) {
                System.arraycopy(o, bh * n * d, out, (bh * tq + r0) * d, n * d);
            }
        }
        return out;
    }

    /** Rows {@code [r0, r0 + n)} (of {@code rows}, each {@code width} wide) of each of {@code groups} groups. */
    private static float[] slice(float[] x, int groups, int rows, int width, int r0, int n, int keep) {
        float[] out = new float[groups * n * keep];
        for (int g = 0; g < groups; g++) {
            for (int r = 0; r < n; r++) {
                System.arraycopy(x, (g * rows + r0 + r) * width, out, (g * n + r) * keep, keep);
            }
        }
        return out;
    }

    /** The mask's rows {@code [r0, r0 + n)} and first {@code keys} columns. */
    private static float[] sliceMask(float[] m, int groups, int rows, int tk, int r0, int n, int keys) {
        float[] out = new float[groups * n * keys];
        for (int g = 0; g < groups; g++) {
            for (int r = 0; r < n; r++) {
                System.arraycopy(m, (int) (((long) g * rows + r0 + r) * tk), out, (g * n + r) * keys, keys);
            }
        }
        return out;
    }

    /** One pass of the three kernels over all of {@code q}'s rows. */
    private float[] unfusedPass(int b, int hq, int hkv, int tq, int tk, int d, float[] q, float[] k, float[] v,
            float[] sink, float[] maskValues, int[] md, boolean causal, int window) {
        long scoresLong = (long) b * hq * tq * tk;
        int scoresLen = Require.arrayLength("B*Hq*t_q*t_k", scoresLong, "fit one device buffer");
        int outLen = b * hq * tq * d;
        DeviceBuffer qb = DeviceBuffer.input("q", q);
        DeviceBuffer kb = DeviceBuffer.input("k", k);
        DeviceBuffer vb = DeviceBuffer.input("v", v);
        DeviceBuffer sb = DeviceBuffer.input("sinks", sink);
        KernelArg maskArg = maskArg(maskValues);
        DeviceBuffer scores = DeviceBuffer.scratch("scores", scoresLen);
        DeviceBuffer probs = DeviceBuffer.scratch("probs", scoresLen);
        DeviceBuffer out = DeviceBuffer.output("out", outLen);
        KernelArg noMask = maskArg(null);
        List<KernelLaunch> launches;
        if (dialect == Dialect.CUDA) {
            launches = List.of(
                    KernelLaunch.linear(dialect.scores, blocks(scoresLong), LINEAR_THREADS, KernelArg.of(qb),
                            KernelArg.of(kb), maskArg, KernelArg.of(scores), KernelArg.i32(b), KernelArg.i32(hq),
                            KernelArg.i32(hkv), KernelArg.i32(tq), KernelArg.i32(tk), KernelArg.i32(d),
                            KernelArg.i32(md[0]), KernelArg.i32(md[1]), KernelArg.i32(md[2]),
                            KernelArg.i32(causal ? 1 : 0), KernelArg.i32(window), KernelArg.f32(scale(d))),
                    KernelLaunch.linear(dialect.softmax, blocks((long) b * hq * tq), LINEAR_THREADS,
                            KernelArg.of(scores), KernelArg.of(sb), noMask, KernelArg.of(probs), KernelArg.i32(b),
                            KernelArg.i32(hq), KernelArg.i32(tq), KernelArg.i32(tk), KernelArg.i32(1),
                            KernelArg.i32(1), KernelArg.i32(1)),
                    KernelLaunch.linear(dialect.pv, blocks(outLen), LINEAR_THREADS, KernelArg.of(probs),
                            KernelArg.of(scores), KernelArg.of(vb), KernelArg.of(out), KernelArg.i32(b),
                            KernelArg.i32(hq), KernelArg.i32(hkv), KernelArg.i32(tq), KernelArg.i32(tk),
                            KernelArg.i32(d)));
        } else {
            int[] withMask = new Params(b, hq, hkv, tq, tk, d, window, maskValues != null, 0, 0, md[0], md[1], md[2], causal,
                    scale(d)).words();
            int[] plain = new Params(b, hq, hkv, tq, tk, d, window, false, 0, 0, 1, 1, 1, causal, scale(d)).words();
            launches = List.of(
                    KernelLaunch.linear(dialect.scores, blocks(scoresLong), LINEAR_THREADS, KernelArg.of(qb),
                            KernelArg.of(kb), maskArg, KernelArg.of(scores), new KernelArg.Params(withMask)),
                    KernelLaunch.linear(dialect.softmax, blocks((long) b * hq * tq), LINEAR_THREADS,
                            KernelArg.of(scores), KernelArg.of(sb), noMask, KernelArg.of(probs),
                            new KernelArg.Params(plain)),
                    KernelLaunch.linear(dialect.pv, blocks(outLen), LINEAR_THREADS, KernelArg.of(probs),
                            KernelArg.of(scores), KernelArg.of(vb), KernelArg.of(out), new KernelArg.Params(plain)));
        }
        runner.run(launches);
        return out.floats();
    }

    /** Packed sequences whose head dim exceeds the varlen kernel's: each one through the unfused kernels. */
    private Tensor varlenByRows(Tensor q, Tensor k, Tensor v, Tensor sinks, CuSeqlens cu, int window) {
        int hq = q.dim(1);
        int hkv = k.dim(1);
        int d = q.dim(2);
        int maxQ = cu.maxQ();
        float[] qa = q.toFloatArray();
        float[] ka = k.toFloatArray();
        float[] va = v.toFloatArray();
        float[] sink = SinksCall.sinkValues(sinks, q);
        float[] out = new float[cu.sequences() * hq * maxQ * d];
        for (int i = 0; i < cu.sequences(); i++) {
            int qLen = cu.qLen(i);
            int kvLen = cu.kvLen(i);
            if (qLen == 0) {
                continue;
            }
            float[] o = unfused(1, hq, hkv, qLen, kvLen, d, unpack(qa, cu.q()[i], qLen, hq, d),
                    unpack(ka, cu.k()[i], kvLen, hkv, d), unpack(va, cu.k()[i], kvLen, hkv, d), sink, null, true,
                    window);
            for (int h = 0; h < hq; h++) {
                System.arraycopy(o, h * qLen * d, out, ((i * hq + h) * maxQ) * d, qLen * d);
            }
        }
        return Tensor.of(out, q.dtype(), q.device(), cu.sequences(), hq, maxQ, d);
    }

    private static float[] unpack(float[] packed, int start, int len, int h, int d) {
        float[] out = new float[h * len * d];
        for (int t = 0; t < len; t++) {
            for (int hi = 0; hi < h; hi++) {
                System.arraycopy(packed, ((start + t) * h + hi) * d, out, (hi * len + t) * d, d);
            }
        }
        return out;
    }

    /** The mask's values, refused like the Java path refuses them: NaN and +inf are not additive masks. */
    private static float[] checkedMask(Tensor mask) {
        float[] m = mask.toFloatArray();
        for (float x : m) {
            Require.that(!Float.isNaN(x) && x != Float.POSITIVE_INFINITY, "mask value", x, "be finite or -inf");
        }
        return m;
    }

    private KernelArg maskArg(float[] mask) {
        if (mask != null) {
            return KernelArg.of(DeviceBuffer.input("mask", mask));
        }
        return dialect == Dialect.CUDA ? new KernelArg.Null() : KernelArg.of(DeviceBuffer.input("mask", new float[1]));
    }

    private int blocks(long work) {
        long wanted = Math.max(1, (work + LINEAR_THREADS - 1) / LINEAR_THREADS);
        return (int) Math.min(wanted, runner.gridStrideBlocks());
    }

    private void refuseMask(Tensor mask, String how) {
        Require.that(false, "mask", mask, "be null: " + dialect.fused + " applies causality and the window itself"
                + " and cannot honour a caller mask; the " + lane + " kernel refused it at its interface " + how);
    }

    private void badStatus(String kernel, int status) {
        throw new NativeKernelException(lane, kernel, status == STATUS_LAUNCH_CONFIG ? "STATUS_LAUNCH_CONFIG"
                : "STATUS_" + status, "the kernel rejected its launch configuration or arguments");
    }

    private void onLane(Tensor t) {
        Require.that(t.device().kind() == device.kind(), "q.device", t.device(),
                "be a " + device.kind().name().toLowerCase(java.util.Locale.ROOT) + " device for the " + lane
                + " backend");
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }
}
