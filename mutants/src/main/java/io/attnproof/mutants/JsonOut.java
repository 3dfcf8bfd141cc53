package io.attnproof.mutants;

import io.attnproof.fixtures.evidence.Json;
import java.util.List;

/** A minimal streaming JSON writer (numbers and strings through the fixtures' {@link Json}, so NaN reads back). */
final class JsonOut {
    private final StringBuilder out = new StringBuilder();
    private boolean first = true;

    JsonOut begin() {
        out.append('{');
        first = true;
        return this;
    }

    JsonOut end() {
        out.append('}');
        first = false;
        return this;
    }

    JsonOut beginArray() {
        out.append('[');
        first = true;
        return this;
    }

    JsonOut endArray() {
        out.append(']');
        first = false;
        return this;
    }

    /** Separates array items. */
    JsonOut item() {
        if (!first) {
            out.append(',');
        }
        first = false;
        return this;
    }

    JsonOut key(String key) {
        if (!first) {
            out.append(',');
        }
        out.append(Json.quote(key)).append(':');
        first = true;
        return this;
    }

    JsonOut field(String key, String value) {
        key(key);
        out.append(value == null ? "null" : Json.quote(value));
        first = false;
        return this;
    }

    JsonOut fieldNull(String key) {
        key(key);
        out.append("null");
        first = false;
        return this;
    }

    JsonOut field(String key, double value) {
        key(key);
        out.append(Json.number(value));
        first = false;
        return this;
    }

    JsonOut field(String key, long value) {
        key(key);
        out.append(value);
        first = false;
        return this;
    }

    JsonOut field(String key, boolean value) {
        key(key);
        out.append(value);
        first = false;
        return this;
    }

    JsonOut field(String key, List<String> values) {
        key(key);
        out.append('[');
        for (int i = 0; i < values.size(); i++) {
            out.append(i == 0 ? "" : ",").append(Json.quote(values.get(i)));
        }
        out.append(']');
        first = false;
        return this;
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
