package io.attnproof.attention.sinks;

import io.attnproof.attention.Require;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.backend.Cpu;
import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.mask.VarlenCausalMask;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code sinks_attn(q, k, v, sinks, mask, window)} (docs/system.md §8): GQA sinks attention with bottom-right-aligned
 * causality and an optional sliding window ({@code window} 0: none), dispatched by {@link SinksDispatch} so that a
 * caller mask is never handed to, or dropped by, a fused kernel. {@code q[B,Hq,tq,D]}, {@code k, v[B,Hkv,tk,D]},
 * sinks {@code [Hq]}, mask {@code [tq, tk]} or {@code [B|1, Hq|1, tq|1, tk]}; returns {@code [B,Hq,tq,D]}.
 */
public final class SinksAttention {
    /** The name of the logger the mask warning goes to. */
    public static final String LOGGER_NAME = SinksAttention.class.getName();

    private static final AtomicBoolean MASK_WARNED = new AtomicBoolean();
    private static volatile System.Logger logger = System.getLogger(LOGGER_NAME);

    private SinksAttention() {
    }

    /** {@code sinks_attn} with {@code ARC_FLASH_512} as read from the environment. */
    public static Tensor sinksAttn(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        return sinksAttn(q, k, v, sinks, mask, window, SinksDispatch.flash512FromEnvironment());
    }

    /** {@code sinks_attn} with the {@code ARC_FLASH_512} setting given, on the CPU lane (the Java kernels). */
    public static Tensor sinksAttn(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window,
            boolean flash512) {
        return sinksAttn(Backend.cpu(), q, k, v, sinks, mask, window, flash512);
    }

    /**
     * {@code sinks_attn} on {@code backend}: the dispatch decides for the backend's device family (on the CPU lane,
     * q's own device), and the chosen arm runs on that lane — its varlen form, its fused kernel (which never sees a
     * mask), or its unfused path.
     */
    public static Tensor sinksAttn(Backend backend, Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask,
            int window, boolean flash512) {
        Require.present("backend", backend);
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        call.mask4(mask, q);
        Device.Kind kind = backend.dispatchKind(q.device());
        if (SinksDispatch.maskForcesOffFused(kind, call.batch(), call.headDim(), mask != null, flash512)) {
            warnMaskForcedOffFused(q.device(), call.headDim());
        }
        SinksArm arm = SinksDispatch.choose(kind, call.batch(), call.headDim(), mask != null, flash512);
        DispatchTrace.Last trace = DispatchTrace.last();
        trace.sinksArm = arm.name();
        trace.sinksKernel = null;
        return switch (arm) {
            case VARLEN -> varlenDense(backend, call, q, k, v, sinks, window);
            case CUDA_FUSED, METAL_FUSED -> fused(backend, arm, call, q, k, v, sinks, window);
            case UNFUSED -> backend.sinksAttnUnfused(q, k, v, sinks, mask, window);
        };
    }

    /**
     * A fused arm: the kernel {@link SinksDispatch#kernelFor} names. The Java lane has the Metal decode kernel; a
     * native lane runs its one fused kernel of the family for both phases.
     */
    private static Tensor fused(Backend backend, SinksArm arm, SinksCall call, Tensor q, Tensor k, Tensor v,
            Tensor sinks, int window) {
        SinksKernel kernel = SinksDispatch.kernelFor(arm, call.tq(), call.headDim());
        if (kernel == SinksKernel.METAL_DECODE && backend instanceof Cpu) {
            DispatchTrace.last().sinksKernel = kernel.kernelName();
            return FusedSinksKernel.flashAttnSinksMetalDecode(q, k, v, sinks, null, window);
        }
        Tensor out = backend.flashAttnSinks(q, k, v, sinks, null, window);
        DispatchTrace.last().sinksKernel = arm == SinksArm.CUDA_FUSED ? SinksKernel.CUDA_FLASH.kernelName()
                : SinksKernel.METAL_PREFILL.kernelName();
        return out;
    }

