package io.attnproof.conformance.corpus;

import io.attnproof.attention.tensor.DType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A small sinks corpus inside the fa2 kernel family's envelope, for the kernel lane's tests (the shipped small corpus
 * has few such cases until it gains real shapes): a batched GQA prefill with live sinks, a packed varlen call with a
 * window (its second sequence reads two K/V tiles), a batched decode without sinks (the "no sinks" null pointer), a head dim outside the envelope (SKIP), and a
 * negative control (window 1 against the unwindowed oracle).
 */
public final class KernelFixtureCorpus {
    private KernelFixtureCorpus() {
    }

    /** Writes the corpus into {@code dir}; returns its case ids in manifest order. */
    public static List<String> write(Path dir) throws IOException {
        return write(dir, false);
    }

    /**
     * The corpus, and with {@code campaign} (the gated mutant campaign's fixture) a prefill with rows that admit no key
     * under a -inf sink, and an F32 prefill without the sinks field (absent: no sink term), each with its control.
     */
    public static List<String> write(Path dir, boolean campaign) throws IOException {
        List<CaseSpec> cases = new ArrayList<>();
        List<CheckSpec> checks = new ArrayList<>();
        SinksData prefill = SinksData.dense(29_001, 2, 4, 2, 5, 40, 64, 0, true);
        cases.add(prefill.toCase("K-prefill-b2-gqa-F32", "S1", DType.F32, 29_001, "batched GQA prefill, live sinks"));
        SinksData varlen = SinksData.varlen(29_002, new int[] {3, 1}, new int[] {9, 40}, 4, 1, 80, 12, true);
        cases.add(varlen.toCase("K-varlen-w12-F16", "S6", DType.F16, 29_002, "packed varlen, window 12, D 80"));
        SinksData decode = SinksData.dense(29_003, 2, 2, 1, 1, 70, 128, 0, false);
        cases.add(decode.toCase("K-decode-b2-nosinks-BF16", "B1", DType.BF16, 29_003, "batched decode, no sinks"));
        SinksData small = SinksData.dense(29_004, 1, 2, 1, 4, 8, 16, 0, true);
        cases.add(small.toCase("K-d16-F32", "B1", DType.F32, 29_004, "head dim 16: outside the envelope"));
        SinksData w1 = prefill.copy();
        w1.window = 1;
        cases.add(w1.toCase("K-prefill-window1-F32", "S1", DType.F32, 29_001, "control: window 1"));
        for (CaseSpec c : cases.subList(0, 4)) {
            checks.add(new CheckSpec(c.claim() + ":oracle:" + c.id(), c.claim(), "oracle", "pass",
                    CheckSpec.Sel.all(c.id()), null, null, c.description()));
        }
        checks.add(new CheckSpec("S1:control-oracle:K-prefill-window1-F32", "S1", "oracle", "fail",
                CheckSpec.Sel.all("K-prefill-window1-F32"), null, "K-prefill-b2-gqa-F32",
                "a window of 1 must miss the unwindowed oracle"));
        if (campaign) {
            keyless(cases, checks, "K", SinksData.dense(29_005, 1, 4, 2, 10, 4, 96, 2, true), 29_005);
            // No sinks at all, in F32 (whose limit sees the weight e^(0 - m) of a zero-logit sink over 20 keys, which
            // the BF16 decode's does not); one K/V tile. Control: zero sink logits must miss the absent sinks' oracle.
            SinksData absent = SinksData.dense(29_006, 1, 2, 1, 3, 20, 64, 0, false);
            absent.noSinks = true;
            cases.add(absent.toCase("K-prefill-no-sinks-F32", "B6", DType.F32, 29_006, "prefill, the sinks field"
                    + " absent (no sink term)"));
            SinksData zero = absent.copy();
            zero.noSinks = false;
            java.util.Arrays.fill(zero.sinks, 0f);
            cases.add(zero.toCase("K-prefill-zero-sinks-F32", "B6", DType.F32, 29_006, "control: no sinks passed as"
                    + " zero logits"));
            checks.add(new CheckSpec("B6:oracle:K-prefill-no-sinks-F32", "B6", "oracle", "pass",
                    CheckSpec.Sel.all("K-prefill-no-sinks-F32"), null, null, "no sinks: plain softmax"));
            checks.add(new CheckSpec("B6:control-oracle:K-prefill-zero-sinks-F32", "B6", "oracle", "fail",
                    CheckSpec.Sel.all("K-prefill-zero-sinks-F32"), null, "K-prefill-no-sinks-F32",
                    "zero sink logits (weight 1) must miss the absent sinks' oracle"));
        }
        return writeCases(dir, cases, checks);
    }

