package io.attnproof.conformance.cases;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.npy.Npy;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Reads the sinks kind of case (README "Cases"): {@code q}, {@code k}, optional {@code v} (default: k), optional {@code sinks} (absent: no sink term),
 * optional {@code mask} (dense only), {@code canary}, and {@code config {window, dtype[, cu_seqlens_q,
 * cu_seqlens_k]}}; every problem a {@link CaseException} naming the file and the field.
 */
final class SinksReader {
    private final CaseReader r;
    private final Map<String, Object> root;

    SinksReader(CaseReader reader, Map<String, Object> root) {
        this.r = reader;
        this.root = root;
    }

    SinksCase read() {
        if (root.containsKey("compressed_kv")) {
            throw new CaseException(r.file, "compressed_kv", "a sinks case has no compressed blocks (that is the union"
                    + " kind)");
        }
        if (!(root.get("config") instanceof Map<?, ?> rawConfig)) {
            throw new CaseException(r.file, "config", "missing or not an object: {window, dtype[, cu_seqlens_q,"
                    + " cu_seqlens_k]}");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> config = (Map<String, Object>) rawConfig;
        for (String key : config.keySet()) {
            if (!CaseReader.SINKS_CONFIG_FIELDS.contains(key)) {
                throw new CaseException(r.file, "config." + key, "unknown field (a sinks config holds "
                        + String.join(", ", CaseReader.SINKS_CONFIG_FIELDS) + ")");
            }
        }
        int window = r.integer(config, "window", 0);
        DType dtype = r.dtype(config);
        Npy.Array q = r.array(root, "q", true, dtype);
        Npy.Array k = r.array(root, "k", true, dtype);
        Npy.Array v = r.array(root, "v", false, dtype);
        Npy.Array sinks = r.array(root, "sinks", false, dtype);   // absent: no sink term (every head -inf)
        Npy.Array mask = r.array(root, "mask", false, dtype);
        boolean varlen = config.containsKey("cu_seqlens_q") || config.containsKey("cu_seqlens_k");
        int rank = varlen ? 3 : 4;
        String qRule = varlen ? "[total_q, Hq, D] (packed rows)" : "[B, Hq, tq, D]";
        int[] qs = q.shape();
        if (qs.length != rank || Arrays.stream(qs).anyMatch(d -> d < 1)) {
            throw r.shape("q", q, "must be " + qRule + " with every size >= 1");
        }
        int hq = qs[1];
        int d = qs[rank - 1];
        int[] ks = k.shape();
        boolean kOk = ks.length == rank && ks[1] >= 1 && hq % ks[1] == 0 && ks[rank - 1] == d
                && (varlen || ks[0] == qs[0]) && Arrays.stream(ks).allMatch(x -> x >= 1);
        if (!kOk) {
            throw r.shape("k", k, "must be " + (varlen ? "[total_k, Hkv, D=" + d + "]" : "[B=" + qs[0] + ", Hkv, tk, D="
                    + d + "]") + " with Hq = " + hq + " a multiple of Hkv");
        }
        if (v != null && !Arrays.equals(v.shape(), ks)) {
            throw r.shape("v", v, "must equal k's shape " + Npy.shapeText(ks));
        }
        float[] sinkValues = new float[hq];
        Arrays.fill(sinkValues, Float.NEGATIVE_INFINITY);
        if (sinks != null && !Arrays.equals(sinks.shape(), new int[] {hq})) {
            throw r.shape("sinks", sinks, "must be [Hq=" + hq + "] (one sink logit per query head of q)");
        }
        for (int i = 0; sinks != null && i < hq; i++) {
            float s = sinks.data()[i];
            sinkValues[i] = s;
            if (Float.isNaN(s) || s == Float.POSITIVE_INFINITY) {
                throw new CaseException(r.file, "sinks", sinks.file() + ": sinks[" + i + "] = " + s
                        + " must be finite, or -inf for no sink");
            }
        }
        int[] cuQ = null;
        int[] cuK = null;
        if (varlen) {
            if (mask != null) {
                throw new CaseException(r.file, "mask", "a varlen case (cu_seqlens) takes no mask: sinks_attn keeps a"
                        + " masked call off the varlen path");
            }
            cuQ = cuSeqlens(config, "cu_seqlens_q", qs[0], "q");
            cuK = cuSeqlens(config, "cu_seqlens_k", ks[0], "k");
            if (cuQ.length != cuK.length) {
                throw new CaseException(r.file, "config.cu_seqlens_k", "has " + cuK.length + " entries, cu_seqlens_q "
                        + cuQ.length + ": one boundary per sequence, plus the start, in both");
            }
            for (int i = 0; i + 1 < cuQ.length; i++) {
                if (cuQ[i + 1] - cuQ[i] > cuK[i + 1] - cuK[i]) {
                    throw new CaseException(r.file, "config.cu_seqlens_q", "sequence " + i + " has "
                            + (cuQ[i + 1] - cuQ[i]) + " query rows but " + (cuK[i + 1] - cuK[i])
                            + " keys: every query needs its own key");
                }
            }
        } else {
            // tq > tk is allowed: bottom-right alignment (kv_offset = tk - tq) leaves rows r < tq - tk without a key,
            // and such a row is zero with or without a sink (docs/system.md; the kernels' keyless-row guards).
            if (mask != null) {
                checkMask(mask, qs[0], hq, qs[2], ks[2]);
            }
        }
        Canary canary = Canary.parse(r, root.get("canary"), Map.of("q", q, "k", k, "v", v == null ? k : v), v != null,
                false);
        canary.requireFinite("q", q);
        canary.requireFinite("k", k);
        if (v != null) {
            canary.requireFinite("v", v);
        }
        Tensor qt = Tensor.of(q.data(), dtype, Device.CPU, qs);
        Tensor kt = Tensor.of(k.data(), dtype, Device.CPU, ks);
        Tensor vt = v == null ? kt : Tensor.of(v.data(), dtype, Device.CPU, ks);
        Tensor st = Tensor.of(sinkValues, DType.F32, Device.CPU, hq);
        Tensor mt = mask == null ? null : Tensor.of(mask.data(), dtype, Device.CPU, mask.shape());
        return new SinksCase(r.file, qt, kt, vt, st, mt, window, cuQ, cuK, dtype);
    }

    private void checkMask(Npy.Array mask, int b, int hq, int tq, int tk) {
        int[] ms = mask.shape();
        boolean ok = (ms.length == 2 && ms[0] == tq && ms[1] == tk) || (ms.length == 4 && (ms[0] == 1 || ms[0] == b)
                && (ms[1] == 1 || ms[1] == hq) && (ms[2] == 1 || ms[2] == tq) && ms[3] == tk);
        if (!ok) {
            throw r.shape("mask", mask, "must be [tq=" + tq + ", tk=" + tk + "] or [B=" + b + "|1, Hq=" + hq + "|1, tq="
                    + tq + "|1, tk=" + tk + "]");
        }
        float[] data = mask.data();
        for (int i = 0; i < data.length; i++) {
            if (Float.isNaN(data[i]) || data[i] == Float.POSITIVE_INFINITY) {
                throw new CaseException(r.file, "mask", mask.file() + ": element " + i + " = " + data[i]
                        + " must be finite or -inf (an additive mask)");
            }
        }
    }

    private int[] cuSeqlens(Map<String, Object> config, String key, int packed, String tensor) {
        String field = "config." + key;
        Object value = config.get(key);
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            throw new CaseException(r.file, field, value == null ? "missing: a varlen case needs both cu_seqlens_q and"
                    + " cu_seqlens_k" : "must be a non-empty array of packed-row boundaries, found " + CaseReader.kind(value));
        }
        int[] cu = new int[list.size()];
        for (int i = 0; i < cu.length; i++) {
            Object x = list.get(i);
            if (!(x instanceof Double dx) || dx != Math.rint(dx) || dx < 0 || dx > Integer.MAX_VALUE) {
                throw new CaseException(r.file, field, "entry " + i + " = " + x + " must be an integer >= 0");
            }
            cu[i] = dx.intValue();
            if (i == 0 && cu[0] != 0) {
                throw new CaseException(r.file, field, "entry 0 = " + cu[0] + " must be 0 (the first sequence starts"
                        + " at packed row 0)");
            }
            if (i > 0 && cu[i] < cu[i - 1]) {
                throw new CaseException(r.file, field, "entry " + i + " = " + cu[i] + " < entry " + (i - 1) + " = "
                        + cu[i - 1] + ": boundaries never decrease");
            }
        }
        if (cu[cu.length - 1] != packed) {
            throw new CaseException(r.file, field, "ends at " + cu[cu.length - 1] + ", but " + tensor + " packs "
                    + packed + " rows: the last boundary is the packed length");
        }
        return cu;
    }
}
