package io.attnproof.conformance.cases;

import io.attnproof.fixtures.gen.UnionInputs;
import io.attnproof.oracles.Precision;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The worked example of the README, {@code examples/tiny}: a CSA layer (ratio 4, W 8) with B 2, H 2, tq 4 queries
 * over tk 20 raw keys and 5 compressed blocks, D 8, F32, V = K, seeded. {@code ExampleCase <dir>} regenerates it;
 * a test checks the committed files are byte for byte what this writes.
 */
public final class ExampleCase {
    public static final long SEED = 2026;
    public static final int BATCH = 2;
    public static final int HEADS = 2;
    public static final int TQ = 4;
    public static final int TK = 20;
    public static final int TC = 5;
    public static final int HEAD_DIM = 8;
    public static final int WINDOW = 8;
    public static final int RATIO = 4;

    private ExampleCase() {
    }

    /** Writes the example to {@code dir/case.json} plus its .npy files. */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: ExampleCase <dir>   (writes <dir>/case.json, q.npy, k.npy, sinks.npy,"
                    + " compressed_kv.npy)");
            System.exit(2);
        }
        write(Path.of(args[0]).resolve("case.json"));
    }

    /** Writes the example case to {@code caseFile} (its .npy files beside it). */
    public static void write(Path caseFile) {
        UnionInputs in = UnionInputs.generate(SEED, BATCH, HEADS, TQ, TK, TC, HEAD_DIM, Precision.F32, 2.0);
        Map<String, CaseWriter.Data> tensors = new LinkedHashMap<>();
        tensors.put("q", CaseWriter.Data.f4(flat(in.q()), BATCH, HEADS, TQ, HEAD_DIM));
        tensors.put("k", CaseWriter.Data.f4(flat(in.k()), BATCH, 1, TK, HEAD_DIM));
        tensors.put("sinks", CaseWriter.Data.f4(flat(in.sinks()), HEADS));
        tensors.put("compressed_kv", CaseWriter.Data.f4(flat(in.compressed()), BATCH, 1, TC, HEAD_DIM));
        CaseWriter.write(caseFile, "attnproof worked example: CSA layer (ratio 4, W 8), B 2, H 2, tq 4, tk 20, tc 5,"
                + " D 8, F32, V = K, seed " + SEED, tensors, new CaseWriter.Config(RATIO, WINDOW, 0, null, "F32"));
    }

    /** Row-major float32 copy of a rectangular array of any rank up to 4. */
    public static float[] flat(Object array) {
        java.util.List<Float> out = new java.util.ArrayList<>();
        collect(array, out);
        float[] f = new float[out.size()];
        for (int i = 0; i < f.length; i++) {
            f[i] = out.get(i);
        }
        return f;
    }

    private static void collect(Object array, java.util.List<Float> out) {
        if (array instanceof double[] d) {
            for (double x : d) {
                out.add((float) x);
            }
        } else if (array instanceof Object[] rows) {
            for (Object row : rows) {
                collect(row, out);
            }
        } else {
            throw new IllegalArgumentException("array = " + array + " must be a (nested) double array");
        }
    }
}