    /**
     * The Metal family's fixture (examples/kernels/metal/sinks_decode.metal): a batched GQA one-pass decode with live
     * sinks, a windowed decode with more keys than the window, two kv 1025 decodes (the two-pass route: one with live
     * sinks, one without sinks and a window spanning chunks), a batched prefill, a windowed prefill without sinks, a
     * head dim outside the envelope, and a control: the batched decode with a window of 1 must
     * miss the unwindowed oracle.
     */
    public static List<String> writeMetal(Path dir) throws IOException {
        return writeMetal(dir, false);
    }

    /** The Metal fixture, and with {@code campaign} (the gated campaign's) the keyless-row prefill and its control. */
    public static List<String> writeMetal(Path dir, boolean campaign) throws IOException {
        List<CaseSpec> cases = new ArrayList<>();
        List<CheckSpec> checks = new ArrayList<>();
        SinksData decode = SinksData.dense(29_101, 2, 8, 2, 1, 70, 64, 0, true);
        cases.add(decode.toCase("M-decode-b2-gqa-F32", "B1", DType.F32, 29_101, "batched GQA decode, live sinks"));
        cases.add(SinksData.dense(29_102, 1, 4, 1, 1, 50, 128, 9, true).toCase("M-decode-w9-F16", "B1", DType.F16,
                29_102, "decode, window 9 of 50 keys"));
        cases.add(SinksData.dense(29_103, 1, 2, 1, 1, 1025, 64, 0, true).toCase("M-decode-kv1025-BF16", "B1",
                DType.BF16, 29_103, "two-pass decode, kv 1025, live sinks"));
        cases.add(SinksData.dense(29_104, 1, 2, 2, 1, 1025, 80, 300, false).toCase("M-decode-kv1025-w300-nosinks-F32",
                "B1", DType.F32, 29_104, "two-pass decode, kv 1025, window 300 over two chunks, no sinks"));
        cases.add(SinksData.dense(29_105, 2, 4, 2, 5, 40, 64, 0, true).toCase("M-prefill-b2-gqa-F16", "S1", DType.F16,
                29_105, "batched GQA prefill, live sinks"));
        cases.add(SinksData.dense(29_106, 1, 2, 1, 10, 12, 96, 2, false).toCase("M-prefill-w2-nosinks-F32", "S1",
                DType.F32, 29_106, "prefill q_len 10 over 12 keys, window 2, no sinks"));
        cases.add(SinksData.dense(29_107, 1, 2, 1, 1, 8, 16, 0, true).toCase("M-d16-F32", "B1", DType.F32, 29_107,
                "head dim 16: outside the envelope"));
        int judged = cases.size();
        SinksData w1 = decode.copy();
        w1.window = 1;
        cases.add(w1.toCase("M-decode-window1-F32", "B1", DType.F32, 29_101, "control: window 1"));
        for (CaseSpec c : cases.subList(0, judged)) {
            checks.add(new CheckSpec(c.claim() + ":oracle:" + c.id(), c.claim(), "oracle", "pass",
                    CheckSpec.Sel.all(c.id()), null, null, c.description()));
        }
        checks.add(new CheckSpec("B1:control-oracle:M-decode-window1-F32", "B1", "oracle", "fail",
                CheckSpec.Sel.all("M-decode-window1-F32"), null, "M-decode-b2-gqa-F32",
                "a window of 1 must miss the unwindowed oracle"));
        if (campaign) {
            keyless(cases, checks, "M", SinksData.dense(29_108, 1, 2, 1, 10, 4, 64, 2, true), 29_108);
        }
        return writeCases(dir, cases, checks);
    }

