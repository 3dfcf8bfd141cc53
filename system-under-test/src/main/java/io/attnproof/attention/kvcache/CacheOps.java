package io.attnproof.attention.kvcache;

import io.attnproof.attention.Require;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cache alignment functions of docs/system.md §6, used by per-sequence KV advance: {@code front_pad_single} and its
 * inverse {@code drop_dead_prefix} on one row, {@code front_align_batch} building a left-aligned batch from rows,
 * and {@code clone_out_cache} splitting it back. Each validates everything before it writes anything.
 */
public final class CacheOps {
    private CacheOps() {
    }

    /**
     * {@code front_pad_single}: moves the live run of a one-row cache so it ends at column {@code target}, zero-fills
     * the {@code lead = target - live} columns in front, and sets {@code current_seq_len = target}. Anything written
     * beyond the live run is discarded (positions {@code >= target} become zero; {@code written = target}).
     *
     * @return the lead, {@code target - live}
     * @throws IllegalArgumentException for a batched cache, {@code target < live} (naming both) or beyond capacity
     */
    public static int frontPadSingle(SingleCache oneRow, int target) {
        requireOneRow("oneRow", oneRow);
        int live = oneRow.currentSeqLen();
        Require.that(target >= live, "target", target, "be >= live = " + live + " (lead = target - live = "
                + (target - live) + "; front_pad_single pads, never truncates)");
        Require.that(target <= oneRow.capacity(), "target", target, "be <= capacity = " + oneRow.capacity());
        int lead = target - live;
        int d = oneRow.headDim();
        float[] k = shifted(oneRow.kData(), oneRow.capacity() * d, 0, lead * d, live * d);
        float[] v = oneRow.vAliasesK() ? k : shifted(oneRow.vData(), oneRow.capacity() * d, 0, lead * d, live * d);
        oneRow.replace(k, v, target);
        return lead;
    }

    /**
     * {@code drop_dead_prefix}, the inverse of {@link #frontPadSingle}: drops the first {@code lead} columns of a
     * one-row cache, which must be zero-filled (K and V), moving the live run to column 0;
     * {@code current_seq_len} becomes {@code len - lead} and positions beyond it become zero.
     *
     * @throws IllegalArgumentException for a batched cache, {@code lead} outside {@code [0, len]}, or a prefix
     *     holding a nonzero element (it would drop a live token)
     */
    public static void dropDeadPrefix(SingleCache oneRow, int lead) {
        requireOneRow("oneRow", oneRow);
        int len = oneRow.currentSeqLen();
        Require.nonNegative("lead", lead);
        Require.that(lead <= len, "lead", lead, "be <= current_seq_len = " + len);
        requireZeroPrefix(oneRow, 0, lead, "lead", lead);
        int d = oneRow.headDim();
        float[] k = shifted(oneRow.kData(), oneRow.capacity() * d, lead * d, 0, (len - lead) * d);
        float[] v = oneRow.vAliasesK() ? k : shifted(oneRow.vData(), oneRow.capacity() * d, lead * d, 0, (len - lead) * d);
        oneRow.replace(k, v, len - lead);
    }

    /**
     * {@code front_align_batch}: a new batched cache whose row i is {@code rows[i]}'s live run front-padded to the
     * batch max (its last token at the end column, {@code lead_i = max - live_i} zero columns in front), with
     * {@code current_seq_len = max}. The batch keeps one V layout: V aliases K iff it does in every row (V4 always;
     * a mixed batch is split, and {@link #cloneOutCache} then hands every row back split, its data unchanged).
     * The rows are not changed.
     *
     * @throws IllegalArgumentException for no rows, a batched row, or rows differing in capacity, head dim, dtype
     *     or device from row 0
     */
    public static Aligned<SingleCache> frontAlignBatch(List<SingleCache> rows) {
        Require.present("rows", rows);
        Require.that(!rows.isEmpty(), "rows", "[]", "hold at least one row");
        SingleCache first = requireOneRow("rows[0]", rows.get(0));
        int max = 0;
        boolean aliased = true;
        for (int i = 0; i < rows.size(); i++) {
            SingleCache r = requireOneRow("rows[" + i + "]", rows.get(i));
            requireSameGeometry("rows", i, r, first, false);
            max = Math.max(max, r.currentSeqLen());
            aliased &= r.vAliasesK();
        }
        int b = rows.size();
        int cap = first.capacity();
        int d = first.headDim();
        float[] k = new float[b * cap * d];
        float[] v = aliased ? k : new float[b * cap * d];
        int[] leads = new int[b];
        for (int i = 0; i < b; i++) {
            SingleCache r = rows.get(i);
            int live = r.currentSeqLen();
            leads[i] = max - live;
            System.arraycopy(r.kData(), 0, k, (i * cap + leads[i]) * d, live * d);
            if (!aliased) {
                System.arraycopy(r.vData(), 0, v, (i * cap + leads[i]) * d, live * d);
            }
        }
        return new Aligned<>(SingleCache.over(b, cap, d, first.dtype(), first.device(), k, v, max), leads);
    }

