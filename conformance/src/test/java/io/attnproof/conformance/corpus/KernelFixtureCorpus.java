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
