package io.attnproof.attention.dispatch;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.Device;
import java.util.Locale;
import java.util.Set;

/**
 * The decision of {@code sinks_attn} (docs/system.md §8) as a pure function of the call's facts, in order: varlen only
 * with no mask and B > 1; the CUDA fused arm only with no mask and head_dim in its envelope (512 behind
 * {@code ARC_FLASH_512}); the Metal fused arm only with no mask and head_dim in its envelope; else unfused.
 */
public final class SinksDispatch {
    /** Head dims both fused kernels are built for (the registry's). */
    public static final Set<Integer> FUSED_HEAD_DIMS = DispatchRegistry.FUSED_HEAD_DIMS;
    /** Head dims of the Metal single-query (decode) kernel (the registry's): no 112, no 192. */
    public static final Set<Integer> METAL_DECODE_HEAD_DIMS = DispatchRegistry.METAL_DECODE_HEAD_DIMS;
    /** The CUDA-only head dim behind the {@code ARC_FLASH_512} switch (the registry's). */
    public static final int FLASH_512_HEAD_DIM = DispatchRegistry.FLASH_512_HEAD_DIM;
    /** The environment variable that switches the CUDA head_dim-512 kernel. */
    public static final String ARC_FLASH_512 = "ARC_FLASH_512";

    private static final Set<String> OFF = Set.of("0", "false", "off", "no");

    private SinksDispatch() {
    }

    /** The arm for a call on a {@code kind} device with batch {@code batch} and {@code headDim}. */
    public static SinksArm choose(Device.Kind kind, int batch, int headDim, boolean hasMask, boolean flash512) {
        Require.present("device kind", kind);
        Require.that(batch >= 0, "B", batch, "be >= 0");
        Require.that(headDim >= 1, "head_dim", headDim, "be >= 1");
        if (!hasMask && batch >= DispatchRegistry.VARLEN_MIN_BATCH) {
            return SinksArm.VARLEN;
        }
        if (kind == Device.Kind.CUDA && !hasMask && cudaEnvelope(headDim, flash512)) {
            return SinksArm.CUDA_FUSED;
        }
        if (kind == Device.Kind.METAL && !hasMask && metalEnvelope(headDim)) {
            return SinksArm.METAL_FUSED;
        }
        return SinksArm.UNFUSED;
    }

    /**
     * The kernel a fused arm runs for a call with {@code tq} query rows (B4): the Metal arm has a single-query
     * (decode) kernel only for {@link #METAL_DECODE_HEAD_DIMS}; a single-query call at another head dim of the
     * prefill envelope (112, 192) takes the prefill kernel, never a missing decode kernel. The CUDA arm has one
     * kernel for both phases.
     */
    public static SinksKernel kernelFor(SinksArm arm, int tq, int headDim) {
        Require.present("arm", arm);
        Require.that(arm.fused(), "arm", arm, "be a fused arm (CUDA_FUSED or METAL_FUSED)");
        if (arm == SinksArm.CUDA_FUSED) {
            return SinksKernel.CUDA_FLASH;
        }
        return DispatchRegistry.singleQuery(tq) && METAL_DECODE_HEAD_DIMS.contains(headDim)
                ? SinksKernel.METAL_DECODE : SinksKernel.METAL_PREFILL;
    }

    /** Whether a caller mask is what keeps this call off a fused kernel: the same call without it would go fused. */
    public static boolean maskForcesOffFused(Device.Kind kind, int batch, int headDim, boolean hasMask,
            boolean flash512) {
        return hasMask && choose(kind, batch, headDim, false, flash512).fused();
    }

    /** {@code flash_attn_sinks}'s head dims: {@link #FUSED_HEAD_DIMS}, plus 512 when {@code flash512}. */
    public static boolean cudaEnvelope(int headDim, boolean flash512) {
        return FUSED_HEAD_DIMS.contains(headDim) || (flash512 && headDim == FLASH_512_HEAD_DIM);
    }

    /** {@code flash_attn_sinks_metal}'s head dims: {@link #FUSED_HEAD_DIMS}. */
    public static boolean metalEnvelope(int headDim) {
        return FUSED_HEAD_DIMS.contains(headDim);
    }

    /** The switch's value: off for {@code 0, false, off, no} (any case, trimmed), on otherwise and when unset. */
    public static boolean flash512Enabled(String value) {
        return value == null || !OFF.contains(value.strip().toLowerCase(Locale.ROOT));
    }

    /** {@code ARC_FLASH_512} as read from the environment once per process. */
    public static boolean flash512FromEnvironment() {
        return Flash512.ENABLED;
    }

    /** Holder: the environment is read on first use, then never again. */
    private static final class Flash512 {
        static final boolean ENABLED = flash512Enabled(System.getenv(ARC_FLASH_512));
    }
}
