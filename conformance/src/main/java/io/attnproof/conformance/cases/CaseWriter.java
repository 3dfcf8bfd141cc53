package io.attnproof.conformance.cases;

import io.attnproof.fixtures.json.JsonTrees;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes a case: each tensor as {@code <field>.npy} beside the case file, then the case JSON naming them (fields in
 * the order q, k, v, sinks, compressed_kv, mask, config). Used by the example generator and the tests.
 */
public final class CaseWriter {
    private CaseWriter() {
    }

    /** One tensor to write: C-order values of {@code shape}, stored as {@code dtype}. */
    public record Data(int[] shape, float[] values, Npy.DType dtype) {
        public Data {
            shape = shape.clone();
        }

        @Override
        public int[] shape() {
            return shape.clone();
        }

        /** float32 storage. */
        public static Data f4(float[] values, int... shape) {
            return new Data(shape, values, Npy.DType.F4);
        }
    }

    /** The layer config of a case. */
    public record Config(int ratio, int window, int rawPrefix, long[] rowQ0, String dtype) {
        public Config {
            rowQ0 = rowQ0 == null ? null : rowQ0.clone();
        }

        @Override
        public long[] rowQ0() {
            return rowQ0 == null ? null : rowQ0.clone();
        }
    }

    /**
     * Writes {@code tensors} (keys among q, k, v, sinks, compressed_kv, mask) and the case JSON with
     * {@code description} (may be null) and {@code config} to {@code caseFile}.
     */
    public static void write(Path caseFile, String description, Map<String, Data> tensors, Config config) {
        write(caseFile, description, tensors, config, Map.of());
    }

    /**
     * The same, with canary slots: per tensor field, index prefixes whose elements may be NaN or infinite (padded
     * slots that must never be read); written as {@code "canary": {"k": [[0, 0, 3], ...]}} before the config.
     */
    public static void write(Path caseFile, String description, Map<String, Data> tensors, Config config,
            Map<String, java.util.List<int[]>> canary) {
        Path dir = caseFile.toAbsolutePath().getParent();
        StringBuilder json = new StringBuilder("{\n");
        if (description != null) {
            json.append("  \"description\": ").append(JsonTrees.quote(description)).append(",\n");
        }
        Map<String, Data> ordered = new LinkedHashMap<>();
        for (String field : CaseReader.FIELDS) {
            if (tensors.containsKey(field)) {
                ordered.put(field, tensors.get(field));
            }
        }
        if (ordered.size() != tensors.size()) {
            throw new IllegalArgumentException("tensors = " + tensors.keySet() + " must be case fields " + CaseReader.FIELDS);
        }
        for (Map.Entry<String, Data> e : ordered.entrySet()) {
            String name = e.getKey() + ".npy";
            Data d = e.getValue();
            Npy.write(dir.resolve(name), d.dtype(), d.shape(), d.values());
            json.append("  ").append(JsonTrees.quote(e.getKey())).append(": ").append(JsonTrees.quote(name)).append(",\n");
        }
        if (!canary.isEmpty()) {
            json.append("  \"canary\": {");
            boolean first = true;
            for (Map.Entry<String, java.util.List<int[]>> e : canary.entrySet()) {
                json.append(first ? "" : ", ").append(JsonTrees.quote(e.getKey())).append(": [");
                for (int i = 0; i < e.getValue().size(); i++) {
                    json.append(i == 0 ? "" : ", ").append(java.util.Arrays.toString(e.getValue().get(i)));
                }
                json.append(']');
                first = false;
            }
            json.append("},\n");
        }
        json.append("  \"config\": {\"ratio\": ").append(config.ratio()).append(", \"window\": ").append(config.window())
                .append(", \"rawPrefix\": ").append(config.rawPrefix());
        if (config.rowQ0() != null) {
            json.append(", \"rowQ0\": [");
            long[] rows = config.rowQ0();
            for (int i = 0; i < rows.length; i++) {
                json.append(i == 0 ? "" : ", ").append(rows[i]);
            }
            json.append(']');
        }
        json.append(", \"dtype\": ").append(JsonTrees.quote(config.dtype())).append("}\n}\n");
        try {
            Files.createDirectories(dir);
            Files.writeString(caseFile, json, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + caseFile, e);
        }
    }
}
