package io.attnproof.conformance.cases;

import io.attnproof.attention.dsv4.CompressRatio;
import io.attnproof.attention.dsv4.UnionGeometry;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.json.JsonTrees;
import io.attnproof.conformance.npy.Npy;
import io.attnproof.conformance.npy.NpyException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Reads and validates a case file (README "Cases"): a JSON object naming {@code .npy} inputs relative to the case
 * file ({@code q [B,H,tq,D]}, {@code k [B,1,tk,D]}, optional {@code v} (default: k), {@code sinks [H]}, optional
 * {@code compressed_kv [B,1,tc,D]}, optional {@code mask}) and a {@code config} object ({@code ratio} 0|4|128,
 * {@code window}, {@code rawPrefix}, optional {@code rowQ0}, {@code dtype} F32|F16|BF16). Every problem is a
 * {@link CaseException} naming the file and the field.
 */
public final class CaseReader {
    /** Top-level fields a case may hold. */
    public static final List<String> FIELDS = List.of("description", "kind", "q", "k", "v", "sinks", "compressed_kv",
            "mask", "canary", "config");
    /** Fields of a sinks case's {@code config}. */
    public static final List<String> SINKS_CONFIG_FIELDS = List.of("window", "cu_seqlens_q", "cu_seqlens_k", "dtype");
    /** The tensors that may hold canary slots (NaN or infinite elements that must never be read). */
    public static final List<String> CANARY_FIELDS = List.of("q", "k", "v", "compressed_kv");
    /** Fields of {@code config}. */
    public static final List<String> CONFIG_FIELDS = List.of("ratio", "window", "rawPrefix", "rowQ0", "dtype");

    final Path file;
    private final Path dir;

    private CaseReader(Path file) {
        this.file = file;
        Path parent = file.toAbsolutePath().getParent();
        this.dir = parent == null ? Path.of("") : parent;
    }

    /**
     * The validated case in {@code caseFile}.
     *
     * @throws CaseException naming the file and field for malformed JSON, a missing, truncated or malformed
     *                       {@code .npy}, a wrong dtype or shape, or a config that contradicts the tensors
     */
    public static AttnCase read(Path caseFile) {
        AnyCase c = readAny(caseFile);
        if (c instanceof AttnCase a) {
            return a;
        }
        throw new CaseException(caseFile, "kind", "a sinks case, where a union case is needed");
    }

    /**
     * The validated case of either kind in {@code caseFile}: {@code "kind": "sinks"} for GPT-OSS sinks attention,
     * {@code "union"} or no kind for union attention.
     *
     * @throws CaseException naming the file and field for any bad input
     */
    public static AnyCase readAny(Path caseFile) {
        return new CaseReader(caseFile).read();
    }

