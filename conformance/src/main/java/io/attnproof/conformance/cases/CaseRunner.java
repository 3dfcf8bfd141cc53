package io.attnproof.conformance.cases;

import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.sinks.SinksAttention;
import io.attnproof.attention.dispatch.SinksDispatch;
import io.attnproof.attention.tensor.Tensor;

/**
 * Runs the system under test on a case, on its own call path: union cases through {@code Dsv4Attention.attention}
 * (the path it picks), sinks cases through {@code SinksAttention.sinksAttn} (the arm its dispatch picks) or, for packed
 * varlen rows, the lane's {@code sinks_attn_cpu_varlen}.
 */
public final class CaseRunner {
    private CaseRunner() {
    }

    /**
     * The system's output {@code [B, H, tq, D]} in the case's dtype, on the CPU lane.
     *
     * @throws CaseException naming the case file and "config" when the system refuses the case
     */
    public static Tensor run(AttnCase c) {
        return run(c, Backend.cpu());
    }

    /**
     * The system's output of either kind of case on {@code lane}.
     *
     * @throws CaseException naming the case file and "config" when the system refuses the case
     * @throws io.attnproof.attention.backend.LaneUnavailableException when the lane cannot run here
     */
    public static Tensor run(AnyCase any, Backend lane) {
        lane.requireAvailable();
        try {
            return switch (any) {
                case AttnCase c -> Dsv4Attention.attention(c.q(), c.k(), c.v(), c.compressedKv(), c.mask(), c.sinks(),
                        c.config(), lane);
                case SinksCase c -> sinks(c, lane);
            };
        } catch (IllegalArgumentException e) {
            throw new CaseException(any.file(), "config", "the system under test refuses the case: " + e.getMessage());
        }
    }

    private static Tensor sinks(SinksCase c, Backend lane) {
        Tensor q = on(c.q(), lane);
        Tensor k = on(c.k(), lane);
        Tensor v = c.v() == c.k() ? k : on(c.v(), lane);
        Tensor s = on(c.sinks(), lane);
        if (c.varlen()) {
            return lane.sinksAttnVarlen(q, k, v, s, c.cuSeqlensQ(), c.cuSeqlensK(), c.window());
        }
        Tensor m = c.mask() == null ? null : on(c.mask(), lane);
        return SinksAttention.sinksAttn(lane, q, k, v, s, m, c.window(), SinksDispatch.flash512FromEnvironment());
    }

    private static Tensor on(Tensor t, Backend lane) {
        return t.device().equals(lane.device()) ? t : Tensor.of(t.toFloatArray(), t.dtype(), lane.device(), t.shape());
    }
}
