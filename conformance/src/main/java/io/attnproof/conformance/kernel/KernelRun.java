package io.attnproof.conformance.kernel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.attnproof.conformance.cases.AnyCase;
import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.SinksCase;
import io.attnproof.conformance.corpus.Manifest;
import io.attnproof.conformance.npy.Npy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The corpus through a user's kernels: each case of the manifest (or of one shard of it) is either outside the
 * adapter's envelope (SKIP with the reason), or called on the checked lane (and on the plain lane, whose bits must be
 * the checked lane's) and written as {@code OUT/<case id>.npy}, or a fault (a bounds fault, race, deadlock, launch-limit
 * refusal, an error the launcher returned, or checked and plain bits differing) named with the case. The statuses go
 * to {@code OUT/kernel-run-<k>-of-<n>.json}; {@code corpus check} judges the outputs with them.
 */
public final class KernelRun {
    private static final ObjectMapper JSON = new ObjectMapper();

    private KernelRun() {
    }

    /** A shard: cases with manifest index i where i % count == index - 1; 1/1 is the whole corpus. */
    public record Shard(int index, int count) {
        public Shard {
            if (count < 1 || index < 1 || index > count) {
                throw new IllegalArgumentException("--shard " + index + "/" + count + ": must be k/n with 1 <= k <= n");
            }
        }

        /** Parses {@code k/n}. */
        public static Shard parse(String s) {
            String[] p = s.split("/");
            try {
                if (p.length == 2) {
                    return new Shard(Integer.parseInt(p[0].strip()), Integer.parseInt(p[1].strip()));
                }
            } catch (NumberFormatException e) {
                // fall through to the message below
            }
            throw new IllegalArgumentException("--shard " + s + ": must be k/n with 1 <= k <= n (e.g. 2/4)");
        }

        boolean holds(int i) {
            return i % count == index - 1;
        }

        String fileName() {
            return "kernel-run-" + index + "-of-" + count + ".json";
        }
    }

    /** The statuses of one run: case id to the SKIP reason / the fault; the cases that ran; wall seconds. */
    public record Result(Shard shard, List<String> ran, Map<String, String> skipped, Map<String, String> faults,
            double seconds, Path statusFile) {
    }

    /** Why the case is outside the adapter's envelope, or null when it is inside. */
    public static String outside(Adapter a, AnyCase any) {
        if (!(any instanceof SinksCase c)) {
            return "kind union: attnproof kernel judges sinks attention (the union cases are the system's own layer)";
        }
        String layout = c.varlen() ? "varlen" : "dense";
        Adapter.Entry e = a.entryFor(c);
        if (e == null) {
            return a.entry(layout) == null ? layout + ": the adapter has no entry point for " + layout + " cases"
                    : layout + " q_len " + c.tq() + ", kv_len " + (c.varlen() ? "varlen" : c.k().dim(2))
                    + ": no " + layout + " entry's \"when\" admits the case";
        }
        if (!a.dtypes().containsKey(c.dtype().name())) {
            return "dtype " + c.dtype() + " outside the adapter's dtypes " + a.dtypes().keySet().stream().sorted().toList();
        }
        if (!a.headDims().contains(c.headDim())) {
            return "head dim " + c.headDim() + " outside the adapter's head dims " + a.headDims();
        }
        if (c.mask() != null && !a.maskPolicy().equals("takes")) {
            return "masked: the kernel " + (a.maskPolicy().equals("none") ? "has no mask parameter" : "refuses masks")
                    + "; the dispatch routes masked calls to " + a.maskRoute();
        }
        if (c.v() != c.k() && e.tensor("v") == null) {
            return "a distinct V: the kernel takes no v (it reads V from k)";
        }
        if (e.tensor("sinks") == null) {
            for (float s : c.sinks().toFloatArray()) {
                if (s != Float.NEGATIVE_INFINITY) {
                    return "live sinks: the kernel takes no sinks argument";
                }
            }
        }
        return null;
    }