    /** The arm {@code sinks_attn} picks for these tensors. */
    public static SinksArm armFor(Tensor q, Tensor mask, boolean flash512) {
        Require.present("q", q);
        Require.that(q.rank() == 4, "q.rank", q.rank(), "be 4 [B, Hq, t_q, D]");
        return SinksDispatch.choose(q.device().kind(), q.dim(0), q.dim(3), mask != null, flash512);
    }

    /**
     * {@code sinks_attn_cpu}, the unfused path on any device: scores, plus the fused kernels' causal/window rule
     * built as an additive mask, plus the caller's mask (-inf wins: a mask only ever removes keys or adds biases),
     * then softmax with sinks and PV. A caller mask that already encodes causality and the window (GPT-OSS's) adds
     * nothing the rule has not removed.
     */
    public static Tensor sinksAttnCpu(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        SinksCall call = SinksCall.of(q, k, v, sinks, window);
        Tensor caller = call.mask4(mask, q);
        float[] out = UnfusedSinks.attend(call, q.view(), k.view(), v.view(), window, caller);
        return Tensor.wrap(out, q.dtype(), q.device(), call.batch(), call.queryHeads(), call.tq(), call.headDim());
    }

    /**
     * {@code sinks_attn_cpu_varlen}: packed {@code q[totalQ, Hq, D]}, {@code k, v[totalK, Hkv, D]}; sequence i owns
     * query rows {@code [cuSeqlensQ[i], cuSeqlensQ[i+1])} and keys {@code [cuSeqlensK[i], cuSeqlensK[i+1])} and sees
     * them through {@code varlen_causal_mask(q_len, kv_len, window)} from the single-slot memo. Returns
     * {@code [sequences, Hq, max_q, D]}, rows past a sequence's q_len zero.
     */
    public static Tensor sinksAttnCpuVarlen(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuSeqlensQ,
            int[] cuSeqlensK, int window) {
        Require.present("q", q);
        Require.present("k", k);
        Require.present("v", v);
        Require.that(q.rank() == 3, "q.rank", q.rank(), "be 3 [total_q, Hq, D] (packed rows)");
        Require.that(k.rank() == 3, "k.rank", k.rank(), "be 3 [total_k, Hkv, D] (packed rows)");
        int hq = q.dim(1);
        int d = q.dim(2);
        int hkv = k.dim(1);
        Require.that(hq >= 1, "q.shape[1] (query heads)", hq, "be >= 1");
        Require.that(d >= 1, "q.shape[2] (head dim)", d, "be >= 1");
        Require.that(k.dim(2) == d, "k.shape", k.shape(), "be [total_k, Hkv, " + d + "] (q's head dim)");
        Require.that(hkv >= 1 && hq % hkv == 0, "k.shape[1] (KV heads)", hkv,
                "divide the query heads " + hq + " (GQA: Hq a multiple of Hkv)");
        Require.that(Arrays.equals(v.shape(), k.shape()), "v.shape", v.shape(),
                "equal k.shape " + Arrays.toString(k.shape()));
        for (Tensor t : new Tensor[] {k, v}) {
            Require.that(t.dtype() == q.dtype() && t.device().equals(q.device()), "k/v", t,
                    "share q's dtype " + q.dtype() + " and device " + q.device());
        }
        Require.nonNegative("window", window);
        float[] sink = SinksCall.sinkValues(sinks, q);
        CuSeqlens cu = CuSeqlens.of(cuSeqlensQ, cuSeqlensK, q.dim(0), k.dim(0));
        int maxQ = cu.maxQ();
        float[] qa = q.toFloatArray();
        float[] ka = k.toFloatArray();
        float[] va = v.toFloatArray();
        float[] out = new float[cu.sequences() * hq * maxQ * d];
        VarlenCausalMask.Memo memo = VarlenCausalMask.Memo.current();
        for (int i = 0; i < cu.sequences(); i++) {
            int qLen = cu.qLen(i);
            int kvLen = cu.kvLen(i);
            if (qLen == 0) {
                continue;
            }
            // The sequence's rule is the memo's mask, as consumed: the only rule this row sees.
            Tensor rule = memo.get(qLen, kvLen, window);
            SinksCall row = new SinksCall(1, hq, hkv, qLen, kvLen, d, sink);
            float[] o = UnfusedSinks.attend(row, unpack(qa, cu.q()[i], qLen, hq, d), unpack(ka, cu.k()[i], kvLen, hkv, d),
                    unpack(va, cu.k()[i], kvLen, hkv, d), -1, rule.reshape(1, 1, qLen, kvLen));
            for (int h = 0; h < hq; h++) {
                System.arraycopy(o, h * qLen * d, out, ((i * hq + h) * maxQ) * d, qLen * d);
            }
        }
        return Tensor.of(out, q.dtype(), q.device(), cu.sequences(), hq, maxQ, d);
    }