    /**
     * {@code clone_out_cache}: splits a front-aligned batch back into one-row caches, row i holding only its
     * {@code liveLengths[i]} live tokens: its dead prefix dropped (it must be zero-filled) and
     * {@code current_seq_len = liveLengths[i]}, NOT the batched width; each row has the batch's V layout. Upstream
     * copied the batched width into every row's {@code current_seq_len}, keeping the dead prefix as if it were
     * tokens, so the next {@code front_align_batch} padded relative to already-padded lengths and the dead prefix
     * grew linearly with the steps. The batch is not changed.
     *
     * @throws IllegalArgumentException for a wrong-width vector, a length outside {@code [0, width]}, or a dead
     *     prefix holding a nonzero element
     */
    public static List<SingleCache> cloneOutCache(SingleCache batched, int[] liveLengths) {
        Require.present("batched", batched);
        Require.present("liveLengths", liveLengths);
        int b = batched.batch();
        int width = batched.currentSeqLen();
        Require.that(liveLengths.length == b, "liveLengths.length", liveLengths.length, "equal the batch " + b);
        for (int i = 0; i < b; i++) {
            Require.that(liveLengths[i] >= 0 && liveLengths[i] <= width, "liveLengths[" + i + "]", liveLengths[i],
                    "lie in [0, current_seq_len = " + width + "]");
            requireZeroPrefix(batched, i, width - liveLengths[i], "liveLengths[" + i + "]", liveLengths[i]);
        }
        int cap = batched.capacity();
        int d = batched.headDim();
        List<SingleCache> out = new ArrayList<>(b);
        for (int i = 0; i < b; i++) {
            int live = liveLengths[i];
            int from = (i * cap + width - live) * d;
            float[] k = new float[cap * d];
            System.arraycopy(batched.kData(), from, k, 0, live * d);
            float[] v = k;
            if (!batched.vAliasesK()) {
                v = new float[cap * d];
                System.arraycopy(batched.vData(), from, v, 0, live * d);
            }
            out.add(SingleCache.over(1, cap, d, batched.dtype(), batched.device(), k, v, live));
        }
        return out;
    }

    /**
     * {@link #frontAlignBatch} per layer over one-row {@link NormalCache}s: layer l of the result aligns layer l of
     * every row. A row's layers must share one length, so every layer gets the same leads.
     *
     * @throws IllegalArgumentException for no rows, a batched row, differing layer counts or geometry, or a row whose
     *     layers differ in length
     */
    public static Aligned<NormalCache> frontAlignLayers(List<NormalCache> rows) {
        Require.present("rows", rows);
        Require.that(!rows.isEmpty(), "rows", "[]", "hold at least one row");
        NormalCache first = Require.present("rows[0]", rows.get(0));
        for (int i = 0; i < rows.size(); i++) {
            NormalCache r = Require.present("rows[" + i + "]", rows.get(i));
            Require.that(r.batch() == 1, "rows[" + i + "].batch", r.batch(), "be 1 (one row per cache)");
            Require.that(r.numLayers() == first.numLayers(), "rows[" + i + "].numLayers", r.numLayers(),
                    "equal rows[0].numLayers = " + first.numLayers());
            requireSameGeometry("rows", i, r.layer(0), first.layer(0), false);
            for (int l = 0; l < r.numLayers(); l++) {
                Require.that(r.layer(l).currentSeqLen() == r.currentSeqLen(),
                        "rows[" + i + "].layer(" + l + ").currentSeqLen", r.layer(l).currentSeqLen(),
                        "equal rows[" + i + "].layer(0).currentSeqLen = " + r.currentSeqLen()
                                + " (a row's layers share one length, hence one lead)");
            }
        }
        List<SingleCache> layers = new ArrayList<>(first.numLayers());
        int[] leads = null;
        for (int l = 0; l < first.numLayers(); l++) {
            List<SingleCache> layerRows = new ArrayList<>(rows.size());
            for (NormalCache r : rows) {
                layerRows.add(r.layer(l));
            }
            Aligned<SingleCache> aligned = frontAlignBatch(layerRows);
            layers.add(aligned.cache());
            leads = aligned.leads();
        }
        return new Aligned<>(NormalCache.of(layers), leads);
    }