    /**
     * Runs the corpus in {@code corpus} (the cases of {@code shard}) through {@code checked} and, when non-null,
     * {@code plain}, writing outputs and the status file into {@code out}.
     *
     * @throws CaseException naming the file and field of a bad manifest or case
     */
    public static Result run(Path corpus, Path out, Adapter adapter, KernelLane checked, KernelLane plain,
            Shard shard) {
        long t0 = System.nanoTime();
        Manifest m = Manifest.read(corpus);
        List<String> ran = new ArrayList<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        Map<String, String> faults = new LinkedHashMap<>();
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + out, e);
        }
        for (int i = 0; i < m.cases().size(); i++) {
            if (!shard.holds(i)) {
                continue;
            }
            Manifest.Entry entry = m.cases().get(i);
            AnyCase any = CaseReader.readAny(corpus.resolve(entry.caseFile()));
            String why = outside(adapter, any);
            if (why != null) {
                skipped.put(entry.id(), why);
                continue;
            }
            SinksCase c = (SinksCase) any;
            Adapter.Entry e = adapter.entryFor(c);
            KernelLibrary.Call got = checked.call(adapter, e, c);
            if (got.fault() == null && plain != null) {
                KernelLibrary.Call p = plain.call(adapter, e, c);
                String differ = p.fault() != null ? "the plain build faulted where the checked one did not: " + p.fault()
                        : bitsDiffer(got.output(), p.output());
                if (differ != null) {
                    got = new KernelLibrary.Call(null, differ);
                }
            }
            if (got.fault() != null) {
                faults.put(entry.id(), got.fault());
                continue;
            }
            float[] f = new float[got.output().length];
            for (int j = 0; j < f.length; j++) {
                f[j] = (float) got.output()[j];
            }
            Npy.write(out.resolve(entry.id() + ".npy"), Npy.DType.F4, entry.outputShape(), f);
            ran.add(entry.id());
        }
        Path status = out.resolve(shard.fileName());
        writeStatus(status, adapter.name(), shard, ran, skipped, faults);
        return new Result(shard, List.copyOf(ran), skipped, faults, (System.nanoTime() - t0) / 1e9, status);
    }

    static String bitsDiffer(double[] checked, double[] plain) {
        long n = 0;
        int first = -1;
        for (int i = 0; i < checked.length; i++) {
            if (Double.doubleToRawLongBits(checked[i]) != Double.doubleToRawLongBits(plain[i])) {
                n++;
                first = first < 0 ? i : first;
            }
        }
        return n == 0 ? null : "the checked and plain builds differ in " + n + " of " + checked.length
                + " elements, first at flat index " + first + " (checked " + checked[first] + ", plain " + plain[first]
                + ")";
    }

    private static void writeStatus(Path file, String adapter, Shard shard, List<String> ran, Map<String, String> skipped,
            Map<String, String> faults) {
        ObjectNode root = JSON.createObjectNode();
        root.put("format", "attnproof-kernel-run/1");
        root.put("adapter", adapter);
        root.put("shard", shard.index() + "/" + shard.count());
        root.putPOJO("ran", ran);
        root.putPOJO("skipped", skipped);
        root.putPOJO("faults", faults);
        try {
            Files.writeString(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n",
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /**
     * Merges the status files of every shard of one run, found under {@code dirs}: the shards 1..n of one n, each
     * exactly once, else a bad-input error naming what is missing (a failed, cancelled or skipped shard fails the
     * merge). Outputs stay where they are; {@code into} receives copies of every shard's outputs.
     */
    public static Result merge(List<Path> dirs, Path into) {
        Map<Integer, Path> found = new LinkedHashMap<>();
        int count = -1;
        List<String> ran = new ArrayList<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        Map<String, String> faults = new LinkedHashMap<>();
        try {
            Files.createDirectories(into);
            for (Path d : dirs) {
                if (!Files.isDirectory(d)) {
                    throw new IllegalArgumentException("--merge " + d + ": not a folder of a kernel shard's outputs");
                }
                List<Path> statuses;
                try (var s = Files.list(d)) {
                    statuses = s.filter(p -> p.getFileName().toString().matches("kernel-run-\\d+-of-\\d+\\.json"))
                            .sorted().toList();
                }
                if (statuses.isEmpty()) {
                    throw new IllegalArgumentException("--merge " + d + ": holds no kernel-run-K-of-N.json (did that"
                            + " shard fail, or was it cancelled or skipped?)");
                }
                for (Path st : statuses) {
                    JsonNode root = JSON.readTree(Files.readString(st, StandardCharsets.UTF_8));
                    Shard sh = Shard.parse(root.path("shard").asText());
                    if (count >= 0 && sh.count() != count) {
                        throw new IllegalArgumentException("--merge: " + st + " is shard " + sh.index() + "/"
                                + sh.count() + ", another is of " + count + " shards");
                    }
                    count = sh.count();
                    if (found.put(sh.index(), st) != null) {
                        throw new IllegalArgumentException("--merge: shard " + sh.index() + "/" + count + " appears"
                                + " twice (" + st + ")");
                    }
                    root.path("ran").forEach(n -> ran.add(n.asText()));
                    fill(skipped, root.path("skipped"));
                    fill(faults, root.path("faults"));
                    for (JsonNode n : root.path("ran")) {
                        Files.copy(d.resolve(n.asText() + ".npy"), into.resolve(n.asText() + ".npy"),
                                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot merge kernel shards into " + into, e);
        }
        List<Integer> missing = new ArrayList<>();
        for (int k = 1; k <= count; k++) {
            if (!found.containsKey(k)) {
                missing.add(k);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("--merge: shards " + missing + " of " + count + " are missing: a failed,"
                    + " cancelled or skipped shard fails the merge");
        }
        Shard all = new Shard(1, 1);
        Path status = into.resolve(all.fileName());
        writeStatus(status, "merged", all, ran, skipped, faults);
        return new Result(all, List.copyOf(ran), skipped, faults, 0, status);
    }

    private static void fill(Map<String, String> into, JsonNode o) {
        for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext();) {
            var e = it.next();
            into.put(e.getKey(), e.getValue().asText());
        }
    }
}
