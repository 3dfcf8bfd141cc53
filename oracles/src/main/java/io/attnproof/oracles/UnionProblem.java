package io.attnproof.oracles;

/** One uniform-batch union-attention problem in absolute positions (fp64 values).
 *
 * @param q          [B][H][tq][D] queries; row r sits at absolute position q0() + r
 * @param k          [B][tk][D] raw keys at absolute positions rawPrefix .. rawPrefix+tk-1
 * @param v          [B][tk][D] raw values
 * @param compressed [B][tc][D] compressed blocks (K = V); null or tc == 0 for none; ignored when ratio == 0
 * @param sinks      [H] per-query-head sink logits, may hold -inf; null means no sink (same as -inf)
 * @param callerMask null, or additive [B or 1][tq or 1][tkFull + tc] over absolute raw positions 0..tkFull-1
 *                   then the tc compressed blocks; a 1-sized axis broadcasts
 * @param window     raw sliding window W >= 1
 * @param ratio      compression ratio R >= 0 (0: no compressed columns)
 * @param rawPrefix  absolute position of k[.][0]; keys before it are absent
 */
public record UnionProblem(
        double[][][][] q, double[][][] k, double[][][] v, double[][][] compressed, double[] sinks,
        double[][][] callerMask, int window, int ratio, int rawPrefix) {

    /** Validates every shape and config value; a violation is an IllegalArgumentException naming it. */
    public UnionProblem {
        Require.atLeast("window", window, 1);
        Require.atLeast("ratio", ratio, 0);
        Require.atLeast("rawPrefix", rawPrefix, 0);
        Require.that(q != null && q.length >= 1, "q must be [B][H][tq][D] with B >= 1");
        Require.that(q[0] != null && q[0].length >= 1, "q must be [B][H][tq][D] with H >= 1");
        Require.that(q[0][0] != null && q[0][0].length >= 1, "q must be [B][H][tq][D] with tq >= 1");
        Require.that(q[0][0][0] != null && q[0][0][0].length >= 1, "q must be [B][H][tq][D] with D >= 1");
        int b = q.length, h = q[0].length, tq = q[0][0].length, d = q[0][0][0].length;
        for (int i = 0; i < b; i++) {
            Require.that(q[i] != null && q[i].length == h, "q[" + i + "] must have H = " + h + " heads");
            for (int j = 0; j < h; j++) {
                shape("q[" + i + "][" + j + "]", q[i][j], tq, d);
            }
        }
        Require.that(k != null && k.length == b, "k must be [B][tk][D] with B = " + b);
        Require.that(k[0] != null, "k[0] must not be null");
        int tk = k[0].length;
        Require.that(v != null && v.length == b, "v must be [B][tk][D] with B = " + b);
        for (int i = 0; i < b; i++) {
            shape("k[" + i + "]", k[i], tk, d);
            shape("v[" + i + "]", v[i], tk, d);
        }
        long tkFull = (long) rawPrefix + tk;
        Require.that(tq <= tkFull, "tq = " + tq + " must be <= tkFull = rawPrefix + tk = " + tkFull);
        int tc = 0;
        if (ratio > 0 && compressed != null) {
            Require.that(compressed.length == b && compressed[0] != null,
                    "compressed must be [B][tc][D] with B = " + b);
            tc = compressed[0].length;
            for (int i = 0; i < b; i++) {
                shape("compressed[" + i + "]", compressed[i], tc, d);
            }
        }
        Require.that(tkFull + tc <= Integer.MAX_VALUE, "tkFull + tc = " + (tkFull + tc) + " must fit an int");
        if (sinks != null) {
            Require.that(sinks.length == h, "sinks.length = " + sinks.length + " must equal H = " + h);
            for (int j = 0; j < h; j++) {
                Require.logit("sinks[" + j + "]", sinks[j]);
            }
        }
        if (callerMask != null) {
            long width = tkFull + tc;
            Require.that(callerMask.length == b || callerMask.length == 1,
                    "callerMask batch axis = " + callerMask.length + " must be B = " + b + " or 1");
            for (int i = 0; i < callerMask.length; i++) {
                double[][] m = callerMask[i];
                Require.that(m != null && (m.length == tq || m.length == 1),
                        "callerMask[" + i + "] query axis must be tq = " + tq + " or 1");
                for (int r = 0; r < m.length; r++) {
                    Require.that(m[r] != null && m[r].length == width, "callerMask[" + i + "][" + r
                            + "] key axis must be tkFull + tc = " + width);
                    for (int c = 0; c < width; c++) {
                        Require.logit("callerMask[" + i + "][" + r + "][" + c + "]", m[r][c]);
                    }
                }
            }
        }
    }

    /** B, the batch size. */
    public int batch() { return q.length; }

    /** H, the number of query heads. */
    public int heads() { return q[0].length; }

    /** tq, the number of query rows. */
    public int tq() { return q[0][0].length; }

    /** tk, the number of raw keys present (from rawPrefix on). */
    public int tk() { return k[0].length; }

    /** tc, the number of compressed blocks; 0 when ratio == 0 or compressed is null. */
    public int tc() { return ratio == 0 || compressed == null ? 0 : compressed[0].length; }

    /** D, the head dimension. */
    public int headDim() { return q[0][0][0].length; }

    /** tkFull = rawPrefix + tk, one past the newest absolute raw position. */
    public long tkFull() { return (long) rawPrefix + tk(); }

    /** q0 = tkFull - tq, the absolute position of query row 0 (the constructor refuses tq > tkFull). */
    public long q0() { return tkFull() - tq(); }

    /** Shapes and config only (never the values), for failure messages. */
    @Override
    public String toString() {
        return "UnionProblem[B=" + batch() + ", H=" + heads() + ", tq=" + tq() + ", tk=" + tk() + ", tc=" + tc()
                + ", D=" + headDim() + ", window=" + window + ", ratio=" + ratio + ", rawPrefix=" + rawPrefix
                + ", sinks=" + (sinks != null) + ", callerMask=" + (callerMask != null) + "]";
    }

    private static void shape(String name, double[][] a, int rows, int cols) {
        Require.that(a != null && a.length == rows, name + " must have " + rows + " rows, got "
                + (a == null ? "null" : a.length));
        for (int r = 0; r < rows; r++) {
            Require.that(a[r] != null && a[r].length == cols, name + "[" + r + "] must have length " + cols
                    + ", got " + (a[r] == null ? "null" : a[r].length));
        }
    }
}