    /** A dense batch through the varlen path: every row packed with the same q_len and kv_len. */
    private static Tensor varlenDense(Backend backend, SinksCall call, Tensor q, Tensor k, Tensor v, Tensor sinks,
            int window) {
        int[] cuQ = new int[call.batch() + 1];
        int[] cuK = new int[call.batch() + 1];
        for (int b = 1; b <= call.batch(); b++) {
            cuQ[b] = b * call.tq();
            cuK[b] = b * call.tk();
        }
        return backend.sinksAttnVarlen(pack(q), pack(k), pack(v), sinks, cuQ, cuK, window);
    }

    /** {@code [B, H, T, D]} as packed rows {@code [B*T, H, D]}. */
    private static Tensor pack(Tensor x) {
        int b = x.dim(0);
        int h = x.dim(1);
        int t = x.dim(2);
        int d = x.dim(3);
        float[] src = x.toFloatArray();
        float[] dst = new float[src.length];
        for (int bi = 0; bi < b; bi++) {
            for (int hi = 0; hi < h; hi++) {
                for (int ti = 0; ti < t; ti++) {
                    System.arraycopy(src, ((bi * h + hi) * t + ti) * d, dst, ((bi * t + ti) * h + hi) * d, d);
                }
            }
        }
        return Tensor.of(dst, x.dtype(), x.device(), b * t, h, d);
    }

    /** Packed rows {@code [start, start+len)} of {@code [total, H, D]} as {@code [1, H, len, D]}. */
    private static java.lang.foreign.MemorySegment unpack(float[] packed, int start, int len, int h, int d) {
        float[] out = new float[h * len * d];
        for (int t = 0; t < len; t++) {
            for (int hi = 0; hi < h; hi++) {
                System.arraycopy(packed, ((start + t) * h + hi) * d, out, (hi * len + t) * d, d);
            }
        }
        return java.lang.foreign.MemorySegment.ofArray(out);
    }

    /** Warns, once per process, that a caller mask moved a GPU call off its fused kernel onto the unfused path. */
    private static void warnMaskForcedOffFused(Device device, int headDim) {
        if (MASK_WARNED.compareAndSet(false, true)) {
            String kernel = device.kind() == Device.Kind.METAL ? "flash_attn_sinks_metal" : "flash_attn_sinks";
            logger.log(System.Logger.Level.WARNING, "sinks_attn: a caller mask forces this " + device + " call"
                    + " (head_dim " + headDim + ") off the fused kernel " + kernel + " onto the unfused sinks_attn_cpu"
                    + " path, which materialises the full [B, H, q, k] scores: a deliberate performance loss, taken"
                    + " because a fused kernel cannot honour a mask. Further masked calls are not reported.");
        }
    }

    /** Test hook: re-arms the once-per-process mask warning. */
    static void resetMaskWarning() {
        MASK_WARNED.set(false);
    }

    /** Test hook: routes the mask warning to {@code replacement}; returns the logger it replaces. */
    static System.Logger useLogger(System.Logger replacement) {
        System.Logger previous = logger;
        logger = Require.present("logger", replacement);
        return previous;
    }
}
