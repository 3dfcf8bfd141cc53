package io.attnproof.attention.backend;

import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.dispatch.SinksKernel;
import io.attnproof.attention.engine.UnionStage;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.List;
import java.util.Optional;

/**
 * A lane the attention kernels run on: {@code cpu} (the Java kernels), {@code cuda-emu} and {@code metal-emu} (the
 * real kernel sources built as host C++ and loaded through the Foreign Function &amp; Memory API), {@code cuda}
 * (the same CUDA source as PTX through JCuda) and {@code metal} (the same MSL source compiled at run time through
 * Metal.framework). Every lane exposes the same sinks-attention operations; {@code sinks_attn}'s dispatch
 * ({@code SinksAttention.sinksAttn(Backend, ...)}) decides which one a call takes.
 *
 * <p>Tensors on a native lane carry the lane's device ({@link #device()}); their values travel to the device for
 * each call. A lane that cannot run here says why ({@link #unavailable()}, probed once and cached), and every
 * operation on it throws {@link LaneUnavailableException} with that reason.
 */
public sealed interface Backend permits Cpu, NativeBackend {

    /** The lane's name, as evidence lines carry it: {@code cpu}, {@code cuda-emu}, {@code metal-emu}, ... */
    String name();

    /** The device tensors on this lane are labelled with. */
    Device device();

    /** Why this lane cannot run on this machine; empty when it can. Probed once per process. */
    Optional<String> unavailable();

    /** The device family {@code sinks_attn}'s dispatch decides for, for a call whose q lives on {@code device}. */
    Device.Kind dispatchKind(Device device);

    /**
     * The lane's fused kernel ({@code flash_attn_sinks} on CUDA lanes, {@code flash_attn_sinks_metal} on Metal
     * lanes): {@code q[B,Hq,tq,D]}, {@code k, v[B,Hkv,tk,D]}, sinks {@code [Hq]}; bottom-right causality and the
     * window applied inside. A non-null {@code mask} is handed to the kernel, which refuses it.
     */
    Tensor flashAttnSinks(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window);

    /**
     * The varlen form over packed rows: {@code q[totalQ,Hq,D]}, {@code k, v[totalK,Hkv,D]}, sequence i owning rows
     * {@code [cuSeqlensQ[i], cuSeqlensQ[i+1])} and keys {@code [cuSeqlensK[i], cuSeqlensK[i+1])}; returns
     * {@code [sequences,Hq,max_q,D]} with rows past a sequence's q_len zero.
     */
    Tensor sinksAttnVarlen(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuSeqlensQ, int[] cuSeqlensK,
            int window);

    /**
     * The unfused path ({@code sinks_attn_cpu}'s math on this lane): scores, plus the causal/window rule, plus the
     * caller mask ({@code [tq,tk]} or {@code [B|1,Hq|1,tq|1,tk]}, may be null), softmax with sinks, times V.
     */
    Tensor sinksAttnUnfused(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window);

    /** {@code softmax_with_sinks(logits[b,h,q,k], sinks[h], mask)}, mask broadcast over b, h and q (may be null). */
    Tensor softmaxWithSinks(Tensor logits, Tensor sinks, Tensor mask);

    /**
     * Union attention's last stage: {@code q[B,H,tq,D]} against one shared K/V head {@code keys, values[B,1,n,D]}
     * under the additive {@code mask[B|1,H|1,tq,n]} (no rule of its own), softmax with {@code sink[H]} (null: none),
     * times V; returns {@code [B,H,tq,D]} row-major.
     */
    float[] attendMasked(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink);

    /**
     * Union attention's last stage on this lane: the stage's rows under its composed mask, softmax with its sink,
     * times V; returns {@code [B,H,tq,D]} row-major. The Java lane reads the rows in place under the admission rule;
     * a native lane hands its kernel the dense tensors and the composed additive mask.
     */
    float[] attendUnion(UnionStage stage);

    /**
     * A fused arm of {@code sinks_attn}: runs the fused kernel the dispatch {@code chosen} for this call, or the one
     * this lane has in its place (a native lane runs its family's one fused kernel for both phases), with no mask,
     * and records the kernel that ran in {@link DispatchTrace#last()}.
     */
    Tensor fusedSinks(SinksKernel chosen, Tensor q, Tensor k, Tensor v, Tensor sinks, int window);

    /** Throws {@link LaneUnavailableException} with the probe's reason unless this lane can run here. */
    default void requireAvailable() {
        Optional<String> reason = unavailable();
        if (reason.isPresent()) {
            throw new LaneUnavailableException(name(), reason.get());
        }
    }

    /** The Java lane. */
    static Cpu cpu() {
        return Cpu.INSTANCE;
    }

    /** The CUDA kernel source run through the emulation shim. */
    static CudaEmu cudaEmu() {
        return CudaEmu.INSTANCE;
    }

    /** The CUDA kernel source run through the emulation shim, built with FMA contraction on (as nvcc builds it). */
    static CudaEmu cudaEmuFma() {
        return CudaEmu.FMA;
    }

    /** The Metal kernel source run through the emulation shim. */
    static MetalEmu metalEmu() {
        return MetalEmu.INSTANCE;
    }

    /** The CUDA kernel source on an NVIDIA GPU (JCuda, PTX). */
    static Cuda cuda() {
        return Cuda.INSTANCE;
    }

    /** The Metal kernel source on an Apple GPU (Metal.framework through FFM). */
    static Metal metal() {
        return Metal.INSTANCE;
    }

    /** Every lane, in ledger order. */
    static List<Backend> all() {
        return List.of(cpu(), cudaEmu(), cudaEmuFma(), metalEmu(), cuda(), metal());
    }

    /** The lane called {@code name}. */
    static Backend named(String name) {
        for (Backend b : all()) {
            if (b.name().equals(name)) {
                return b;
            }
        }
        throw new IllegalArgumentException("backend = " + name + ": must be one of cpu, cuda-emu, cuda-emu-fma, metal-emu, cuda, metal");
    }
}
