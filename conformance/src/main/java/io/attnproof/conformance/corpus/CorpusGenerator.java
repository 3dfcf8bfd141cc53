package io.attnproof.conformance.corpus;

import io.attnproof.attention.tensor.DType;
import io.attnproof.fixtures.gen.Streams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Builds the corpus in memory: per claim its cases (seeded from the corpus seed and the case group's name) and its
 * checks, every claim with a negative control that must fail. Claims not about sinks give their cases a sink of
 * weight 0 ({@link UnionData#NO_SINK}, or -inf in the sinks kind) and claims not about the raw window a window no key
 * falls outside of, so that a bug shows up under the claims it breaks and no other.
 */
public final class CorpusGenerator {
    /** The claims the corpus covers, in catalog order. */
    public static final List<String> CLAIMS = List.of("U1", "U2", "U3", "U4", "U5", "U6", "U7", "U8", "R1", "R5",
            "R9", "S1", "S2", "S6", "V1", "V3", "B1", "B2", "B4", "B5", "B6");

    private final long seed;
    private final boolean small;
    private final List<CaseSpec> cases = new ArrayList<>();
    private final List<CheckSpec> checks = new ArrayList<>();

    private CorpusGenerator(long seed, boolean small) {
        this.seed = seed;
        this.small = small;
    }

    /** The corpus of {@code seed}: every claim of {@link #CLAIMS} at every dtype (small: mostly F32, fewer shapes). */
    public static CorpusGenerator build(long seed, boolean small) {
        CorpusGenerator g = new CorpusGenerator(seed, small);
        g.u1();
        g.u2();
        g.u3();
        g.u4();
        g.u5();
        g.u6();
        g.u7();
        g.u8();
        g.r1("R1", 3);
        g.r5();
        g.r1("R9", 1);
        g.s1();
        g.s2();
        g.s6();
        g.v1v3();
        g.b1();
        g.b2();
        g.b6();
        g.realShapes();
        return g;
    }

    public List<CaseSpec> cases() {
        return List.copyOf(cases);
    }

    public List<CheckSpec> checks() {
        return List.copyOf(checks);
    }

    // ---------------------------------------------------------------------------------------------------------------

    private long seedOf(String group) {
        return Streams.named(seed, group).nextLong() >>> 1;
    }

    private List<DType> dtypes() {
        return small ? List.of(DType.F32) : List.of(DType.F32, DType.F16, DType.BF16);
    }

    private static String dt(DType t) {
        return t.name();
    }

    private String add(UnionData x, String id, String claim, DType t, long s, String what) {
        cases.add(x.toCase(id, claim, t, s, claim + ": " + what + " (" + x.shapeText() + ", " + t + ", seed " + s + ")"));
        return id;
    }

    private String add(SinksData x, String id, String claim, DType t, long s, String what) {
        cases.add(x.toCase(id, claim, t, s, claim + ": " + what + " (sinks attention, " + x.shapeText() + ", " + t
                + ", seed " + s + ")"));
        return id;
    }

    private void oracle(String claim, String caseId, String note) {
        checks.add(new CheckSpec(claim + ":oracle:" + caseId, claim, "oracle", "pass", CheckSpec.Sel.all(caseId), null,
                null, note));
    }

    private void control(String claim, String caseId, String against, String note) {
        checks.add(new CheckSpec(claim + ":control:" + caseId, claim, "oracle", "fail", CheckSpec.Sel.all(caseId), null,
                against, note));
    }

    private void pair(String claim, String type, String expect, CheckSpec.Sel a, CheckSpec.Sel b, String note) {
        String id = claim + ":" + (expect.equals("fail") ? "control-" : "") + type + ":" + a.caseId()
                + (a.whole() ? "" : "[b" + a.b0() + ",r" + a.r0() + "]") + ":" + b.caseId()
                + (b.whole() ? "" : "[b" + b.b0() + ",r" + b.r0() + "]");
        checks.add(new CheckSpec(id, claim, type, expect, a, b, null, note));
    }

    private void degenerate(String claim, String caseId, String against, String expect, String note) {
        checks.add(new CheckSpec(claim + ":" + (expect.equals("fail") ? "control-" : "") + "degenerate:" + caseId, claim,
                "degenerate", expect, CheckSpec.Sel.all(caseId), null, against, note));
    }

    // ---- U: union attention -----------------------------------------------------------------------------------------

    /** U1: the raw window at t_k in {W-1, W, W+1, 2W, 4W+1} (ratio 0, W 8); control: window W+1. */
    private void u1() {
        int w = 8;
        for (DType t : dtypes()) {
            for (int tk : new int[] {w - 1, w, w + 1, 2 * w, 4 * w + 1}) {
                long s = seedOf("U1-tk" + tk);
                UnionData x = UnionData.random(s, 2, 2, Math.min(4, tk), tk, 0, 16, 0, w, false);
                String id = add(x, "U1-tk" + tk + "-" + dt(t), "U1", t, s, "raw window at t_k " + tk);
                oracle("U1", id, "the raw window admits j iff p - W < j <= p");
                if (tk == 2 * w) {
                    UnionData wide = x.copy();
                    wide.window = w + 1;
                    String c = add(wide, "U1-tk" + tk + "-window+1-" + dt(t), "U1", t, s, "control: window W+1");
                    control("U1", c, id, "window W + 1 admits one key too many: must miss W's oracle");
                }
            }
        }
    }

    /** U2: compressed thresholds at ratio 4 and 128 (window wide open); control: drop the last admitted block. */
    private void u2() {
        for (DType t : dtypes()) {
            for (int[] shape : new int[][] {{4, 22, 6, 5, 16, 64}, {128, 260, 8, 2, 8, 512}}) {
                int r = shape[0];
                long s = seedOf("U2-r" + r);
                UnionData x = UnionData.random(s, 2, 2, shape[2], shape[1], shape[3], shape[4], r, shape[5], false);
                String id = add(x, "U2-r" + r + "-" + dt(t), "U2", t, s, "compressed threshold b < floor((p+1)/R)");
                oracle("U2", id, "compressed block b admitted iff b < floor((p+1)/R)");
                String c = add(x.copy().dropBlocks(1), "U2-r" + r + "-drop-block-" + dt(t), "U2", t, s,
                        "control: the last admitted block dropped");
                control("U2", c, id, "a dropped admitted block must miss the oracle");
            }
        }
    }

    /** U3: narrowed to the keep span vs the whole cache (NaN canaries before base): same bits; control: span off by one. */
    private void u3() {
        for (DType t : dtypes()) {
            long s = seedOf("U3");
            int tk = 40;
            int tq = 4;
            int w = 8;
            UnionData whole = UnionData.random(s, 2, 2, tq, tk, tk / 4, 16, 4, w, false);
            int keep = Math.min(tq + w - 1, tk);
            int base = tk - keep;
            UnionData narrowed = whole.copy().sliceKeys(base, keep);
            narrowed.rawPrefix = base;
            UnionData offset = whole.copy().sliceKeys(base - 1, keep);
            offset.rawPrefix = base;
            UnionData canaries = whole.copy();
            for (int b = 0; b < canaries.b; b++) {
                for (int j = 0; j < base; j++) {
                    canaries.nanKey(b, j);
                }
            }
            String w0 = add(canaries, "U3-whole-" + dt(t), "U3", t, s, "the whole cache, NaN canaries before base");
            String n0 = add(narrowed, "U3-narrowed-" + dt(t), "U3", t, s, "k narrowed to the keep span");
            String o0 = add(offset, "U3-offset-" + dt(t), "U3", t, s, "control: the span sliced one key early");
            oracle("U3", w0, "the whole cache; keys before base are never read");
            oracle("U3", n0, "the keep span alone");
            pair("U3", "same-bits", "pass", CheckSpec.Sel.all(n0), CheckSpec.Sel.all(w0),
                    "narrowing to the keep span is an identity: the same bits");
            pair("U3", "same-within-rule", "fail", CheckSpec.Sel.all(o0), CheckSpec.Sel.all(w0),
                    "a span off by one key must differ from the whole cache by more than the limit");
        }
    }

    /** U4: caller masks rank 2 (raw + compressed), rank 4 (raw only), [1,H,1,n]; control: the mask dropped. */
    private void u4() {
        for (DType t : dtypes()) {
            long s = seedOf("U4");
            int b = 2;
            int h = 3;
            int tq = 5;
            int tk = 24;
            int tc = 6;
            UnionData x = UnionData.random(s, b, h, tq, tk, tc, 16, 4, 64, false);
            SplittableRandom rng = Streams.named(s, "caller-mask");
            int[][] shapes = {{tq, tk + tc}, {b, h, tq, tk}, {1, h, 1, tk + tc}};
            String[] names = {"rank2", "rank4-raw", "head-axis"};
            for (int i = 0; i < shapes.length; i++) {
                if (small && i == 2) {
                    continue;
                }
                UnionData m = x.copy();
                m.maskShape = shapes[i];
                m.mask = new float[Arrays.stream(shapes[i]).reduce(1, (p, q) -> p * q)];
                for (int j = 0; j < m.mask.length; j++) {
                    double u = rng.nextDouble();
                    m.mask[j] = u < 0.2 ? Float.NEGATIVE_INFINITY : u < 0.6 ? (float) (-rng.nextDouble()) : 0f;
                }
                String id = add(m, "U4-" + names[i] + "-" + dt(t), "U4", t, s, "caller mask " + names[i]);
                oracle("U4", id, "the caller mask composes as docs/system.md §4.6 says");
                if (i == 0) {
                    String c = add(x.copy(), "U4-no-mask-" + dt(t), "U4", t, s, "control: the caller mask dropped");
                    control("U4", c, id, "the mask dropped must miss the masked oracle");
                }
            }
        }
    }

    /** U5: W 128, R 4 and 128, t_k in {127,128,129,256,512,513}; controls: drop a block, drop the sink, window + 1. */
    private void u5() {
        for (DType t : List.of(DType.F32, DType.F16, DType.BF16)) {
            for (int r : new int[] {4, 128}) {
                for (int tk : new int[] {127, 128, 129, 256, 512, 513}) {
                    boolean inSmall = t == DType.F32 ? (r == 4 && (tk == 129 || tk == 256)) || (r == 128 && tk == 256)
                            : r == 4 && tk == 129;
                    if (small && !inSmall) {
                        continue;
                    }
                    long s = seedOf("U5-r" + r + "-tk" + tk);
                    UnionData x = UnionData.random(s, 2, 2, 16, tk, tk / r, 32, r, 128, true);
                    String id = add(x, "U5-r" + r + "-tk" + tk + "-" + dt(t), "U5", t, s, "union output vs the oracle");
                    oracle("U5", id, "union attention matches the fp64 oracle");
                    if (tk == 256 && t == DType.F32) {   // one key among ~190 is inside the 16-bit tolerance
                        String c1 = add(x.copy().dropBlocks(1), "U5-r" + r + "-tk" + tk + "-drop-block-" + dt(t), "U5",
                                t, s, "control: the last block dropped");
                        control("U5", c1, id, "a dropped block must miss the oracle");
                        UnionData noSink = x.copy();
                        Arrays.fill(noSink.sinks, UnionData.NO_SINK);
                        String c2 = add(noSink, "U5-r" + r + "-tk" + tk + "-no-sink-" + dt(t), "U5", t, s,
                                "control: the sink dropped");
                        control("U5", c2, id, "the sink dropped must miss the oracle");
                        UnionData wide = x.copy();
                        wide.window = 129;
                        String c3 = add(wide, "U5-r" + r + "-tk" + tk + "-window+1-" + dt(t), "U5", t, s,
                                "control: window + 1");
                        control("U5", c3, id, "window + 1 must miss the oracle");
                    }
                }
            }
        }
    }

    /** U6: decode (t_q 1, H 8, sinks) at every ratio class; control: one sink for all heads (per KV head). */
    private void u6() {
        for (DType t : dtypes()) {
            for (int[] shape : new int[][] {{0, 40, 0, 64}, {4, 40, 10, 64}, {128, 300, 2, 512}}) {
                int r = shape[0];
                long s = seedOf("U6-r" + r);
                UnionData x = UnionData.random(s, 2, 8, 1, shape[1], shape[2], 32, r, shape[3], true);
                if (r == 4) {
                    // Sinks that carry a share of the mass, so that the control's wrong sink moves the output by
                    // at least twice the BF16 limit (N(0,1) sinks among 50 keys missed it by under 1.1x).
                    for (int i = 0; i < x.h; i++) {
                        x.sinks[i] += 3f;
                    }
                }
                String id = add(x, "U6-r" + r + "-" + dt(t), "U6", t, s, "decode, absorbed MQA");
                oracle("U6", id, "absorbed MQA decode equals the repeat-KV math (the oracle)");
                if (r == 4) {
                    UnionData perKv = x.copy();
                    Arrays.fill(perKv.sinks, perKv.sinks[0]);
                    String c = add(perKv, "U6-r" + r + "-sink-per-kv-head-" + dt(t), "U6", t, s,
                            "control: head 0's sink for every head");
                    control("U6", c, id, "a sink per KV head instead of per query head must miss the oracle");
                }
            }
        }
    }

    /** U7: decode at positions 14, 15, 16 (R 4) with 2 blocks past the threshold present; control: p 15 vs p 14. */
    private void u7() {
        for (DType t : dtypes()) {
            long s = seedOf("U7");
            UnionData base = UnionData.random(s, 2, 2, 1, 17, 17 / 4 + 2, 16, 4, 64, false);
            String[] ids = new String[3];
            for (int i = 0; i < 3; i++) {
                int p = 14 + i;
                UnionData x = base.copy().sliceKeys(0, p + 1);
                ids[i] = add(x, "U7-p" + p + "-" + dt(t), "U7", t, s, "decode at position " + p + ", threshold "
                        + (p + 1) / 4 + " of " + x.tc + " blocks");
                oracle("U7", ids[i], "the compressed threshold at the row's position, blocks past it never read");
            }
            control("U7", ids[1], ids[0], "position 15 (threshold 4) must miss position 14's oracle (threshold 3)");
        }
    }

    /** U8: sinks dominant; a fully masked row gives zeros; control: the sink dropped. */
    private void u8() {
        for (DType t : dtypes()) {
            long s = seedOf("U8");
            UnionData x = UnionData.random(s, 2, 4, 4, 24, 6, 16, 4, 64, true);
            for (int i = 0; i < x.h; i++) {
                x.sinks[i] += 3f;
            }
            String heavy = add(x, "U8-heavy-sink-" + dt(t), "U8", t, s, "sinks in the denominator only, heavy sinks");
            oracle("U8", heavy, "the sink in the denominator only");
            UnionData masked = x.copy();
            masked.maskShape = new int[] {4, 24 + 6};
            masked.mask = new float[4 * 30];
            Arrays.fill(masked.mask, 30, 60, Float.NEGATIVE_INFINITY);
            String m = add(masked, "U8-masked-row-" + dt(t), "U8", t, s, "row 1 fully masked by the caller: zeros");
            degenerate("U8", m, null, "pass", "a fully masked row gives zeros, never NaN");
            UnionData noSink = x.copy();
            Arrays.fill(noSink.sinks, UnionData.NO_SINK);
            String c = add(noSink, "U8-no-sink-" + dt(t), "U8", t, s, "control: the sink dropped");
            control("U8", c, heavy, "the sink dropped must miss the oracle");
        }
    }

    // ---- R: ragged cohorts --------------------------------------------------------------------------------------------

    /** R1 (tq 3) and R9 (tq 1): each row of a ragged cohort vs that row alone; control: the batch-wide position. */
    private void r1(String claim, int tq) {
        int[][] classes = claim.equals("R9") ? new int[][] {{4, 40, 10, 64}, {128, 300, 2, 512}}
                : new int[][] {{0, 40, 0, 64}, {4, 40, 10, 64}, {128, 300, 2, 512}};
        for (DType t : dtypes()) {
            for (int[] c : classes) {
                int r = c[0];
                int tk = c[1];
                long s = seedOf(claim + "-r" + r);
                UnionData x = UnionData.random(s, 4, 2, tq, tk, c[2], 16, r, c[3], true);
                long q0 = tk - tq;
                long[] rowQ0 = tk == 300 ? new long[] {q0, q0 - 7, q0 - 47, q0 - 97}
                        : new long[] {q0, q0 - 4, q0 - 15, q0 - 27};
                UnionData ragged = x.copy();
                ragged.rowQ0 = rowQ0;
                for (int b = 0; b < 4; b++) {
                    for (int j = 0; j < q0 - rowQ0[b]; j++) {
                        ragged.nanKey(b, j);
                    }
                }
                String prefix = claim + "-r" + r;
                String id = add(ragged, prefix + "-ragged-" + dt(t), claim, t, s,
                        "left-aligned ragged cohort, NaN canaries in the dead prefixes");
                oracle(claim, id, "each row against itself alone, its dead prefix absent");
                for (int b = 0; b < 4; b++) {
                    int lead = (int) (q0 - rowQ0[b]);
                    UnionData alone = x.copy().row(b).sliceKeys(lead, tk - lead);
                    String a = add(alone, prefix + "-row" + b + "-alone-" + dt(t), claim, t, s,
                            "row " + b + " alone, dead prefix absent");
                    oracle(claim, a, "the row alone");
                    pair(claim, "same-within-rule", "pass", CheckSpec.Sel.rows(id, b, b + 1, 0, tq),
                            CheckSpec.Sel.all(a), "row " + b + " of the cohort equals the row run alone");
                }
                String batchWide = add(x.copy(), prefix + "-batch-wide-" + dt(t), claim, t, s,
                        "control: no rowQ0, the dead prefixes live keys");
                control(claim, batchWide, id, "the batch-wide position must miss the per-row oracle");
                int last = (int) (q0 - rowQ0[3]);
                pair(claim, "same-within-rule", "fail", CheckSpec.Sel.rows(batchWide, 3, 4, 0, tq),
                        CheckSpec.Sel.all(prefix + "-row3-alone-" + dt(t)),
                        "row 3 at the batch-wide position (dead prefix " + last + ") must differ from the row alone");
            }
        }
    }

    /** R5: a uniform rowQ0 is byte-identical to none; control: one row 3 positions behind. */
    private void r5() {
        for (DType t : dtypes()) {
            long s = seedOf("R5");
            UnionData x = UnionData.random(s, 3, 2, 4, 30, 7, 16, 4, 64, false);
            long q0 = x.q0();
            UnionData uniform = x.copy();
            uniform.rowQ0 = new long[] {q0, q0, q0};
            UnionData ragged = x.copy();
            ragged.rowQ0 = new long[] {q0, q0 - 3, q0};
            String none = add(x, "R5-none-" + dt(t), "R5", t, s, "no rowQ0");
            String uni = add(uniform, "R5-uniform-" + dt(t), "R5", t, s, "rowQ0 uniform, every row at q0");
            String rag = add(ragged, "R5-ragged-" + dt(t), "R5", t, s, "control: row 1 three positions behind");
            oracle("R5", none, "the scalar path");
            pair("R5", "same-bits", "pass", CheckSpec.Sel.all(uni), CheckSpec.Sel.all(none),
                    "a uniform rowQ0 gives the same bits as none");
            pair("R5", "same-within-rule", "fail", CheckSpec.Sel.all(rag), CheckSpec.Sel.all(none),
                    "a non-uniform rowQ0 must change the output (else the equality above proves nothing)");
        }
    }

    // ---- S: sinks attention -------------------------------------------------------------------------------------------

    /** S1: masked sinks attention (rank 4 and rank 2 masks); control: the mask dropped. */
    private void s1() {
        for (DType t : dtypes()) {
            for (int d : small ? new int[] {64} : new int[] {64, 128}) {
                long s = seedOf("S1-d" + d);
                SinksData x = SinksData.dense(s, 2, 4, 2, 8, 16, d, 0, true);
                SinksData m = x.copy();
                SplittableRandom rng = Streams.named(s, "mask");
                m.maskShape = d == 64 ? new int[] {2, 1, 8, 16} : new int[] {8, 16};
                m.mask = new float[Arrays.stream(m.maskShape).reduce(1, (p, q) -> p * q)];
                for (int i = 0; i < m.mask.length; i++) {
                    double u = rng.nextDouble();
                    m.mask[i] = u < 0.25 ? Float.NEGATIVE_INFINITY : (float) (0.5 * rng.nextGaussian());
                }
                String id = add(m, "S1-d" + d + "-masked-" + dt(t), "S1", t, s, "caller mask on a fused-envelope head dim");
                oracle("S1", id, "masked sinks attention matches the masked reference");
                String c = add(x, "S1-d" + d + "-unmasked-" + dt(t), "S1", t, s, "control: the mask dropped");
                control("S1", c, id, "the causal-only output must miss the masked reference");
            }
        }
    }

    /** S2: a padding-column mask [B,1,1,tk]; control: dropped. */
    private void s2() {
        for (DType t : dtypes()) {
            long s = seedOf("S2");
            SinksData x = SinksData.dense(s, 2, 4, 1, 4, 12, 64, 0, true);
            SinksData m = x.copy();
            m.maskShape = new int[] {2, 1, 1, 12};
            m.mask = new float[24];
            Arrays.fill(m.mask, 12, 17, Float.NEGATIVE_INFINITY);
            String id = add(m, "S2-padding-" + dt(t), "S2", t, s, "row 1 left-padded by 5 columns");
            oracle("S2", id, "a padding-column mask is honoured");
            String c = add(x, "S2-unmasked-" + dt(t), "S2", t, s, "control: the padding mask dropped");
            control("S2", c, id, "dropping the padding mask must miss the reference");
        }
    }

    /** S6: packed varlen rows, windows 0 and 3; controls: window 4, cu_seqlens off by one. */
    private void s6() {
        for (DType t : dtypes()) {
            long s = seedOf("S6");
            for (int w : new int[] {0, 3}) {
                SinksData x = SinksData.varlen(s, new int[] {3, 4, 2}, new int[] {5, 4, 7}, 4, 2, 16, w, true);
                String id = add(x, "S6-varlen-w" + w + "-" + dt(t), "S6", t, s, "packed varlen rows, window " + w);
                oracle("S6", id, "the varlen fallback is causal and windowed");
                if (w == 3) {
                    SinksData wide = x.copy();
                    wide.window = 4;
                    String c = add(wide, "S6-varlen-w3-window+1-" + dt(t), "S6", t, s, "control: window 4");
                    control("S6", c, id, "window + 1 must miss the oracle");
                } else {
                    SinksData shifted = x.copy();
                    shifted.cuQ = new int[] {0, 4, 7, 9};
                    shifted.cuK = new int[] {0, 6, 9, 16};
                    String c = add(shifted, "S6-varlen-w0-cu-seqlens+1-" + dt(t), "S6", t, s,
                            "control: the first boundary one row late");
                    control("S6", c, id, "cu_seqlens off by one must miss the oracle");
                }
            }
        }
    }

    // ---- V: V = K ---------------------------------------------------------------------------------------------------

    /** V1: V given as a copy of K vs V absent (same bits); V3: a distinct V changes the output. */
    private void v1v3() {
        for (DType t : dtypes()) {
            long s = seedOf("V1");
            UnionData x = UnionData.random(s, 2, 2, 4, 24, 6, 16, 4, 64, false);
            UnionData copy = x.copy();
            copy.v = x.k.clone();
            UnionData distinct = x.copy().withDistinctV(s);
            String absent = add(x, "V1-v-absent-" + dt(t), "V1", t, s, "V absent: V is K");
            String c = add(copy, "V1-v-copy-" + dt(t), "V1", t, s, "V a copy of K");
            String dv = add(distinct, "V3-v-distinct-" + dt(t), "V3", t, s, "a distinct V");
            oracle("V1", absent, "V is K");
            oracle("V1", c, "V a copy of K");
            pair("V1", "same-bits", "pass", CheckSpec.Sel.all(c), CheckSpec.Sel.all(absent),
                    "a copy of K as V gives the same bits as V absent");
            pair("V1", "same-within-rule", "fail", CheckSpec.Sel.all(dv), CheckSpec.Sel.all(absent),
                    "control: a distinct V must differ from V = K");
            oracle("V3", dv, "a distinct V is used as V");
            pair("V3", "same-within-rule", "fail", CheckSpec.Sel.all(dv), CheckSpec.Sel.all(absent),
                    "a distinct V changes the output");
            pair("V3", "same-within-rule", "pass", CheckSpec.Sel.all(c), CheckSpec.Sel.all(absent),
                    "control: a V equal to K does not change it");
        }
    }

    // ---- B: boundaries, one vs N queries, degenerate rows ----------------------------------------------------------------

    /** B1: head dims at each envelope edge (prefill and decode), union tile edges, the split-K switch; control: window 1. */
    private void b1() {
        List<Integer> dims = small ? Boundaries.SMALL_HEAD_DIMS : Boundaries.around(Boundaries.HEAD_DIM_EDGES);
        for (DType t : dtypes()) {
            for (int d : dims) {
                long s = seedOf("B1-d" + d);
                SinksData x = SinksData.dense(s, 1, 2, 1, 4, 16, d, 0, false);
                String id = add(x, "B1-d" + d + "-prefill-" + dt(t), "B1", t, s, "head dim " + d + ", prefill");
                oracle("B1", id, "head dim " + d + " at an envelope edge");
                if (!small || d == 64) {
                    SinksData dec = SinksData.dense(s, 1, 2, 1, 1, 16, d, 0, false);
                    String di = add(dec, "B1-d" + d + "-decode-" + dt(t), "B1", t, s, "head dim " + d + ", decode");
                    oracle("B1", di, "head dim " + d + ", single query");
                }
                if (d == 64) {
                    SinksData w1 = x.copy();
                    w1.window = 1;
                    String c = add(w1, "B1-d64-window1-" + dt(t), "B1", t, s, "control: window 1");
                    control("B1", c, id, "a window of 1 must miss the unwindowed oracle");
                }
            }
            for (int kv : Boundaries.around(Boundaries.SPLIT_K_EDGES)) {
                long s = seedOf("B1-kv" + kv);
                SinksData x = SinksData.dense(s, 1, 2, 1, 1, kv, 64, 0, false);
                oracle("B1", add(x, "B1-split-kv" + kv + "-" + dt(t), "B1", t, s, "decode at kv_len " + kv),
                        "decode at the split-K switch");
            }
            for (int tk : Boundaries.around(Boundaries.UNION_TILE_EDGES)) {
                if (small && tk > 100) {
                    continue;
                }
                long s = seedOf("B1-tile" + tk);
                for (int tq : new int[] {1, 4}) {
                    UnionData x = UnionData.random(s, 1, 2, tq, tk, 0, 16, 0, 256, false);
                    oracle("B1", add(x, "B1-tile-tk" + tk + "-tq" + tq + "-" + dt(t), "B1", t, s,
                            "union, " + tk + " admitted keys (tile 64)"), "a tile edge of the union kernel");
                }
            }
        }
    }

    /** B2: query r of an N-query call equals that query alone; control: the single query one position later. */
    private void b2() {
        for (DType t : dtypes()) {
            long s = seedOf("B2");
            UnionData x = UnionData.random(s, 2, 2, 6, 20, 5, 16, 4, 64, true);
            String id = add(x, "B2-prefill-" + dt(t), "B2", t, s, "6 queries");
            oracle("B2", id, "the N-query call");
            long q0 = x.q0();
            for (int r : new int[] {0, 3, 5}) {
                UnionData one = x.copy().query(r).sliceKeys(0, (int) (q0 + r + 1));
                String a = add(one, "B2-query" + r + "-alone-" + dt(t), "B2", t, s, "query " + r + " alone");
                pair("B2", "same-within-rule", "pass", CheckSpec.Sel.rows(id, 0, 2, r, r + 1), CheckSpec.Sel.all(a),
                        "query " + r + " of the N-query call equals the query alone");
            }
            UnionData late = x.copy().query(3).sliceKeys(0, (int) (q0 + 5));
            String c = add(late, "B2-query3-one-late-" + dt(t), "B2", t, s, "control: query 3 one position later");
            pair("B2", "same-within-rule", "fail", CheckSpec.Sel.rows(id, 0, 2, 3, 4), CheckSpec.Sel.all(c),
                    "query 3 at the next position must differ");
        }
    }

    /** B6: fully masked rows with and without a sink, all mass on the sink; control: the masked rows live. */
    private void b6() {
        for (DType t : dtypes()) {
            long s = seedOf("B6");
            SinksData x = SinksData.dense(s, 2, 4, 2, 4, 8, 16, 0, true);
            x.sinks[0] = Float.NEGATIVE_INFINITY;
            x.sinks[1] = Float.NEGATIVE_INFINITY;
            SinksData masked = x.copy();
            masked.maskShape = new int[] {2, 1, 4, 8};
            masked.mask = new float[64];
            Arrays.fill(masked.mask, 8, 16, Float.NEGATIVE_INFINITY);      // b 0, row 1: no live key
            Arrays.fill(masked.mask, 32 + 24, 32 + 32, Float.NEGATIVE_INFINITY); // b 1, row 3: no live key
            String id = add(masked, "B6-no-live-key-" + dt(t), "B6", t, s,
                    "rows with no live key, heads 0-1 without a sink, 2-3 with one");
            degenerate("B6", id, null, "pass", "fully masked rows give zeros with or without a sink, never NaN");
            SinksData heavy = x.copy();
            Arrays.fill(heavy.sinks, 12f);
            String h = add(heavy, "B6-all-mass-on-sink-" + dt(t), "B6", t, s, "sinks 12: all mass on the sink");
            degenerate("B6", h, null, "pass", "all mass on the sink: outputs near zero, never NaN");
            SinksData live = x.copy();
            live.maskShape = masked.maskShape.clone();
            live.mask = new float[64];
            String c = add(live, "B6-rows-live-" + dt(t), "B6", t, s, "control: the masked rows live");
            degenerate("B6", c, id, "fail", "live rows must be nonzero where the degenerate oracle is exactly zero");
        }
    }

    // ---- Real shapes: the head dims, GQA ratios, decode batches and key counts of fused kernels ------------------------

    /** The head dims of real-shape cases: every fused envelope in the full corpus, one in the small. */
    private int[] realDims() {
        return small ? new int[] {80} : new int[] {64, 80, 96, 128, 256, 512};
    }

    /** A mask over [B, 1, tq, tk] with roughly a quarter of the entries -inf and the rest small biases. */
    private static void randomMask(SinksData m, long s) {
        SplittableRandom rng = Streams.named(s, "mask");
        m.maskShape = new int[] {m.b, 1, m.tq, m.tk};
        m.mask = new float[m.b * m.tq * m.tk];
        for (int i = 0; i < m.mask.length; i++) {
            double u = rng.nextDouble();
            m.mask[i] = u < 0.25 ? Float.NEGATIVE_INFINITY : (float) (0.5 * rng.nextGaussian());
        }
    }

    /**
     * Sinks cases at real shapes: masked GQA 16/2 prefill (S1) and packed varlen GQA 16/2 (S6) at every fused head
     * dim; batched GQA decode with more cached keys than the window (B4) at GQA 16/2 and 64/8; batched split-K decodes
     * at kv 1023, 1024, 1025 and 3000 (B5); rows that admit no key with -inf sinks at GQA 16/2, and no sinks at all
     * (the field absent) (B6). Each kind has a control that must fail.
     */
    private void realShapes() {
        for (DType t : dtypes()) {
            for (int d : realDims()) {
                int hq = d == 512 ? 8 : 16;
                long s = seedOf("S1-gqa-d" + d);
                SinksData x = SinksData.dense(s, 1, hq, 2, 8, 16, d, 0, true);
                SinksData m = x.copy();
                randomMask(m, s);
                String id = add(m, "S1-gqa" + hq + "-2-d" + d + "-masked-" + dt(t), "S1", t, s,
                        "masked GQA " + hq + "/2 prefill at fused head dim " + d);
                oracle("S1", id, "masked sinks attention at a real head dim and GQA ratio");
                if (d == 80) {
                    String c = add(x, "S1-gqa" + hq + "-2-d" + d + "-unmasked-" + dt(t), "S1", t, s,
                            "control: the mask dropped");
                    control("S1", c, id, "the mask dropped must miss the masked reference");
                }
                long sv = seedOf("S6-gqa-d" + d);
                SinksData v = SinksData.varlen(sv, new int[] {1, 4, 4}, new int[] {9, 4, 6}, hq, 2, d, 0, true);
                String vid = add(v, "S6-gqa" + hq + "-2-d" + d + "-varlen-" + dt(t), "S6", t, sv,
                        "packed varlen GQA " + hq + "/2 (a decode row among prefills) at head dim " + d);
                oracle("S6", vid, "the varlen fallback at a real head dim and GQA ratio");
                if (d == 80) {
                    SinksData shifted = v.copy();
                    shifted.cuQ = new int[] {0, 2, 5, 9};   // max_q stays 4: the same output shape
                    shifted.cuK = new int[] {0, 10, 13, 19};
                    String c = add(shifted, "S6-gqa" + hq + "-2-d" + d + "-varlen-cu-seqlens+1-" + dt(t), "S6", t, sv,
                            "control: the first boundary one row late");
                    control("S6", c, vid, "cu_seqlens off by one must miss the oracle");
                }
            }
            // B4: a batched decode step with more cached keys than the window.
            int[][] decodes = small ? new int[][] {{3, 16, 2, 64}} : new int[][] {{3, 16, 2, 64}, {3, 16, 2, 128},
                {2, 64, 8, 128}};
            for (int[] g : decodes) {
                String shape = "b" + g[0] + "-gqa" + g[1] + "-" + g[2] + "-d" + g[3];
                long s = seedOf("B4-" + shape);
                SinksData x = SinksData.dense(s, g[0], g[1], g[2], 1, 300, g[3], 128, true);
                String id = add(x, "B4-decode-" + shape + "-kv300-w128-" + dt(t), "B4", t, s,
                        "batched decode, 300 cached keys, window 128");
                oracle("B4", id, "the decode step honours the window");
                if (g[1] == 16 && g[3] == 64) {
                    SinksData all = x.copy();
                    all.window = 0;
                    String c = add(all, "B4-decode-" + shape + "-kv300-no-window-" + dt(t), "B4", t, s,
                            "control: the window ignored");
                    control("B4", c, id, "a decode step that ignores the window must miss the oracle");
                }
            }
            // B5: batched split-K decodes around the switch and past it.
            int[] kvs = small ? new int[] {1025} : new int[] {1023, 1024, 1025, 3000};
            for (int kv : kvs) {
                int hq = small ? 4 : 16;
                int hkv = small ? 1 : 2;
                long s = seedOf("B5-kv" + kv);
                SinksData x = SinksData.dense(s, 2, hq, hkv, 1, kv, 64, 0, true);
                String id = add(x, "B5-decode-b2-gqa" + hq + "-" + hkv + "-kv" + kv + "-" + dt(t), "B5", t, s,
                        "batched two-pass decode at kv_len " + kv);
                oracle("B5", id, "split-K decode agrees with the oracle");
                if (kv == 1025) {
                    String c = add(x.firstKeys(512), "B5-decode-b2-gqa" + hq + "-" + hkv + "-kv" + kv + "-first-split-"
                            + dt(t), "B5", t, s, "control: only the first 512 keys (a split dropped)");
                    control("B5", c, id, "a dropped split must miss the oracle");
                }
            }
            // B6: rows that admit no key, -inf sinks on half the heads, at GQA 16/2; and no sinks at all.
            int d = small ? 64 : 128;
            long s = seedOf("B6-gqa-d" + d);
            SinksData x = SinksData.dense(s, 2, 16, 2, 4, 8, d, 0, true);
            for (int h = 0; h < 8; h++) {
                x.sinks[h] = Float.NEGATIVE_INFINITY;
            }
            SinksData masked = x.copy();
            masked.maskShape = new int[] {2, 1, 4, 8};
            masked.mask = new float[64];
            Arrays.fill(masked.mask, 0, 8, Float.NEGATIVE_INFINITY);            // b 0, row 0: no live key
            Arrays.fill(masked.mask, 32 + 16, 32 + 24, Float.NEGATIVE_INFINITY); // b 1, row 2: no live key
            String id = add(masked, "B6-gqa16-2-d" + d + "-no-live-key-" + dt(t), "B6", t, s,
                    "rows with no live key at GQA 16/2, heads 0-7 with -inf sinks");
            degenerate("B6", id, null, "pass", "rows with no live key give zeros with or without a sink, never NaN");
            SinksData live = x.copy();
            live.maskShape = masked.maskShape.clone();
            live.mask = new float[64];
            String c = add(live, "B6-gqa16-2-d" + d + "-rows-live-" + dt(t), "B6", t, s,
                    "control: the masked rows live");
            degenerate("B6", c, id, "fail", "live rows must be nonzero where the degenerate oracle is exactly zero");
            SinksData none = masked.copy();
            none.noSinks = true;
            String n = add(none, "B6-no-sinks-d" + d + "-" + dt(t), "B6", t, s,
                    "no sinks field at all (absent, not -inf logits), rows with no live key");
            degenerate("B6", n, null, "pass", "no sinks: rows with no live key give zeros, the rest plain softmax");
            SinksData zero = masked.copy();
            Arrays.fill(zero.sinks, 0f);
            String z = add(zero, "B6-no-sinks-as-zero-logits-d" + d + "-" + dt(t), "B6", t, s,
                    "control: no sinks passed as zero logits");
            control("B6", z, n, "zero sink logits (weight 1) must miss the absent sinks' oracle");
        }
    }
}
