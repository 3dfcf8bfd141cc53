package io.attnproof.conformance.cases;

import io.attnproof.conformance.npy.Npy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The canary slots of a case ({@code "canary": {"k": [[0, 0, 3], [1, 0]], ...}}): index prefixes into a tensor; every
 * element whose index starts with a prefix may be NaN or infinite (a padded slot that must never be read). Every other
 * element of q, k, v and compressed_kv must be finite: a non-finite input is refused with the element named.
 */
final class Canary {
    private final CaseReader reader;
    private final Map<String, List<int[]>> slots;

    private Canary(CaseReader reader, Map<String, List<int[]>> slots) {
        this.reader = reader;
        this.slots = slots;
    }

    /** Parses {@code value} (null: no canaries) against the tensors it may name. */
    static Canary parse(CaseReader reader, Object value, Map<String, Npy.Array> tensors, boolean hasV,
            boolean hasCompressed) {
        Map<String, List<int[]>> slots = new LinkedHashMap<>();
        if (value == null) {
            return new Canary(reader, slots);
        }
        if (!(value instanceof Map<?, ?> map)) {
            throw new CaseException(reader.file, "canary", "must be an object {tensor: [[index prefix], ...]},"
                    + " found " + CaseReader.kind(value));
        }
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String field = String.valueOf(e.getKey());
            String where = "canary." + field;
            boolean present = tensors.containsKey(field) && (!field.equals("v") || hasV)
                    && (!field.equals("compressed_kv") || hasCompressed);
            if (!CaseReader.CANARY_FIELDS.contains(field) || !present) {
                throw new CaseException(reader.file, where, "names no input tensor of the case (canary slots may lie in "
                        + String.join(", ", CaseReader.CANARY_FIELDS) + " when given)");
            }
            int[] shape = tensors.get(field).shape();
            if (!(e.getValue() instanceof List<?> list)) {
                throw new CaseException(reader.file, where, "must be an array of index prefixes, found "
                        + CaseReader.kind(e.getValue()));
            }
            List<int[]> prefixes = new ArrayList<>();
            for (Object item : list) {
                if (!(item instanceof List<?> idx) || idx.isEmpty() || idx.size() > shape.length) {
                    throw new CaseException(reader.file, where, "entry " + CaseReader.kind(item) + " must be an index"
                            + " prefix of 1 to " + shape.length + " integers into shape " + Npy.shapeText(shape));
                }
                int[] p = new int[idx.size()];
                for (int i = 0; i < p.length; i++) {
                    Object x = idx.get(i);
                    if (!(x instanceof Double d) || d != Math.rint(d) || d < 0 || d >= shape[i]) {
                        throw new CaseException(reader.file, where, "index " + x + " at axis " + i + " must be an"
                                + " integer in [0, " + shape[i] + ") of shape " + Npy.shapeText(shape));
                    }
                    p[i] = d.intValue();
                }
                prefixes.add(p);
            }
            slots.put(field, prefixes);
        }
        return new Canary(reader, slots);
    }

    /** Refuses the first non-finite element of {@code a} outside the canary slots of {@code field}. */
    void requireFinite(String field, Npy.Array a) {
        float[] data = a.data();
        int[] shape = a.shape();
        List<int[]> prefixes = slots.getOrDefault(field, List.of());
        for (int i = 0; i < data.length; i++) {
            if (Float.isFinite(data[i])) {
                continue;
            }
            int[] index = index(i, shape);
            boolean marked = false;
            for (int[] p : prefixes) {
                if (Arrays.equals(p, 0, p.length, index, 0, p.length)) {
                    marked = true;
                    break;
                }
            }
            if (!marked) {
                throw new CaseException(reader.file, field, a.file() + ": element " + Npy.shapeText(index).replace(",)", ")")
                        + " = " + data[i] + " is not finite: inputs must be finite unless \"canary\" marks the slot"
                        + " (a padded slot that must never be read)");
            }
        }
    }

    /** Whether any canary slot is declared. */
    boolean any() {
        return !slots.isEmpty();
    }

    private static int[] index(int flat, int[] shape) {
        int[] index = new int[shape.length];
        for (int axis = shape.length - 1; axis >= 0; axis--) {
            index[axis] = flat % shape[axis];
            flat /= shape[axis];
        }
        return index;
    }
}
