package io.attnproof.conformance.corpus;

import io.attnproof.fixtures.json.JsonTrees;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One corpus case before it is written: its id, the claim it was made for, its kind ({@code union} or {@code sinks}),
 * dtype, seed, description, tensors (in case-field order), config (in order) and canary slots. {@link #write} puts
 * {@code case.json} and one {@code .npy} per tensor into a folder; the same spec always gives the same bytes.
 */
public record CaseSpec(String id, String claim, String kind, String dtype, long seed, String description,
        Map<String, Arr> tensors, Map<String, Object> config, Map<String, List<int[]>> canary) {

    /** One tensor: C-order values of {@code shape}, stored as {@code storage}. */
    public record Arr(int[] shape, float[] values, Npy.DType storage) {
    }

    /** The output shape {@code [B, H, T, D]} of the case. */
    public int[] outputShape() {
        if (kind.equals("union")) {
            int[] q = tensors.get("q").shape();
            return q.clone();
        }
        int[] q = tensors.get("q").shape();
        if (!config.containsKey("cu_seqlens_q")) {
            return q.clone();
        }
        int[] cu = (int[]) config.get("cu_seqlens_q");
        int max = 0;
        for (int i = 0; i + 1 < cu.length; i++) {
            max = Math.max(max, cu[i + 1] - cu[i]);
        }
        return new int[] {cu.length - 1, q[1], max, q[2]};
    }

    /** Bytes the case's .npy files take (headers included, approximately). */
    public long bytes() {
        long n = 0;
        for (Arr a : tensors.values()) {
            n += 128 + (long) a.values().length * a.storage().itemSize();
        }
        return n + 1024;
    }

    /** Writes the case into {@code dir} ({@code case.json} plus one {@code <field>.npy} per tensor). */
    public void write(Path dir) {
        try {
            Files.createDirectories(dir);
            for (Map.Entry<String, byte[]> f : files().entrySet()) {
                Files.write(dir.resolve(f.getKey()), f.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the case into " + dir, e);
        }
    }

    /** The files of the case by name: one {@code <field>.npy} per tensor, then {@code case.json}. */
    public Map<String, byte[]> files() {
        Map<String, byte[]> files = new LinkedHashMap<>();
        StringBuilder json = new StringBuilder("{\n");
        json.append("  \"description\": ").append(JsonTrees.quote(description)).append(",\n");
        json.append("  \"kind\": ").append(JsonTrees.quote(kind)).append(",\n");
        for (Map.Entry<String, Arr> e : tensors.entrySet()) {
            String name = e.getKey() + ".npy";
            Arr a = e.getValue();
            files.put(name, Npy.encode(a.storage(), a.shape(), a.values(), 1));
            json.append("  ").append(JsonTrees.quote(e.getKey())).append(": ").append(JsonTrees.quote(name)).append(",\n");
        }
        if (!canary.isEmpty()) {
            json.append("  \"canary\": {");
            boolean first = true;
            for (Map.Entry<String, List<int[]>> e : canary.entrySet()) {
                json.append(first ? "" : ", ").append(JsonTrees.quote(e.getKey())).append(": [");
                for (int i = 0; i < e.getValue().size(); i++) {
                    json.append(i == 0 ? "" : ", ").append(ints(e.getValue().get(i)));
                }
                json.append(']');
                first = false;
            }
            json.append("},\n");
        }
        json.append("  \"config\": {");
        boolean first = true;
        for (Map.Entry<String, Object> e : config.entrySet()) {
            json.append(first ? "" : ", ").append(JsonTrees.quote(e.getKey())).append(": ").append(value(e.getValue()));
            first = false;
        }
        json.append("}\n}\n");
        files.put("case.json", json.toString().getBytes(StandardCharsets.UTF_8));
        return files;
    }

    static String value(Object v) {
        return switch (v) {
            case String s -> JsonTrees.quote(s);
            case int[] a -> ints(a);
            case long[] a -> {
                StringBuilder s = new StringBuilder("[");
                for (int i = 0; i < a.length; i++) {
                    s.append(i == 0 ? "" : ", ").append(a[i]);
                }
                yield s.append(']').toString();
            }
            default -> String.valueOf(v);
        };
    }

    static String ints(int[] a) {
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            s.append(i == 0 ? "" : ", ").append(a[i]);
        }
        return s.append(']').toString();
    }

    /** An ordered config map. */
    static Map<String, Object> config(Object... keyValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            if (keyValues[i + 1] != null) {
                m.put((String) keyValues[i], keyValues[i + 1]);
            }
        }
        return m;
    }
}
