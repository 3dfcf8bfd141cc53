package io.attnproof.attention.engine;

import io.attnproof.attention.dispatch.DispatchTrace;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * The score / softmax-with-sink / PV of union attention in f32, on the engine {@link UnionLanes#engine()} picks (the
 * Vector API where present). Every query row is computed from its admitted keys alone, in their order, with the
 * arithmetic {@link UnionLanes} states; a column a row does not admit is never read for it, so padded slots may hold
 * anything. Both paths run that arithmetic on the same row groups (the H heads of one query position), so they agree
 * bit for bit: the absorbed-MQA decode makes the H heads the rows of one MQA head and reads each shared key once for
 * all of them; repeat-KV does so at every query position.
 */
public final class UnionKernel {
    private UnionKernel() {
    }

    /** The Java lane's last stage of union attention: the path's loops over the stage's in-place rows. */
    public static float[] attend(UnionStage stage) {
        Admission admitted = stage.admission();
        return stage.absorbed()
                ? absorbedMqa(stage.q(), stage.keys(), stage.values(), admitted, stage.sink())
                : repeatKv(stage.q(), stage.keys(), stage.values(), admitted, stage.sink());
    }

    /** Every query head against the single K/V head, at every position; {@code sink} null for none. */
    static float[] repeatKv(Tensor q, UnionRows keys, UnionRows values, Admission admitted, float[] sink) {
        float[] lanes = new float[q.dim(1)];
        for (int h = 0; h < lanes.length; h++) {
            lanes[h] = sink == null ? Float.NEGATIVE_INFINITY : sink[h];
        }
        return run(q, keys, values, admitted, lanes);
    }

    /** Decode ({@code tq == 1}, sinks present): the H query heads are the rows of one MQA head. */
    static float[] absorbedMqa(Tensor q, UnionRows keys, UnionRows values, Admission admitted, float[] sink) {
        float[] lanes = new float[q.dim(1)];
        for (int h = 0; h < lanes.length; h++) {
            lanes[h] = sink[h];
        }
        return run(q, keys, values, admitted, lanes);
    }

    /**
     * {@link #repeatKv(Tensor, UnionRows, UnionRows, Admission, float[])} with every column in one tensor
     * ({@code keys}, {@code values} {@code [B,1,n,D]}) and the admitted columns read from a dense additive mask
     * {@code [B|1, H|1, tq, n]}: the reference form a test builds by hand.
     */
    public static float[] repeatKv(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink) {
        return repeatKv(q, UnionRows.whole(keys), UnionRows.whole(values),
                Admission.dense(mask, q.dim(0), q.dim(1), q.dim(2), keys.dim(2)), sink);
    }

    /** {@link #absorbedMqa(Tensor, UnionRows, UnionRows, Admission, float[])} in the reference form. */
    static float[] absorbedMqa(Tensor q, Tensor keys, Tensor values, Tensor mask, float[] sink) {
        return absorbedMqa(q, UnionRows.whole(keys), UnionRows.whole(values),
                Admission.dense(mask, q.dim(0), q.dim(1), q.dim(2), keys.dim(2)), sink);
    }

    private static float[] run(Tensor q, UnionRows keys, UnionRows values, Admission admitted, float[] sinkLanes) {
        int batch = q.dim(0);
        int heads = q.dim(1);
        int tq = q.dim(2);
        int d = q.dim(3);
        float[] out = new float[batch * heads * tq * d];
        if (out.length == 0) {
            return out;
        }
        float scale = (float) (1.0 / Math.sqrt(d));
        UnionCall call = new UnionCall(q.view(), batch, heads, tq, d, scale, keys, values, admitted,
                Arrays.copyOf(sinkLanes, heads), out);
        DispatchTrace.Last trace = DispatchTrace.last();
        trace.unionEngine = UnionLanes.smallCall(call.macs()) ? "scalar-small-call" : "default";
        trace.unionParallel = UnionLanes.parallel(call.macs());
        trace.unionSplitRows = 0;
        if (SplitKDecode.applies(call)) {
            trace.unionSplitRows = SplitKDecode.run(call);
        } else {
            UnionLanes.forCall(call).run(call);
        }
        return out;
    }
}
