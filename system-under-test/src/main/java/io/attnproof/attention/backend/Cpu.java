package io.attnproof.attention.backend;

import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.dispatch.SinksKernel;
import io.attnproof.attention.engine.FusedSinksKernel;
import io.attnproof.attention.engine.SoftmaxWithSinks;
import io.attnproof.attention.engine.UnfusedSinks;
import io.attnproof.attention.engine.UnionKernel;
import io.attnproof.attention.engine.UnionStage;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Optional;

/**
 * The Java lane, always available: the Java fused kernel plays the CUDA or Metal fused arm for tensors labelled with
 * that device (as it always has here), and the unfused and varlen paths are the Java ones.
 */
public final class Cpu implements Backend {
    static final Cpu INSTANCE = new Cpu();

    private Cpu() {
    }

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public Device device() {
        return Device.CPU;
    }

    @Override
    public Optional<String> unavailable() {
        return Optional.empty();
    }

    /** The tensors' own device: a CUDA- or Metal-labelled call takes that family's arms, run by the Java kernels. */
    @Override
    public Device.Kind dispatchKind(Device device) {
        return device.kind();
    }

    @Override
    public Tensor flashAttnSinks(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        return q != null && q.device().kind() == Device.Kind.METAL
                ? FusedSinksKernel.flashAttnSinksMetal(q, k, v, sinks, mask, window)
                : FusedSinksKernel.flashAttnSinks(q, k, v, sinks, mask, window);
    }

    @Override
    public Tensor sinksAttnVarlen(Tensor q, Tensor k, Tensor v, Tensor sinks, int[] cuSeqlensQ, int[] cuSeqlensK,
            int window) {
        return UnfusedSinks.sinksAttnCpuVarlen(q, k, v, sinks, cuSeqlensQ, cuSeqlensK, window);
    }

    @Override
    public Tensor sinksAttnUnfused(Tensor q, Tensor k, Tensor v, Tensor sinks, Tensor mask, int window) {
        return UnfusedSinks.sinksAttnCpu(q, k, v, sinks, mask, window);
    }

    @Override
    public Tensor softmaxWithSinks(Tensor logits, Tensor sinks, Tensor mask) {
        return SoftmaxWithSinks.apply(logits, sinks, mask);
    }

    @Override
    public float[] attendMasked(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink) {
        return UnionKernel.repeatKv(q, keys, values, mask, sink);
    }

    @Override
    public float[] attendUnion(UnionStage stage) {
        return UnionKernel.attend(stage);
    }

    /** The Java lane has every fused kernel the dispatch names, the Metal decode kernel included. */
    @Override
    public Tensor fusedSinks(SinksKernel chosen, Tensor q, Tensor k, Tensor v, Tensor sinks, int window) {
        DispatchTrace.last().sinksKernel = chosen.kernelName();
        return chosen == SinksKernel.METAL_DECODE
                ? FusedSinksKernel.flashAttnSinksMetalDecode(q, k, v, sinks, null, window)
                : flashAttnSinks(q, k, v, sinks, null, window);
    }

    @Override
    public String toString() {
        return name();
    }
}
