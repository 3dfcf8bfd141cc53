package io.attnproof.attention.engine;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The union kernel one head at a time in plain f32 arithmetic ({@link UnionLanes} states the operations). It is the
 * engine where {@code jdk.incubator.vector} is absent and the reference the vector engine is tested against, bit for
 * bit.
 */
final class ScalarLanes extends UnionLanes {
    static final ScalarLanes INSTANCE = new ScalarLanes();

    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT;
    static final Pool<Scratch> SCRATCH = new Pool<>(Scratch::new);

    static final class Scratch {
        final Admission.Row row = new Admission.Row();
        float[] p = new float[LaneMath.TILE];
        float[] q = new float[0];
        float[] k = new float[0];
        float[] v = new float[0];
    }

    @Override
    String describe() {
        return "scalar f32";
    }

    @Override
    void run(UnionCall c) {
        boolean perHead = c.admission().perHead();
        int perRow = perHead ? c.heads() : 1;
        int groups = c.batch() * c.tq() * perRow;
        forEach(groups, parallel(c.macs()), SCRATCH, (scratch, g) -> {
            int b = g / (c.tq() * perRow);
            int r = g / perRow % c.tq();
            int h0 = perHead ? g % perRow : 0;
            group(c, b, r, h0, perHead ? h0 + 1 : c.heads(), scratch);
        });
    }

    static void group(UnionCall c, int b, int r, int h0, int h1, Scratch s) {
        Admission.Row row = s.row;
        c.admission().fill(b, h0, r, row);
        int d = c.headDim();
        float[] out = c.out();
        boolean twoPass = c.form().twoPass();
        // The unfused form takes every admitted key as one tile.
        int tile = twoPass ? Math.max(1, row.count) : LaneMath.TILE;
        s.q = UnionLanes.grow(s.q, d);
        s.k = UnionLanes.grow(s.k, tile * d);
        s.v = UnionLanes.grow(s.v, tile * d);
        s.p = UnionLanes.grow(s.p, tile);
        for (int h = h0; h < h1; h++) {
            MemorySegment.copy(c.q(), F, c.qByteOffset(b, h, r), s.q, 0, d);
            int o = c.outOffset(b, h, r);
            float sink = c.sink(b, h);
            float m = sink;
            float l = 0f;
            for (int t0 = 0; t0 < row.count; t0 += tile) {
                int tn = Math.min(tile, row.count - t0);
                float tileMax = scoreTile(c, b, row, t0, tn, s.q, s.k, s.v, s.p);
                float mNew = Math.max(m, tileMax);
                boolean dead = mNew == Float.NEGATIVE_INFINITY;
                float alpha = dead ? 0f : LaneMath.exp(m - mNew);
                l = l * alpha;
                if (twoPass) {
                    // The sink's term first, then the keys' in order; the weights normalised before PV.
                    alpha = dead ? 0f : 1f;
                    l = dead ? 0f : LaneMath.exp(sink - mNew);
                }
                for (int i = 0; i < tn; i++) {
                    float p = dead ? 0f : LaneMath.exp(s.p[i] - mNew);
                    s.p[i] = p;
                    l = l + p;
                }
                if (twoPass && !dead) {
                    for (int i = 0; i < tn; i++) {
                        s.p[i] = s.p[i] / l;
                    }
                }
                for (int e = 0; e < d; e++) {
                    float a = out[o + e] * alpha;
                    for (int i = 0; i < tn; i++) {
                        a = Math.fma(s.p[i], s.v[i * d + e], a);
                    }
                    out[o + e] = a;
                }
                m = mNew;
            }
            if (m == Float.NEGATIVE_INFINITY) {
                java.util.Arrays.fill(out, o, o + d, 0f);
            } else if (!twoPass) {
                float denom = l + LaneMath.exp(sink - m);
                for (int e = 0; e < d; e++) {
                    out[o + e] = out[o + e] / denom;
                }
            }
        }
    }
    /**
     * One tile of admitted ordinals {@code [t0, t0 + tn)} of {@code row}: its keys and values gathered into {@code k}
     * and {@code v}, its scores {@code fma(q, k) * scale (+ bias)} into {@code p}; returns the tile's max score.
     */
    static float scoreTile(UnionCall c, int b, Admission.Row row, int t0, int tn, float[] q, float[] k, float[] v,
            float[] p) {
        int d = c.headDim();
        float tileMax = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < tn; i++) {
            int col = row.cols[t0 + i];
            MemorySegment.copy(c.keys().data(col), F, c.keys().byteOffset(b, col), k, i * d, d);
            MemorySegment.copy(c.values().data(col), F, c.values().byteOffset(b, col), v, i * d, d);
            float acc = 0f;
            for (int e = 0; e < d; e++) {
                acc = Math.fma(q[e], k[i * d + e], acc);
            }
            float score = acc * c.scale();
            if (row.biased) {
                score = score + row.bias[t0 + i];
            }
            p[i] = score;
            tileMax = Math.max(tileMax, score);
        }
        return tileMax;
    }
}
