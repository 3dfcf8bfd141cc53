package io.attnproof.bench;

import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.Shape;

/**
 * PyTorch as a JVM user reaches it: DJL's PyTorch engine ({@code ai.djl.pytorch:pytorch-engine}, libtorch from the
 * {@code pytorch-native-cpu} jar on the class path, extracted into {@code ENGINE_CACHE_DIR}; bench/run and
 * {@link TorchBench} set {@code ai.djl.offline=true} and point the HTTP(S) proxies at a closed port, so the engine
 * cannot download anything). The same math as the Java path, as PyTorch ops in float32, written the way PyTorch is
 * written (the same steps as bench/numpy_union.py): one matmul for the scores of all heads against the shared K/V
 * head (or the query heads of one KV head), the materialised additive mask, the softmax with the sink column
 * ({@code m = max(sink, max_k s_k)}, {@code e^(s-m) / (sum e^(s-m) + e^(sink-m))}), one matmul with the values.
 */
public final class TorchPeer implements AutoCloseable {
    private final NDManager base;

    private TorchPeer(NDManager base) {
        this.base = base;
    }

    /** The PyTorch engine on the CPU. */
    public static TorchPeer open() {
        return new TorchPeer(NDManager.newBaseManager(Device.cpu(), "PyTorch"));
    }

    /** "PyTorch 2.7.1" as the engine reports itself. */
    public static String engine() {
        Engine e = Engine.getEngine("PyTorch");
        return e.getEngineName() + " " + e.getVersion();
    }

    /** An F32 array held by this peer. */
    public NDArray array(float[] values, long... shape) {
        return base.create(values, new Shape(shape));
    }

    /** A manager for one call's intermediates (closed after the call). */
    public NDManager call() {
        return base.newSubManager();
    }

    /**
     * dsv4_attention of a uniform batch: {@code q[B,H,tq,D]}, {@code k[B,tk,D]} (V = K) at absolute positions
     * {@code rawPrefix ..}, {@code c[B,tc,D]} compressed blocks (ratio {@code ratio}), sinks {@code [1,H,1,1]}.
     */
    public static NDArray union(NDManager m, NDArray q, NDArray k, NDArray c, NDArray sinks, int window, int ratio,
            int rawPrefix) {
        long b = q.getShape().get(0);
        long h = q.getShape().get(1);
        int tq = (int) q.getShape().get(2);
        long d = q.getShape().get(3);
        int tk = (int) k.getShape().get(1);
        int tc = c == null ? 0 : (int) c.getShape().get(1);
        int tkFull = rawPrefix + tk;
        int q0 = tkFull - tq;
        int keep = Math.min(tq + window - 1, tkFull);
        int base = tkFull - keep;
        NDArray raw = k.get(new NDIndex(":, {}:, :", base - rawPrefix));
        raw.attach(m);
        NDArray keys = tc > 0 ? raw.concat(c, 1) : raw; // [B, n, D]
        int n = keep + tc;
        float[] mask = new float[tq * n];
        for (int r = 0; r < tq; r++) {
            int p = q0 + r;
            for (int i = 0; i < keep; i++) {
                int j = base + i;
                mask[r * n + i] = p - window < j && j <= p ? 0f : Float.NEGATIVE_INFINITY;
            }
            for (int blk = 0; blk < tc; blk++) {
                mask[r * n + keep + blk] = blk < (p + 1) / ratio ? 0f : Float.NEGATIVE_INFINITY;
            }
        }
        NDArray additive = m.create(mask, new Shape(tq, n));
        NDArray scores = q.reshape(b, h * tq, d).matMul(keys.transpose(0, 2, 1)).reshape(b, h, tq, n)
                .mul((float) (1.0 / Math.sqrt(d))).add(additive);
        return softmaxPv(scores, sinks, p -> p.reshape(b, h * tq, n).matMul(keys).reshape(b, h, tq, d));
    }

    /**
     * GPT-OSS sinks attention: {@code q[B,Hq,T,D]}, {@code k, v[B,Hkv,T,D]} (query head h reads KV head
     * {@code h / (Hq/Hkv)}), bottom-right causal with a sliding window ({@code window} 0: none), sinks
     * {@code [1,Hq,1,1]}.
     */
    public static NDArray sinks(NDManager m, NDArray q, NDArray k, NDArray v, NDArray sinks, int window) {
        long b = q.getShape().get(0);
        long hq = q.getShape().get(1);
        int tq = (int) q.getShape().get(2);
        long d = q.getShape().get(3);
        long hkv = k.getShape().get(1);
        int tk = (int) k.getShape().get(2);
        long g = hq / hkv;
        float[] mask = new float[tq * tk];
        for (int r = 0; r < tq; r++) {
            long last = (long) r + tk - tq;
            for (int j = 0; j < tk; j++) {
                mask[r * tk + j] = j <= last && (window == 0 || j >= last - window + 1) ? 0f : Float.NEGATIVE_INFINITY;
            }
        }
        NDArray additive = m.create(mask, new Shape(tq, tk));
        NDArray scores = q.reshape(b, hkv, g * tq, d).matMul(k.transpose(0, 1, 3, 2)).reshape(b, hq, tq, tk)
                .mul((float) (1.0 / Math.sqrt(d))).add(additive);
        return softmaxPv(scores, sinks, p -> p.reshape(b, hkv, g * tq, tk).matMul(v).reshape(b, hq, tq, d));
    }

    /** Softmax over the last axis with the sink column in the denominator only, then {@code pv(p) / denominator}. */
    private static NDArray softmaxPv(NDArray scores, NDArray sinks, java.util.function.UnaryOperator<NDArray> pv) {
        NDArray m = scores.max(new int[] {3}, true).maximum(sinks);
        NDArray p = scores.sub(m).exp();
        NDArray denominator = p.sum(new int[] {3}, true).add(sinks.sub(m).exp());
        return pv.apply(p).div(denominator);
    }

    @Override
    public void close() {
        base.close();
    }
}