    /**
     * {@link #cloneOutCache(SingleCache, int[])} per layer: one one-row {@link NormalCache} per batch row, each
     * layer holding only that row's live tokens.
     *
     * @throws IllegalArgumentException as the per-layer version, naming the layer
     */
    public static List<NormalCache> cloneOutCache(NormalCache batched, int[] liveLengths) {
        Require.present("batched", batched);
        Require.present("liveLengths", liveLengths);
        List<List<SingleCache>> perLayer = new ArrayList<>(batched.numLayers());
        for (int l = 0; l < batched.numLayers(); l++) {
            try {
                perLayer.add(cloneOutCache(batched.layer(l), liveLengths));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("layer " + l + ": " + e.getMessage(), e);
            }
        }
        List<NormalCache> out = new ArrayList<>(batched.batch());
        for (int i = 0; i < batched.batch(); i++) {
            List<SingleCache> layers = new ArrayList<>(perLayer.size());
            for (List<SingleCache> rowsOfLayer : perLayer) {
                layers.add(rowsOfLayer.get(i));
            }
            out.add(NormalCache.of(layers));
        }
        return out;
    }

    /**
     * The capability check {@code cache_supports_per_sequence_advance} for a per-sequence request on {@code cache}.
     *
     * @throws IllegalArgumentException naming the check, the cache kind and why it cannot carry per-row lengths
     */
    public static void requirePerSequenceAdvance(KvCache cache) {
        Require.present("cache", cache);
        switch (cache) {
            case XsRolling x -> throw x.refusal("a per-sequence KV advance");
            case SingleCache s -> { }
            case NormalCache n -> { }
            case PagedCache p -> { }
        }
    }

    /** Throws unless {@code row} matches {@code first} in capacity, head dim, dtype, device (and batch if asked). */
    static void requireSameGeometry(String what, int i, SingleCache row, SingleCache first, boolean batchToo) {
        String at = what + "[" + i + "]";
        String ref = what + "[0]";
        if (batchToo) {
            Require.that(row.batch() == first.batch(), at + ".batch", row.batch(), "equal " + ref + ".batch = " + first.batch());
        }
        Require.that(row.capacity() == first.capacity(), at + ".capacity", row.capacity(),
                "equal " + ref + ".capacity = " + first.capacity());
        Require.that(row.headDim() == first.headDim(), at + ".headDim", row.headDim(),
                "equal " + ref + ".headDim = " + first.headDim());
        Require.that(row.dtype() == first.dtype(), at + ".dtype", row.dtype(), "equal " + ref + ".dtype = " + first.dtype());
        Require.that(row.device().equals(first.device()), at + ".device", row.device(),
                "equal " + ref + ".device = " + first.device());
    }

    private static SingleCache requireOneRow(String param, SingleCache cache) {
        Require.present(param, cache);
        Require.that(cache.batch() == 1, param + ".batch", cache.batch(),
                "be 1 (one row per cache; row(i) takes one out of a batch)");
        return cache;
    }

    /** Throws unless columns {@code [0, lead)} of row {@code b} are zero in K and V. */
    private static void requireZeroPrefix(SingleCache cache, int b, int lead, String param, int value) {
        int d = cache.headDim();
        int base = b * cache.capacity() * d;
        for (int p = 0; p < lead; p++) {
            for (int c = 0; c < d; c++) {
                String which = cache.kData()[base + p * d + c] != 0f ? "K"
                        : cache.vData()[base + p * d + c] != 0f ? "V" : null;
                if (which != null) {
                    Require.that(false, param, value, "leave a zero-filled dead prefix of " + lead + " column(s) in row "
                            + b + ", but " + which + " at column " + p + " is nonzero (a live token would be dropped)");
                }
            }
        }
    }

    /** A fresh zeroed array of {@code size} with {@code n} elements of {@code src} from {@code from} placed at {@code to}. */
    private static float[] shifted(float[] src, int size, int from, int to, int n) {
        float[] out = new float[size];
        System.arraycopy(src, from, out, to, n);
        return out;
    }

    /**
     * Refuses, naming the parameter, the value and the rule, an append that is not {@code k, v[B, 1, t, D]} at the
     * cache's batch, head dim, dtype and device.
     */
    static void checkAppend(Tensor k, Tensor v, int batch, int headDim, DType dtype, Device device) {
        Require.present("k", k);
        Require.present("v", v);
        Require.that(k.rank() == 4, "k.rank", k.rank(), "be 4 [B, 1, t, D]");
        Require.that(k.dim(0) == batch && k.dim(1) == 1 && k.dim(3) == headDim, "k.shape", k.shape(),
                "be [" + batch + ", 1, t, " + headDim + "] (the cache's batch, one shared KV head, its head dim)");
        Require.that(Arrays.equals(v.shape(), k.shape()), "v.shape", v.shape(),
                "equal k.shape " + Arrays.toString(k.shape()));
        for (Tensor x : new Tensor[] {k, v}) {
            Require.that(x.dtype() == dtype && x.device().equals(device), x == k ? "k" : "v", x,
                    "have the cache's dtype " + dtype + " and device " + device);
        }
    }
}
