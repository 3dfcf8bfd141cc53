package io.attnproof.oracles;

/** One GPT-OSS-style sinks-attention problem (fp64 values): GQA heads, bottom-right-aligned causality.
 *
 * @param q      [B][Hq][tq][D] queries
 * @param k      [B][Hkv][tk][D] keys; query head h reads KV head h / (Hq / Hkv)
 * @param v      [B][Hkv][tk][D] values
 * @param sinks  [Hq] per-query-head sink logits, may hold -inf; null means no sink (same as -inf)
 * @param mask   null, or additive [B or 1][Hq or 1][tq or 1][tk] (0 / finite bias / -inf); a 1-sized axis broadcasts
 * @param window 0 for no window, else the number of keys a row sees up to and including its diagonal key
 * @param causal whether the bottom-right-aligned causal rule applies (kv_offset = tk - tq; row r sees
 *               j <= r + kv_offset and, with window > 0, j >= r + kv_offset - window + 1); false admits every key
 *               the mask admits (the non-causal control), and then window must be 0
 */
public record SinksProblem(double[][][][] q, double[][][][] k, double[][][][] v, double[] sinks, double[][][][] mask,
        int window, boolean causal) {

    /** Validates every shape and config value; a violation is an IllegalArgumentException naming it. */
    public SinksProblem {
        Require.atLeast("window", window, 0);
        Require.that(causal || window == 0, "window = " + window + " needs causal = true (a window is causal)");
        Require.that(q != null && q.length >= 1, "q must be [B][Hq][tq][D] with B >= 1");
        Require.that(q[0] != null && q[0].length >= 1, "q must be [B][Hq][tq][D] with Hq >= 1");
        Require.that(q[0][0] != null && q[0][0].length >= 1, "q must be [B][Hq][tq][D] with tq >= 1");
        Require.that(q[0][0][0] != null && q[0][0][0].length >= 1, "q must be [B][Hq][tq][D] with D >= 1");
        int b = q.length;
        int hq = q[0].length;
        int tq = q[0][0].length;
        int d = q[0][0][0].length;
        Require.that(k != null && k.length == b && k[0] != null && k[0].length >= 1,
                "k must be [B][Hkv][tk][D] with B = " + b + " and Hkv >= 1");
        int hkv = k[0].length;
        Require.that(hq % hkv == 0, "Hq = " + hq + " must be a multiple of Hkv = " + hkv);
        Require.that(k[0][0] != null, "k[0][0] must not be null");
        int tk = k[0][0].length;
        Require.that(v != null && v.length == b, "v must be [B][Hkv][tk][D] with B = " + b);
        for (int i = 0; i < b; i++) {
            heads("q[" + i + "]", q[i], hq, tq, d);
            heads("k[" + i + "]", k[i], hkv, tk, d);
            heads("v[" + i + "]", v[i], hkv, tk, d);
        }
        if (sinks != null) {
            Require.that(sinks.length == hq, "sinks.length = " + sinks.length + " must equal Hq = " + hq);
            for (int h = 0; h < hq; h++) {
                Require.logit("sinks[" + h + "]", sinks[h]);
            }
        }
        if (mask != null) {
            Require.that(mask.length == b || mask.length == 1, "mask batch axis = " + mask.length
                    + " must be B = " + b + " or 1");
            for (int i = 0; i < mask.length; i++) {
                Require.that(mask[i] != null && (mask[i].length == hq || mask[i].length == 1),
                        "mask[" + i + "] head axis must be Hq = " + hq + " or 1");
                for (int h = 0; h < mask[i].length; h++) {
                    double[][] m = mask[i][h];
                    Require.that(m != null && (m.length == tq || m.length == 1),
                            "mask[" + i + "][" + h + "] query axis must be tq = " + tq + " or 1");
                    for (int r = 0; r < m.length; r++) {
                        Require.that(m[r] != null && m[r].length == tk,
                                "mask[" + i + "][" + h + "][" + r + "] key axis must be tk = " + tk);
                        for (int c = 0; c < tk; c++) {
                            Require.logit("mask[" + i + "][" + h + "][" + r + "][" + c + "]", m[r][c]);
                        }
                    }
                }
            }
        }
    }

    /** B. */
    public int batch() { return q.length; }

    /** Hq, the number of query heads. */
    public int queryHeads() { return q[0].length; }

    /** Hkv, the number of KV heads. */
    public int kvHeads() { return k[0].length; }

    /** tq, the number of query rows. */
    public int tq() { return q[0][0].length; }

    /** tk, the number of keys. */
    public int tk() { return k[0][0].length; }

    /** D, the head dimension. */
    public int headDim() { return q[0][0][0].length; }

    /** The same problem with another mask (null: none). */
    public SinksProblem withMask(double[][][][] other) {
        return new SinksProblem(q, k, v, sinks, other, window, causal);
    }

    /** The same problem with other sinks (null: none). */
    public SinksProblem withSinks(double[] other) {
        return new SinksProblem(q, k, v, other, mask, window, causal);
    }

    /** The same problem with another window and causality. */
    public SinksProblem withRule(int otherWindow, boolean otherCausal) {
        return new SinksProblem(q, k, v, sinks, mask, otherWindow, otherCausal);
    }

    /** Shapes and config only (never the values), for failure messages. */
    @Override
    public String toString() {
        return "SinksProblem[B=" + batch() + ", Hq=" + queryHeads() + ", Hkv=" + kvHeads() + ", tq=" + tq() + ", tk="
                + tk() + ", D=" + headDim() + ", window=" + window + ", causal=" + causal + ", sinks="
                + (sinks != null) + ", mask=" + (mask != null) + "]";
    }

    private static void heads(String name, double[][][] x, int heads, int rows, int cols) {
        Require.that(x != null && x.length == heads, name + " must have " + heads + " heads, got "
                + (x == null ? "null" : x.length));
        for (int h = 0; h < heads; h++) {
            Require.that(x[h] != null && x[h].length == rows, name + "[" + h + "] must have " + rows + " rows, got "
                    + (x[h] == null ? "null" : x[h].length));
            for (int r = 0; r < rows; r++) {
                Require.that(x[h][r] != null && x[h][r].length == cols, name + "[" + h + "][" + r
                        + "] must have length " + cols + ", got " + (x[h][r] == null ? "null" : x[h][r].length));
            }
        }
    }
}
