package io.attnproof.attention.mask;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.Arrays;

/**
 * The fused kernels' bottom-right-aligned causal rule for one packed varlen row: with
 * {@code kvOffset = kvLen - qLen}, query {@code r} sees key {@code j} iff {@code j <= r + kvOffset} and, when
 * {@code window > 0}, {@code j >= r + kvOffset - window + 1}. Window 0 means no window.
 */
public record VarlenCausalMask(int qLen, int kvLen, int window) {

    public VarlenCausalMask {
        Require.nonNegative("q_len", qLen);
        Require.nonNegative("kv_len", kvLen);
        Require.nonNegative("window", window);
    }

    /** Whether query {@code r} may attend key {@code j}. */
    public boolean admits(int r, int j) {
        long last = (long) r + kvLen - qLen;
        return j <= last && (window == 0 || j >= last - window + 1);
    }

    /** Dense additive form {@code [qLen, kvLen]} (F32, CPU): 0 where admitted, -inf elsewhere; read-only. */
    public Tensor materialize() {
        float[] m = new float[qLen * kvLen];
        Arrays.fill(m, Float.NEGATIVE_INFINITY);
        for (int r = 0; r < qLen; r++) {
            long last = (long) r + kvLen - qLen;
            long lo = window == 0 ? 0 : Math.max(0, last - window + 1);
            long hi = Math.min(kvLen, last + 1);
            if (lo < hi) {
                Arrays.fill(m, r * kvLen + (int) lo, r * kvLen + (int) hi, 0f);
            }
        }
        return Tensor.readOnly(m, DType.F32, Device.CPU, qLen, kvLen);
    }

    /** {@code varlen_causal_mask_cached}: a thread-local single slot keyed on {@code (qLen, kvLen, window)}. */
    public static final class Memo {
        private static final ThreadLocal<Memo> CURRENT = ThreadLocal.withInitial(Memo::new);

        private VarlenCausalMask key;
        private Tensor mask;
        private long builds;
        private long hits;

        private Memo() {
        }

        /** This thread's slot. */
        public static Memo current() {
            return CURRENT.get();
        }

        /** The mask for {@code (qLen, kvLen, window)}: the slot's if its key is equal, else built and stored. */
        public Tensor get(int qLen, int kvLen, int window) {
            VarlenCausalMask wanted = new VarlenCausalMask(qLen, kvLen, window);
            if (wanted.equals(key)) {
                hits++;
                return mask;
            }
            builds++;
            mask = wanted.materialize();
            key = wanted;
            return mask;
        }

        public long builds() {
            return builds;
        }

        public long hits() {
            return hits;
        }

        /** Empties the slot and zeroes the counters. */
        public void clear() {
            key = null;
            mask = null;
            builds = 0;
            hits = 0;
        }
    }
}
