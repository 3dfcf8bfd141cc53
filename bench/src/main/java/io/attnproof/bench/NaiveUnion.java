package io.attnproof.bench;

/**
 * The naive scalar Java baseline of the same math: for every (b, h, r), every union column through the admit rule,
 * a plain dot product, a two-pass softmax with the sink in the denominator ({@code Math.exp}), then PV, one thread,
 * arrays in, array out (the shape of the system under test's loops before the fast path).
 */
public final class NaiveUnion {
    private NaiveUnion() {
    }

    /**
     * {@code q[B,H,tq,D]}, raw keys {@code k[B,tk,D]} at absolute positions {@code rawPrefix ..} (V = K), blocks
     * {@code c[B,tc,D]} (null for none), sinks {@code [H]}; window {@code w}, ratio {@code ratio}. Returns
     * {@code [B,H,tq,D]}.
     */
    public static float[] attend(float[] q, int batch, int heads, int tq, int d, float[] k, int tk, int rawPrefix,
            float[] c, int tc, float[] sinks, int w, int ratio) {
        long tkFull = (long) rawPrefix + tk;
        long q0 = tkFull - tq;
        int n = tk + tc;
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] out = new float[batch * heads * tq * d];
        float[] scores = new float[n];
        boolean[] admitted = new boolean[n];
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < heads; h++) {
                for (int r = 0; r < tq; r++) {
                    long p = q0 + r;
                    int qo = ((b * heads + h) * tq + r) * d;
                    float m = sinks[h];
                    for (int col = 0; col < n; col++) {
                        float[] src = col < tk ? k : c;
                        int ko = col < tk ? (b * tk + col) * d : (b * tc + col - tk) * d;
                        long j = rawPrefix + col;
                        admitted[col] = col < tk ? p - w < j && j <= p : ratio > 0 && col - tk < (p + 1) / ratio;
                        if (admitted[col]) {
                            float dot = 0f;
                            for (int e = 0; e < d; e++) {
                                dot += q[qo + e] * src[ko + e];
                            }
                            scores[col] = dot * scale;
                            m = Math.max(m, scores[col]);
                        }
                    }
                    float denom = (float) Math.exp(sinks[h] - m);
                    for (int col = 0; col < n; col++) {
                        if (admitted[col]) {
                            scores[col] = (float) Math.exp(scores[col] - m);
                            denom += scores[col];
                        }
                    }
                    for (int col = 0; col < n; col++) {
                        if (admitted[col]) {
                            float pr = scores[col] / denom;
                            float[] src = col < tk ? k : c;
                            int vo = col < tk ? (b * tk + col) * d : (b * tc + col - tk) * d;
                            for (int e = 0; e < d; e++) {
                                out[qo + e] += pr * src[vo + e];
                            }
                        }
                    }
                }
            }
        }
        return out;
    }
}