    private AnyCase read() {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new CaseException(file, null, "no such case file");
        } catch (IOException e) {
            throw new CaseException(file, null, "cannot read the case file: " + e);
        }
        Object parsed;
        try {
            parsed = JsonTrees.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CaseException(file, null, "malformed JSON: " + e.getMessage());
        }
        if (!(parsed instanceof Map<?, ?> raw)) {
            throw new CaseException(file, null, "a case must be a JSON object, found " + kind(parsed));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> root = (Map<String, Object>) raw;
        for (String key : root.keySet()) {
            if (!FIELDS.contains(key)) {
                throw new CaseException(file, key, "unknown field (a case holds " + String.join(", ", FIELDS) + ")");
            }
        }
        if (root.containsKey("description") && !(root.get("description") instanceof String)) {
            throw new CaseException(file, "description", "must be a string, found " + kind(root.get("description")));
        }
        Object kindValue = root.get("kind");
        if (kindValue != null && !"union".equals(kindValue) && !"sinks".equals(kindValue)) {
            throw new CaseException(file, "kind", kind(kindValue) + " must be \"union\" (the default) or \"sinks\"");
        }
        if ("sinks".equals(kindValue)) {
            return new SinksReader(this, root).read();
        }

        // The config first: the dtype decides which .npy types are acceptable.
        if (!(root.get("config") instanceof Map<?, ?> rawConfig)) {
            throw new CaseException(file, "config", root.containsKey("config")
                    ? "must be an object {ratio, window, rawPrefix, dtype[, rowQ0]}, found " + kind(root.get("config"))
                    : "missing: the layer config {ratio, window, rawPrefix, dtype[, rowQ0]}");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> config = (Map<String, Object>) rawConfig;
        for (String key : config.keySet()) {
            if (!CONFIG_FIELDS.contains(key)) {
                throw new CaseException(file, "config." + key, "unknown field (config holds "
                        + String.join(", ", CONFIG_FIELDS) + ")");
            }
        }
        int ratioValue = integer(config, "ratio", 0);
        CompressRatio ratio = Arrays.stream(CompressRatio.values()).filter(r -> r.value() == ratioValue).findFirst()
                .orElseThrow(() -> new CaseException(file, "config.ratio", ratioValue
                        + " is not a V4 compression ratio (0, 4 or 128)"));
        int window = integer(config, "window", 1);
        int rawPrefix = integer(config, "rawPrefix", 0);
        DType dtype = dtype(config);

        Npy.Array q = array(root, "q", true, dtype);
        Npy.Array k = array(root, "k", true, dtype);
        Npy.Array v = array(root, "v", false, dtype);
        Npy.Array sinks = array(root, "sinks", true, dtype);
        Npy.Array compressed = array(root, "compressed_kv", false, dtype);
        Npy.Array mask = array(root, "mask", false, dtype);

        int[] qs = q.shape();
        if (qs.length != 4 || Arrays.stream(qs).anyMatch(d -> d < 1)) {
            throw shape("q", q, "must be [B, H, tq, D] with every size >= 1");
        }
        int b = qs[0];
        int h = qs[1];
        int tq = qs[2];
        int d = qs[3];
        int[] ks = k.shape();
        if (ks.length != 4 || ks[0] != b || ks[1] != 1 || ks[3] != d) {
            throw shape("k", k, "must be [B=" + b + ", 1, tk, D=" + d + "] (one shared K/V head; B and D from q)");
        }
        int tk = ks[2];
        if (v != null && !Arrays.equals(v.shape(), ks)) {
            throw shape("v", v, "must equal k's shape " + Npy.shapeText(ks));
        }
        if (!Arrays.equals(sinks.shape(), new int[] {h})) {
            throw shape("sinks", sinks, "must be [H=" + h + "] (one sink logit per query head of q)");
        }
        for (int i = 0; i < h; i++) {
            if (!Float.isFinite(sinks.data()[i])) {
                throw new CaseException(file, "sinks", sinks.file() + ": sinks[" + i + "] = " + sinks.data()[i]
                        + " must be finite (dsv4_attention takes finite sinks)");
            }
        }
        int tc = 0;
        if (compressed != null) {
            if (ratio == CompressRatio.STANDARD) {
                throw new CaseException(file, "compressed_kv", "given, but config.ratio = 0 has no compressed columns"
                        + " (drop compressed_kv or set ratio 4 or 128)");
            }
            int[] cs = compressed.shape();
            if (cs.length != 4 || cs[0] != b || cs[1] != 1 || cs[3] != d) {
                throw shape("compressed_kv", compressed, "must be [B=" + b + ", 1, tc, D=" + d + "]");
            }
            tc = cs[2];
        }
        long tkFull = (long) rawPrefix + tk;
        if (tq > tkFull) {
            throw new CaseException(file, "q", "tq = " + tq + " (" + q.file().getFileName() + ") exceeds t_k_full"
                    + " = config.rawPrefix + tk = " + rawPrefix + " + " + tk + ": every query needs its own key");
        }
        long keep = Math.min((long) tq + window - 1, tkFull);
        if (tkFull - keep < rawPrefix) {
            throw new CaseException(file, "config.rawPrefix", rawPrefix + " leaves the raw keep span [" + (tkFull - keep)
                    + ", " + tkFull + ") of tq = " + tq + ", W = " + window + " partly before the passed keys: k ("
                    + k.file().getFileName() + ") must hold at least " + keep + " keys, it holds " + tk);
        }
        long q0 = tkFull - tq;
        long[] rowQ0 = rowQ0(config, b, q0);
        if (mask != null) {
            checkMask(mask, b, h, tq, tkFull, tc);
        }
        try {
            UnionGeometry.of(tq, tk, tc, window, rawPrefix);
        } catch (IllegalArgumentException e) {
            throw new CaseException(file, "config", e.getMessage());
        }

        Canary canary = Canary.parse(this, root.get("canary"), java.util.Map.of("q", q, "k", k, "v", v == null ? k : v,
                "compressed_kv", compressed == null ? k : compressed), v != null, compressed != null);
        canary.requireFinite("q", q);
        canary.requireFinite("k", k);
        if (v != null) {
            canary.requireFinite("v", v);
        }
        if (compressed != null) {
            canary.requireFinite("compressed_kv", compressed);
        }
        Tensor qt = Tensor.of(q.data(), dtype, Device.CPU, qs);
        Tensor kt = Tensor.of(k.data(), dtype, Device.CPU, ks);
        Tensor vt = v == null ? kt : Tensor.of(v.data(), dtype, Device.CPU, ks);
        Tensor st = Tensor.of(sinks.data(), DType.F32, Device.CPU, h);
        Tensor ct = compressed == null ? null : Tensor.of(compressed.data(), dtype, Device.CPU, compressed.shape());
        Tensor mt = mask == null ? null : Tensor.of(mask.data(), dtype, Device.CPU, mask.shape());
        return new AttnCase(file, qt, kt, vt, st, ct, mt, ratio, window, rawPrefix, rowQ0, dtype);
    }

    /** Caller-mask shapes of docs/system.md §4.6: a 1-element placeholder, [tq, n] or [B|1, H|1, tq|1, n]. */
    private void checkMask(Npy.Array mask, int b, int h, int tq, long tkFull, int tc) {
        int[] ms = mask.shape();
        if (mask.data().length == 1) {
            return; // a placeholder: ignored, as compose_caller_mask does
        }
        String rule = "must be a 1-element placeholder, [tq=" + tq + ", n] or [B=" + b + "|1, H=" + h + "|1, tq="
                + tq + "|1, n] with n = t_k_full = " + tkFull + " or t_k_full + t_c = " + (tkFull + tc);
        int[] m4 = switch (ms.length) {
            case 2 -> new int[] {1, 1, ms[0], ms[1]};
            case 4 -> ms;
            default -> throw shape("mask", mask, rule);
        };
        boolean ok = (m4[0] == 1 || m4[0] == b) && (m4[1] == 1 || m4[1] == h) && (m4[2] == 1 || m4[2] == tq)
                && (m4[3] == tkFull || m4[3] == tkFull + tc);
        if (!ok) {
            throw shape("mask", mask, rule);
        }
        float[] data = mask.data();
        for (int i = 0; i < data.length; i++) {
            if (Float.isNaN(data[i]) || data[i] == Float.POSITIVE_INFINITY) {
                throw new CaseException(file, "mask", mask.file() + ": element " + i + " = " + data[i]
                        + " must be finite or -inf (an additive mask)");
            }
        }
    }

    private long[] rowQ0(Map<String, Object> config, int batch, long q0) {
        Object value = config.get("rowQ0");
        if (value == null) {
            return null;
        }
        if (!(value instanceof List<?> list)) {
            throw new CaseException(file, "config.rowQ0", "must be an array of per-row past lengths, found " + kind(value));
        }
        if (list.size() != batch) {
            throw new CaseException(file, "config.rowQ0", "has " + list.size() + " entries, the batch B = " + batch
                    + " (q) needs one per row");
        }
        long[] rows = new long[batch];
        for (int i = 0; i < batch; i++) {
            Object x = list.get(i);
            if (!(x instanceof Double dx) || dx != Math.rint(dx) || dx < 0 || dx > Integer.MAX_VALUE) {
                throw new CaseException(file, "config.rowQ0", "entry " + i + " = " + x + " must be an integer >= 0");
            }
            rows[i] = dx.longValue();
            if (rows[i] > q0) {
                throw new CaseException(file, "config.rowQ0", "entry " + i + " = " + rows[i] + " is ahead of the batch:"
                        + " it must be <= q0 = rawPrefix + tk - tq = " + q0);
            }
        }
        long max = Arrays.stream(rows).max().orElseThrow();
        if (max != q0) {
            throw new CaseException(file, "config.rowQ0", "max " + max + " must equal the batch q0 = rawPrefix + tk - tq"
                    + " = " + q0 + ": some row must sit at the end column " + Arrays.toString(rows));
        }
        return rows;
    }

    DType dtype(Map<String, Object> config) {
        Object value = config.get("dtype");
        if (value == null) {
            throw new CaseException(file, "config.dtype", "missing: F32, F16 or BF16");
        }
        if (value instanceof String s) {
            for (DType t : DType.values()) {
                if (t.name().equals(s)) {
                    return t;
                }
            }
        }
        throw new CaseException(file, "config.dtype", value + " must be F32, F16 or BF16");
    }

    int integer(Map<String, Object> config, String key, int min) {
        String field = "config." + key;
        if (!config.containsKey(key)) {
            throw new CaseException(file, field, "missing: an integer >= " + min);
        }
        Object value = config.get(key);
        if (!(value instanceof Double dx) || dx != Math.rint(dx) || dx < min || dx > Integer.MAX_VALUE) {
            throw new CaseException(file, field, (value instanceof String s ? JsonTrees.quote(s) : String.valueOf(value))
                    + " must be an integer >= " + min);
        }
        return dx.intValue();
    }

    /** The .npy named by {@code field}, or null when optional and absent; '<f2' only for an F16 case. */
    Npy.Array array(Map<String, Object> root, String field, boolean required, DType dtype) {
        Object value = root.get(field);
        if (value == null) {
            if (required) {
                throw new CaseException(file, field, "missing: the name of a .npy file, relative to the case file");
            }
            return null;
        }
        if (!(value instanceof String name) || name.isBlank()) {
            throw new CaseException(file, field, "must name a .npy file (a non-empty string), found " + kind(value));
        }
        Npy.Array a;
        try {
            a = Npy.read(dir.resolve(name));
        } catch (NpyException e) {
            throw new CaseException(file, field, e.getMessage());
        }
        if (a.dtype().isHalf() && dtype != DType.F16) {
            throw new CaseException(file, field, a.file() + ": dtype '<f2' (float16) contradicts config.dtype "
                    + dtype + ": store float16 inputs only in an F16 case, float32 otherwise");
        }
        return a;
    }

    CaseException shape(String field, Npy.Array a, String rule) {
        return new CaseException(file, field, a.file() + ": shape " + a.shapeText() + " " + rule);
    }

    static String kind(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Map) {
            return "an object";
        }
        if (value instanceof List) {
            return "an array";
        }
        if (value instanceof String s) {
            return "the string " + JsonTrees.quote(s);
        }
        return String.valueOf(value);
    }
}
