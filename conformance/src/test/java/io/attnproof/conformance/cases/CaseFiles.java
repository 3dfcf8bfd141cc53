package io.attnproof.conformance.cases;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes small case files and their .npy inputs into one directory, for the reader and checker rule tests. */
final class CaseFiles {
    final Path dir;

    CaseFiles(Path dir) {
        this.dir = dir;
    }

    /** A float32 .npy {@code name}.npy of {@code shape}, values 0.1, 0.2, ... (distinct, finite). */
    CaseFiles npy(String name, int... shape) {
        int n = 1;
        for (int s : shape) {
            n *= s;
        }
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (0.1 * ((i % 7) + 1) * (i % 2 == 0 ? 1 : -1));
        }
        return npy(name, shape, x);
    }

    CaseFiles npy(String name, int[] shape, float[] values) {
        Npy.write(dir.resolve(name + ".npy"), Npy.DType.F4, shape, values);
        return this;
    }

    /** Writes {@code json} as case.json (single quotes stand for double quotes) and returns its path. */
    Path json(String json) {
        Path c = dir.resolve("case.json");
        try {
            Files.writeString(c, json.replace('\'', '"'), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return c;
    }

    AnyCase read(String json) {
        return CaseReader.readAny(json(json));
    }

    /** The refusal of {@code json}: it names the case file and {@code field}, and says {@code detail}. */
    CaseException refused(String json, String field, String detail) {
        Path c = json(json);
        CaseException e = assertThrows(CaseException.class, () -> CaseReader.readAny(c), json);
        assertEquals(c, e.file(), e.getMessage());
        assertEquals(field, e.field(), e.getMessage());
        assertTrue(e.getMessage().startsWith(c + ": " + (field == null ? "" : "\"" + field + "\": ")), e.getMessage());
        assertTrue(e.getMessage().contains(detail), "says " + detail + ": " + e.getMessage());
        return e;
    }

    /** Values 0.1, ... of {@code n} elements with {@code bad} at flat index {@code at}. */
    static float[] withAt(int n, int at, float bad) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = 0.25f * ((i % 5) - 2);
        }
        x[at] = bad;
        return x;
    }
}
