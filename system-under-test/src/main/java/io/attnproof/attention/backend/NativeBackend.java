package io.attnproof.attention.backend;

import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.dispatch.SinksKernel;
import io.attnproof.attention.engine.UnionStage;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Optional;

/** A lane that runs the native kernel sources: every operation is its {@link NativeLane}'s; lanes differ only in it. */
public abstract sealed class NativeBackend implements Backend permits CudaEmu, MetalEmu, Cuda, Metal {
    private final NativeLane lane;

    NativeBackend(NativeLane lane) {
        this.lane = lane;
    }

    @Override
    public String name() {
        return lane.name();
    }

    @Override
    public Device device() {
        return lane.device();
    }

    @Override
    public Optional<String> unavailable() {
        return lane.unavailable();
    }

    @Override
    public Device.Kind dispatchKind(Device device) {
        return lane.dispatchKind();
    }

    @Override
    public Tensor flashAttnSinks(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        return lane.sinks().flashAttnSinks(q, k, v, sinks, mask, window);
    }

    @Override
    public Tensor sinksAttnVarlen(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuSeqlensQ, int[] cuSeqlensK,
            int window) {
        return lane.sinks().sinksAttnVarlen(q, k, v, sinks, cuSeqlensQ, cuSeqlensK, window);
    }

    @Override
    public Tensor sinksAttnUnfused(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        return lane.sinks().sinksAttnUnfused(q, k, v, sinks, mask, window);
    }

    @Override
    public Tensor softmaxWithSinks(Tensor logits, Tensor sinks, Tensor mask) {
        return lane.sinks().softmaxWithSinks(logits, sinks, mask);
    }

    @Override
    public float[] attendMasked(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink) {
        return lane.sinks().attendMasked(q, keys, values, mask, sink);
    }

    /** The dense form of the stage: its narrowed (and concatenated) K and V and the composed mask, on this lane. */
    @Override
    public float[] attendUnion(UnionStage stage) {
        Tensor keys = stage.denseKeys();
        Tensor values = stage.denseValues(keys);
        return attendMasked(on(stage.q()), on(keys), on(values), on(stage.composedMask()), stage.sink());
    }

    /** The family's one fused kernel, for both phases (the Metal decode kernel is the Java lane's alone). */
    @Override
    public Tensor fusedSinks(SinksKernel chosen, Tensor q, Tensor k, Tensor v, Tensor sinks, int window) {
        SinksKernel ran = chosen == SinksKernel.METAL_DECODE ? SinksKernel.METAL_PREFILL : chosen;
        Tensor out = flashAttnSinks(q, k, v, sinks, null, window);
        DispatchTrace.last().sinksKernel = ran.kernelName();
        return out;
    }

    /** {@code t}'s values labelled with this lane's device (a native lane refuses tensors of another family). */
    private Tensor on(Tensor t) {
        return t.device().kind() == device().kind() ? t
                : Tensor.of(t.toFloatArray(), t.dtype(), device(), t.shape());
    }

    /** The lane's kernel runner (test hooks for deliberately bad launches). */
    KernelRunner runner() {
        return lane.runner();
    }

    @Override
    public String toString() {
        return name();
    }
}
