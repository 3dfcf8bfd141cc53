package io.attnproof.conformance.kernel;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.AnyCase;
import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.SinksCase;
import io.attnproof.conformance.corpus.CaseSpec;
import io.attnproof.conformance.corpus.CheckSpec;
import io.attnproof.conformance.corpus.CorpusChecker;
import io.attnproof.conformance.corpus.Manifest;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Claim F3: a case on which a kernel fails a check is shrunk to a smallest case that still fails the same check —
 * fewer batch entries (sequences), KV and query heads, query rows, keys, the smallest head dim of the envelope, no
 * window, simpler values — by a greedy pass over a fixed list of candidates (no randomness: the same case and kernel
 * give the same result), and written as a one-case corpus with the command that reproduces it.
 *
 * <p>"The same check": a fault of the same class (out-of-bounds, race, deadlock, launch refusal, other error) for a
 * faulted case; else the oracle check failing again (max-abs error over the limit, or NaN/inf positions that differ
 * from the oracle's). Masked cases are not shrunk (the shrinker keeps no mask).
 */
public final class Shrinker {
    /** Kernel calls one shrink may spend. */
    static final int MAX_CALLS = 400;

    private Shrinker() {
    }

    /** One shrunk failure: the check, where the case went, what it is, the command that reproduces it. */
    public record Shrunk(String checkId, Path dir, Shape shape, String failure, String summary, String command,
            int calls) {
    }

    /**
     * A sinks case as sequences (a dense case: B sequences of equal length), each query tensor [Hq][rows][D] and key /
     * value tensor [Hkv][keys][D]; sinks [Hq]; {@code vIsK}: V is K (the case names no v).
     */
    public record Shape(boolean varlen, DType dtype, int window, float[] sinks, List<float[][][]> q, List<float[][][]> k,
            List<float[][][]> v, boolean vIsK) {
        public int sequences() {
            return q.size();
        }

        public int qHeads() {
            return q.getFirst().length;
        }

        public int kvHeads() {
            return k.getFirst().length;
        }

        public int headDim() {
            return q.getFirst()[0][0].length;
        }

        public int maxRows() {
            return q.stream().mapToInt(x -> x[0].length).max().orElse(0);
        }

        public int maxKeys() {
            return k.stream().mapToInt(x -> x[0].length).max().orElse(0);
        }

        String text() {
            StringBuilder rows = new StringBuilder();
            StringBuilder keys = new StringBuilder();
            for (int s = 0; s < sequences(); s++) {
                rows.append(s == 0 ? "" : ",").append(q.get(s)[0].length);
                keys.append(s == 0 ? "" : ",").append(k.get(s)[0].length);
            }
            return (varlen ? "varlen, " + sequences() + " sequences" : "B=" + sequences()) + ", Hq=" + qHeads()
                    + ", Hkv=" + kvHeads() + ", rows " + rows + ", keys " + keys + ", D=" + headDim() + ", window "
                    + window + ", " + dtype;
        }
    }

    /** The case as a shape (null for a masked or union case). */
    static Shape of(AnyCase any) {
        if (!(any instanceof SinksCase c) || c.mask() != null) {
            return null;
        }
        int hq = c.queryHeads(), hkv = c.kvHeads(), d = c.headDim();
        float[] q = c.q().toFloatArray(), k = c.k().toFloatArray(), v = c.v().toFloatArray();
        List<float[][][]> qs = new ArrayList<>(), ks = new ArrayList<>(), vs = new ArrayList<>();
        for (int s = 0; s < c.batch(); s++) {
            int q0, ql, k0, kl;
            if (c.varlen()) {
                q0 = c.cuSeqlensQ()[s];
                ql = c.cuSeqlensQ()[s + 1] - q0;
                k0 = c.cuSeqlensK()[s];
                kl = c.cuSeqlensK()[s + 1] - k0;
            } else {
                q0 = 0;
                ql = c.tq();
                k0 = 0;
                kl = c.k().dim(2);
            }
            qs.add(seq(q, c.varlen(), s, q0, ql, hq, c.varlen() ? 0 : c.tq(), d));
            ks.add(seq(k, c.varlen(), s, k0, kl, hkv, c.varlen() ? 0 : c.k().dim(2), d));
            vs.add(seq(v, c.varlen(), s, k0, kl, hkv, c.varlen() ? 0 : c.k().dim(2), d));
        }
        return new Shape(c.varlen(), c.dtype(), c.window(), c.sinks().toFloatArray(), qs, ks, vs, c.v() == c.k());
    }

    private static float[][][] seq(float[] x, boolean varlen, int s, int r0, int n, int h, int t, int d) {
        float[][][] out = new float[h][n][d];
        for (int y = 0; y < h; y++) {
            for (int r = 0; r < n; r++) {
                int at = varlen ? ((r0 + r) * h + y) * d : ((s * h + y) * t + r) * d;
                System.arraycopy(x, at, out[y][r], 0, d);
            }
        }
        return out;
    }

    /** The shape as a case (dense when every sequence has the same rows and keys and the original was dense). */
    static SinksCase toCase(Shape s) {
        int n = s.sequences(), hq = s.qHeads(), hkv = s.kvHeads(), d = s.headDim();
        Tensor st = Tensor.of(s.sinks(), DType.F32, Device.CPU, hq);
        if (!s.varlen()) {
            int tq = s.q().getFirst()[0].length, tk = s.k().getFirst()[0].length;
            Tensor q = Tensor.of(dense(s.q(), hq, tq, d), s.dtype(), Device.CPU, n, hq, tq, d);
            Tensor k = Tensor.of(dense(s.k(), hkv, tk, d), s.dtype(), Device.CPU, n, hkv, tk, d);
            Tensor v = s.vIsK() ? k : Tensor.of(dense(s.v(), hkv, tk, d), s.dtype(), Device.CPU, n, hkv, tk, d);
            return new SinksCase(null, q, k, v, st, null, s.window(), null, null, s.dtype());
        }
        int[] cuQ = new int[n + 1], cuK = new int[n + 1];
        for (int i = 0; i < n; i++) {
            cuQ[i + 1] = cuQ[i] + s.q().get(i)[0].length;
            cuK[i + 1] = cuK[i] + s.k().get(i)[0].length;
        }
        Tensor q = Tensor.of(packed(s.q(), cuQ, hq, d), s.dtype(), Device.CPU, cuQ[n], hq, d);
        Tensor k = Tensor.of(packed(s.k(), cuK, hkv, d), s.dtype(), Device.CPU, cuK[n], hkv, d);
        Tensor v = s.vIsK() ? k : Tensor.of(packed(s.v(), cuK, hkv, d), s.dtype(), Device.CPU, cuK[n], hkv, d);
        return new SinksCase(null, q, k, v, st, null, s.window(), cuQ, cuK, s.dtype());
    }

    private static float[] dense(List<float[][][]> seqs, int h, int t, int d) {
        float[] out = new float[seqs.size() * h * t * d];
        int i = 0;
        for (float[][][] x : seqs) {
            for (float[][] y : x) {
                for (float[] z : y) {
                    System.arraycopy(z, 0, out, i, d);
                    i += d;
                }
            }
        }
        return out;
    }

    private static float[] packed(List<float[][][]> seqs, int[] cu, int h, int d) {
        float[] out = new float[cu[cu.length - 1] * h * d];
        for (int s = 0; s < seqs.size(); s++) {
            float[][][] x = seqs.get(s);
            for (int r = 0; r < x[0].length; r++) {
                for (int y = 0; y < h; y++) {
                    System.arraycopy(x[y][r], 0, out, ((cu[s] + r) * h + y) * d, d);
                }
            }
        }
        return out;
    }

    /** The failure class of a fault message, or of an oracle check. */
    static String faultClass(String fault) {
        String f = fault.toLowerCase(java.util.Locale.ROOT);
        if (f.contains("out-of-bounds")) {
            return "out-of-bounds";
        }
        if (f.contains("race")) {
            return "race";
        }
        if (f.contains("deadlock")) {
            return "deadlock";
        }
        if (f.contains("launch") || f.contains("limit")) {
            return "launch refusal";
        }
        if (f.contains("checked and plain")) {
            return "checked/plain bits";
        }
        return "error";
    }

    /** What the kernel does on a case: "pass", or the failure ("oracle" or a fault class) and its detail. */
    record Verdict(String kind, String detail) {
    }

    static Verdict judge(Adapter a, KernelLane lib, SinksCase c) {
        Adapter.Entry e = a.entryFor(c);
        if (e == null) {
            return new Verdict("outside", KernelRun.outside(a, c));
        }
        KernelLibrary.Call got = lib.call(a, e, c);
        if (got.fault() != null) {
            return new Verdict(faultClass(got.fault()), got.fault());
        }
        CaseChecker.Verdict v = CaseChecker.check(c, got.output());
        return v.passed() ? new Verdict("pass", v.line()) : new Verdict("oracle", v.line());
    }

    /** The candidates, in the order tried: each maps a shape to a smaller or simpler one, or null. */
    static List<Function<Shape, Shape>> candidates(Adapter a) {
        List<Function<Shape, Shape>> c = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            int keep = i;
            c.add(s -> s.sequences() > 1 && keep < s.sequences() ? pick(s, List.of(keep)) : null);
        }
        c.add(s -> s.sequences() > 2 ? pick(s, List.of(0, 1)) : null);
        for (int j = 0; j < 64; j++) {
            int kv = j;
            c.add(s -> s.kvHeads() > 1 && kv < s.kvHeads() ? heads(s, List.of(kv), group(s, kv)) : null);
        }
        c.add(s -> {
            if (s.kvHeads() < 2 || s.qHeads() == s.kvHeads()) {
                return null;
            }
            List<Integer> kvs = new ArrayList<>(), qs = new ArrayList<>();
            for (int j = 0; j < s.kvHeads(); j++) {
                kvs.add(j);
                qs.add(j * (s.qHeads() / s.kvHeads()));
            }
            return heads(s, kvs, qs);
        });
        for (int h = 0; h < 64; h++) {
            int qh = h;
            c.add(s -> s.kvHeads() == 1 && s.qHeads() > 1 && qh < s.qHeads() ? heads(s, List.of(0), List.of(qh)) : null);
        }
        c.add(s -> s.kvHeads() == 1 && s.qHeads() > 2 ? heads(s, List.of(0), List.of(0, 1)) : null);
        // Rows: the last n keep their keys (bottom-right alignment); the first n keep theirs when the keys past the
        // last kept row's diagonal go too.
        for (int n : new int[] {1, 2, 4, 8, 16}) {
            c.add(s -> rows(s, n, true));
            c.add(s -> rows(s, n, false));
        }
        c.add(Shrinker::oneKeylessRow);
        for (int n : new int[] {1, 2, 4, 8, 16, 32}) {
            c.add(s -> keys(s, n));
        }
        c.add(s -> keys(s, s.maxKeys() - 1));
        for (int d : a.headDims().stream().sorted().toList()) {
            c.add(s -> d < s.headDim() ? dim(s, d) : null);
        }
        c.add(s -> s.window() > 0 ? new Shape(s.varlen(), s.dtype(), 0, s.sinks(), s.q(), s.k(), s.v(), s.vIsK()) : null);
        c.add(s -> values(s, 4f, 4f));
        c.add(s -> values(s, 1f, 2f));
        c.add(s -> {
            float[] z = s.sinks().clone();
            boolean changed = false;
            for (int i = 0; i < z.length; i++) {
                if (Float.isFinite(z[i]) && z[i] != 0) {
                    z[i] = 0;
                    changed = true;
                }
            }
            return changed ? new Shape(s.varlen(), s.dtype(), s.window(), z, s.q(), s.k(), s.v(), s.vIsK()) : null;
        });
        return c;
    }

    private static List<Integer> group(Shape s, int kv) {
        int g = s.qHeads() / s.kvHeads();
        List<Integer> out = new ArrayList<>();
        for (int h = kv * g; h < (kv + 1) * g; h++) {
            out.add(h);
        }
        return out;
    }

    private static Shape pick(Shape s, List<Integer> keep) {
        List<float[][][]> q = new ArrayList<>(), k = new ArrayList<>(), v = new ArrayList<>();
        for (int i : keep) {
            q.add(s.q().get(i));
            k.add(s.k().get(i));
            v.add(s.v().get(i));
        }
        return new Shape(s.varlen(), s.dtype(), s.window(), s.sinks(), q, k, v, s.vIsK());
    }

    /** Keeps KV heads {@code kvs} and query heads {@code qs} (query head i of the result reads KV head i / (Hq/Hkv)). */
    private static Shape heads(Shape s, List<Integer> kvs, List<Integer> qs) {
        if (qs.size() % kvs.size() != 0) {
            return null;
        }
        float[] sinks = new float[qs.size()];
        for (int i = 0; i < qs.size(); i++) {
            sinks[i] = s.sinks()[qs.get(i)];
        }
        List<float[][][]> q = new ArrayList<>(), k = new ArrayList<>(), v = new ArrayList<>();
        for (int x = 0; x < s.sequences(); x++) {
            float[][][] qq = new float[qs.size()][][], kk = new float[kvs.size()][][], vv = new float[kvs.size()][][];
            for (int i = 0; i < qs.size(); i++) {
                qq[i] = s.q().get(x)[qs.get(i)];
            }
            for (int i = 0; i < kvs.size(); i++) {
                kk[i] = s.k().get(x)[kvs.get(i)];
                vv[i] = s.v().get(x)[kvs.get(i)];
            }
            q.add(qq);
            k.add(kk);
            v.add(vv);
        }
        return new Shape(s.varlen(), s.dtype(), s.window(), sinks, q, k, v, s.vIsK());
    }

    private static Shape rows(Shape s, int n, boolean last) {
        if (s.maxRows() <= n) {
            return null;
        }
        List<float[][][]> q = new ArrayList<>(), k = new ArrayList<>(), v = new ArrayList<>();
        boolean changed = false;
        for (int x = 0; x < s.sequences(); x++) {
            int tq = s.q().get(x)[0].length, tk = s.k().get(x)[0].length;
            int keep = Math.min(n, tq);
            changed |= keep < tq;
            int from = last ? tq - keep : 0;
            int keys = last ? tk : tk - (tq - keep);
            if (keys < 1) {
                return null; // the first rows of a case with keyless rows: no key would be left
            }
            q.add(slice(s.q().get(x), from, keep));
            k.add(slice(s.k().get(x), 0, keys));
            v.add(slice(s.v().get(x), 0, keys));
        }
        return changed ? new Shape(s.varlen(), s.dtype(), s.window(), s.sinks(), q, k, v, s.vIsK()) : null;
    }

    /**
     * Drops the leading keyless rows of each dense sequence with more than one (tq > tk + 1) down to one: the last
     * tk + 1 rows and every key, so that {@code rows(first)} can then cut rows and keys together.
     */
    private static Shape oneKeylessRow(Shape s) {
        if (s.varlen()) {
            return null;
        }
        int tq = s.q().getFirst()[0].length, tk = s.k().getFirst()[0].length;
        return tq > tk + 1 ? rows(s, tk + 1, true) : null;
    }

    /** The last {@code n} keys of each sequence (at least its rows: every query needs its own key). */
    private static Shape keys(Shape s, int n) {
        if (s.maxKeys() <= n) {
            return null;
        }
        List<float[][][]> k = new ArrayList<>(), v = new ArrayList<>();
        boolean changed = false;
        for (int x = 0; x < s.sequences(); x++) {
            int tq = s.q().get(x)[0].length, tk = s.k().get(x)[0].length;
            int keep = Math.min(tk, Math.max(n, tq));
            changed |= keep < tk;
            k.add(slice(s.k().get(x), tk - keep, keep));
            v.add(slice(s.v().get(x), tk - keep, keep));
        }
        return changed ? new Shape(s.varlen(), s.dtype(), s.window(), s.sinks(), s.q(), k, v, s.vIsK()) : null;
    }

    private static float[][][] slice(float[][][] x, int from, int n) {
        float[][][] out = new float[x.length][][];
        for (int h = 0; h < x.length; h++) {
            out[h] = java.util.Arrays.copyOfRange(x[h], from, from + n);
        }
        return out;
    }

    private static Shape dim(Shape s, int d) {
        Function<List<float[][][]>, List<float[][][]>> cut = l -> l.stream().map(x -> {
            float[][][] o = new float[x.length][][];
            for (int h = 0; h < x.length; h++) {
                o[h] = new float[x[h].length][];
                for (int r = 0; r < x[h].length; r++) {
                    o[h][r] = java.util.Arrays.copyOf(x[h][r], d);
                }
            }
            return o;
        }).toList();
        return new Shape(s.varlen(), s.dtype(), s.window(), s.sinks(), cut.apply(s.q()), cut.apply(s.k()),
                cut.apply(s.v()), s.vIsK());
    }

    /** Values rounded to multiples of 1/{@code steps}, clamped to [-max, max] (exact in F32, F16 and BF16). */
    private static Shape values(Shape s, float steps, float max) {
        boolean[] changed = {false};
        Function<List<float[][][]>, List<float[][][]>> r = l -> l.stream().map(x -> {
            float[][][] o = new float[x.length][][];
            for (int h = 0; h < x.length; h++) {
                o[h] = new float[x[h].length][];
                for (int i = 0; i < x[h].length; i++) {
                    o[h][i] = new float[x[h][i].length];
                    for (int e = 0; e < o[h][i].length; e++) {
                        float y = Math.max(-max, Math.min(max, Math.round(x[h][i][e] * steps) / steps));
                        changed[0] |= y != x[h][i][e];
                        o[h][i][e] = y;
                    }
                }
            }
            return o;
        }).toList();
        Shape out = new Shape(s.varlen(), s.dtype(), s.window(), s.sinks(), r.apply(s.q()), r.apply(s.k()),
                r.apply(s.v()), s.vIsK());
        return changed[0] ? out : null;
    }

    /**
     * Shrinks {@code start} while the kernel keeps failing the same way ({@code want}: "oracle" or a fault class).
     *
     * @return the smallest shape found, its verdict, and the calls spent
     */
    static Object[] shrink(Adapter a, KernelLane lib, Shape start, String want) {
        List<Function<Shape, Shape>> cands = candidates(a);
        Shape cur = start;
        Verdict last = null;
        int calls = 0;
        boolean progress = true;
        while (progress && calls < MAX_CALLS) {
            progress = false;
            for (Function<Shape, Shape> f : cands) {
                Shape next = f.apply(cur);
                if (next == null || calls >= MAX_CALLS) {
                    continue;
                }
                calls++;
                Verdict v = judge(a, lib, toCase(next));
                if (v.kind().equals(want)) {
                    cur = next;
                    last = v;
                    progress = true;
                    break;
                }
            }
        }
        if (calls >= MAX_CALLS) {
            throw new IllegalStateException("the shrink of " + start.text() + " spent its " + MAX_CALLS
                    + " kernel calls without settling: a candidate that does not make the case smaller");
        }
        if (last == null) {
            last = judge(a, lib, toCase(cur));
            calls++;
        }
        return new Object[] {cur, last, calls};
    }

    /**
     * Shrinks the failing case of every failing single-case check of {@code r} (oracle and degenerate checks, and any
     * check whose case faulted), once per case, into {@code into/<check>/}.
     */
    public static List<Shrunk> shrinkAll(Path corpus, Adapter a, Path adapterFile, KernelLane lib,
            CorpusChecker.Result r, Map<String, String> faults, Path into) {
        Manifest m = Manifest.read(corpus);
        Map<String, Manifest.Entry> entries = new LinkedHashMap<>();
        m.cases().forEach(e -> entries.put(e.id(), e));
        Set<String> done = new LinkedHashSet<>();
        List<Shrunk> out = new ArrayList<>();
        for (CorpusChecker.Outcome o : r.failures()) {
            CheckSpec check = o.check();
            String id = faults.containsKey(check.a().caseId()) ? check.a().caseId()
                    : check.b() != null && faults.containsKey(check.b().caseId()) ? check.b().caseId() : null;
            String want;
            if (id != null) {
                want = faultClass(faults.get(id));
            } else if (!check.control() && (check.type().equals("oracle") || check.type().equals("degenerate"))
                    && check.against() == null) {
                id = check.a().caseId();
                want = "oracle";
            } else {
                continue;
            }
            if (!done.add(id)) {
                continue;
            }
            Shape start = of(CaseReader.readAny(corpus.resolve(entries.get(id).caseFile())));
            if (start == null) {
                continue;
            }
            out.add(shrinkOne(a, adapterFile, lib, start, want, check.claim(), check.id(), entries.get(id),
                    into.resolve(check.id().replaceAll("[^A-Za-z0-9._-]", "_"))));
        }
        return out;
    }

    /** Shrinks one case and writes it as a one-case corpus into {@code dir}. */
    public static Shrunk shrinkOne(Adapter a, Path adapterFile, KernelLane lib, Shape start, String want,
            String claim, String checkId, Manifest.Entry from, Path dir) {
        Object[] res = shrink(a, lib, start, want);
        Shape s = (Shape) res[0];
        Verdict v = (Verdict) res[1];
        String caseId = "shrunk-" + from.id();
        SinksCase c = toCase(s);
        Map<String, CaseSpec.Arr> t = new LinkedHashMap<>();
        Npy.DType storage = s.dtype() == DType.F16 ? Npy.DType.F2 : Npy.DType.F4;
        t.put("q", new CaseSpec.Arr(c.q().shape(), c.q().toFloatArray(), storage));
        t.put("k", new CaseSpec.Arr(c.k().shape(), c.k().toFloatArray(), storage));
        if (!s.vIsK()) {
            t.put("v", new CaseSpec.Arr(c.v().shape(), c.v().toFloatArray(), storage));
        }
        t.put("sinks", new CaseSpec.Arr(c.sinks().shape(), c.sinks().toFloatArray(), Npy.DType.F4));
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("window", s.window());
        if (s.varlen()) {
            config.put("cu_seqlens_q", c.cuSeqlensQ());
            config.put("cu_seqlens_k", c.cuSeqlensK());
        }
        config.put("dtype", s.dtype().name());
        String desc = "shrunk from " + from.id() + " (check " + checkId + ", " + want + "): " + s.text();
        CaseSpec spec = new CaseSpec(caseId, claim, "sinks", s.dtype().name(), from.seed(), desc, t, config,
                new LinkedHashMap<>());
        try {
            if (Files.isDirectory(dir)) {
                try (var walk = Files.walk(dir)) {
                    for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.delete(p);
                    }
                }
            }
            spec.write(dir.resolve("cases").resolve(caseId));
            CheckSpec one = new CheckSpec(claim + ":oracle:" + caseId, claim, "oracle", "pass",
                    new CheckSpec.Sel(caseId, -1, -1, -1, -1), null, null, "shrunk from " + checkId + ": " + want);
            Manifest mf = new Manifest(from.seed(), "shrunk", List.of(new Manifest.Entry(caseId, claim, "sinks",
                    s.dtype().name(), from.seed(), "cases/" + caseId + "/case.json", c.outputShape(), desc)),
                    List.of(one));
            Files.writeString(dir.resolve(Manifest.FILE), mf.toJson(), StandardCharsets.UTF_8);
            String command = "./attnproof kernel --adapter " + adapterFile.toAbsolutePath().normalize() + " --corpus "
                    + dir.toAbsolutePath().normalize() + " --out " + dir.toAbsolutePath().normalize().resolve("run");
            Files.writeString(dir.resolve("REPRODUCE"), "# " + desc + "\n# fails: " + v.kind() + ": " + v.detail()
                    + "\n" + command + "\n", StandardCharsets.UTF_8);
            return new Shrunk(checkId, dir, s, v.kind() + ": " + v.detail(), s.text() + "; still fails: " + v.kind(),
                    command, (Integer) res[2]);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the shrunk case into " + dir, e);
        }
    }
}
