package io.attnproof.attention.sinks;

import io.attnproof.attention.Require;
import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.dispatch.SinksArm;
import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.engine.SinksCall;
import io.attnproof.attention.engine.UnfusedSinks;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
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
        return backend.fusedSinks(SinksDispatch.kernelFor(arm, call.tq(), call.headDim()), q, k, v, sinks, window);
    }

    /** The arm {@code sinks_attn} picks for these tensors. */
    public static SinksArm armFor(Tensor q, Tensor mask, boolean flash512) {
        Require.present("q", q);
        Require.that(q.rank() == 4, "q.rank", q.rank(), "be 4 [B, Hq, t_q, D]");
        return SinksDispatch.choose(q.device().kind(), q.dim(0), q.dim(3), mask != null, flash512);
    }

    /** {@code sinks_attn_cpu}: {@link UnfusedSinks#sinksAttnCpu}. */
    public static Tensor sinksAttnCpu(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        return UnfusedSinks.sinksAttnCpu(q, k, v, sinks, mask, window);
    }

    /** {@code sinks_attn_cpu_varlen}: {@link UnfusedSinks#sinksAttnCpuVarlen}. */
    public static Tensor sinksAttnCpuVarlen(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuSeqlensQ,
            int[] cuSeqlensK, int window) {
        return UnfusedSinks.sinksAttnCpuVarlen(q, k, v, sinks, cuSeqlensQ, cuSeqlensK, window);
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
