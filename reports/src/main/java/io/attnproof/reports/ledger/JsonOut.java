package io.attnproof.reports.ledger;

import io.attnproof.fixtures.evidence.Json;
import java.util.List;
import java.util.Map;

/** Writes a tree of Map (ordered), List, String, Number, Boolean and null as indented JSON that {@link Json#parse} reads. */
final class JsonOut {
    private JsonOut() {
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder(1 << 16);
        write(out, value, 0);
        return out.append('\n').toString();
    }

    private static void write(StringBuilder out, Object value, int indent) {
        switch (value) {
            case null -> out.append("null");
            case String s -> out.append(Json.quote(s));
            case Boolean b -> out.append(b);
            case Integer i -> out.append(i);
            case Long l -> out.append(l);
            case Number n -> out.append(Json.number(n.doubleValue()));
            case Map<?, ?> map -> {
                if (map.isEmpty()) {
                    out.append("{}");
                    return;
                }
                out.append("{\n");
                int i = 0;
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    pad(out, indent + 1).append(Json.quote(String.valueOf(e.getKey()))).append(": ");
                    write(out, e.getValue(), indent + 1);
                    out.append(++i < map.size() ? ",\n" : "\n");
                }
                pad(out, indent).append('}');
            }
            case List<?> list -> {
                if (list.isEmpty()) {
                    out.append("[]");
                    return;
                }
                boolean flat = list.stream().allMatch(x -> x == null || x instanceof String || x instanceof Number
                        || x instanceof Boolean);
                out.append(flat ? "[" : "[\n");
                for (int i = 0; i < list.size(); i++) {
                    if (!flat) {
                        pad(out, indent + 1);
                    }
                    write(out, list.get(i), indent + 1);
                    if (i + 1 < list.size()) {
                        out.append(flat ? ", " : ",\n");
                    }
                }
                if (!flat) {
                    out.append('\n');
                    pad(out, indent);
                }
                out.append(']');
            }
            default -> throw new IllegalArgumentException("value of " + value.getClass() + " cannot be written as JSON");
        }
    }

    private static StringBuilder pad(StringBuilder out, int indent) {
        return out.append("  ".repeat(indent));
    }
}