    /**
     * B6 at kernel shapes: {@code x} (tq 10 > tk 4) leaves rows 0-5 without a key (bottom-right alignment); head 0's
     * sink is -inf, so those rows of head 0 have neither a key nor a sink and must be 0 (a kernel's -inf - -inf guard),
     * those of the other heads are 0 through their sink. Control: the same queries with 6 more keys in front, where
     * every row admits a key, must miss the keyless case's oracle.
     */
    private static void keyless(List<CaseSpec> cases, List<CheckSpec> checks, String prefix, SinksData x, long seed) {
        x.sinks[0] = Float.NEGATIVE_INFINITY;
        String id = prefix + "-keyless-rows-neginf-sink-F32";
        cases.add(x.toCase(id, "B6", DType.F32, seed, "prefill tq 10 over tk 4: rows 0-5 admit no key, head 0's sink"
                + " -inf"));
        SinksData live = SinksData.dense(seed + 1_000, x.b, x.hq, x.hkv, x.tq, x.tq, x.d, x.window, true);
        live.q = x.q.clone();
        live.sinks = x.sinks.clone();
        int front = x.tq - x.tk;
        for (int i = 0; i < x.b * x.hkv; i++) {
            System.arraycopy(x.k, i * x.tk * x.d, live.k, (i * x.tq + front) * x.d, x.tk * x.d);
            System.arraycopy(x.v, i * x.tk * x.d, live.v, (i * x.tq + front) * x.d, x.tk * x.d);
        }
        String c = prefix + "-keyless-rows-live-F32";
        cases.add(live.toCase(c, "B6", DType.F32, seed, "control: " + front + " more keys in front, every row admits"
                + " a key"));
        checks.add(new CheckSpec("B6:degenerate:" + id, "B6", "degenerate", "pass", CheckSpec.Sel.all(id), null, null,
                "rows without a key are exactly zero, never NaN, with a -inf sink or a live one"));
        checks.add(new CheckSpec("B6:control-degenerate:" + c, "B6", "degenerate", "fail", CheckSpec.Sel.all(c), null,
                id, "rows that admit keys must miss the oracle whose keyless rows are exactly zero"));
    }

    /**
     * One decode whose launch the device refuses: Hq 65536 query heads, the fa2 launcher's grid.y, past CUDA's 65535
     * (the campaign's probe of a launcher that drops the launch error).
     */
    public static List<String> writeGridLimit(Path dir) throws IOException {
        SinksData x = SinksData.dense(29_007, 1, 65_536, 1, 1, 1, 64, 0, true);
        CaseSpec c = x.toCase("K-grid-y-65536-F32", "B1", DType.F32, 29_007, "decode at Hq 65536: grid.y past 65535");
        c.write(dir.resolve("cases").resolve(c.id()));
        List<CheckSpec> checks = List.of(new CheckSpec("B1:oracle:" + c.id(), "B1", "oracle", "pass",
                CheckSpec.Sel.all(c.id()), null, null, c.description()));
        List<Manifest.Entry> entries = List.of(new Manifest.Entry(c.id(), c.claim(), c.kind(), c.dtype(), c.seed(),
                "cases/" + c.id() + "/case.json", c.outputShape(), c.description()));
        Files.writeString(dir.resolve(Manifest.FILE), new Manifest(29, "kernel-fixture", entries, checks).toJson(),
                StandardCharsets.UTF_8);
        return List.of(c.id());
    }

    /**
     * {@code inside} decodes of claim B1 inside the fa2 family's envelope (F32, D 128, 70 keys, no sinks) and then
     * {@code outside} decodes at head dim 16 (outside it), one oracle check each, in that order: for the kernel
     * command's report, whose FAIL list, SKIP lines and per-claim counts need many checks of one claim.
     */
    public static List<String> writeDecodes(Path dir, int inside, int outside) throws IOException {
        List<CaseSpec> cases = new ArrayList<>();
        for (int i = 0; i < inside + outside; i++) {
            boolean in = i < inside;
            SinksData x = in ? SinksData.dense(29_200 + i, 1, 2, 1, 1, 70, 128, 0, false)
                    : SinksData.dense(29_200 + i, 1, 2, 1, 4, 8, 16, 0, true);
            cases.add(x.toCase((in ? "K-decode-" : "K-d16-") + i + "-F32", "B1", DType.F32, 29_200 + i,
                    in ? "decode inside the envelope" : "head dim 16: outside the envelope"));
        }
        List<CheckSpec> checks = new ArrayList<>();
        for (CaseSpec c : cases) {
            checks.add(new CheckSpec(c.claim() + ":oracle:" + c.id(), c.claim(), "oracle", "pass",
                    CheckSpec.Sel.all(c.id()), null, null, c.description()));
        }
        return writeCases(dir, cases, checks);
    }

    /** Writes each case under {@code dir/cases/<id>} and the manifest of the cases and checks; the case ids. */
    private static List<String> writeCases(Path dir, List<CaseSpec> cases, List<CheckSpec> checks) throws IOException {
        List<Manifest.Entry> entries = new ArrayList<>();
        for (CaseSpec c : cases) {
            c.write(dir.resolve("cases").resolve(c.id()));
            entries.add(new Manifest.Entry(c.id(), c.claim(), c.kind(), c.dtype(), c.seed(),
                    "cases/" + c.id() + "/case.json", c.outputShape(), c.description()));
        }
        Files.writeString(dir.resolve(Manifest.FILE), new Manifest(29, "kernel-fixture", entries, checks).toJson(),
                StandardCharsets.UTF_8);
        return entries.stream().map(Manifest.Entry::id).toList();
    }
}
