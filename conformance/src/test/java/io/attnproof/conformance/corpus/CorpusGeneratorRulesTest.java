package io.attnproof.conformance.corpus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The generated case list keeps the rules its Javadoc and docs/conformance.md state, in the small and the full corpus:
 * every case is read by a check and every case a control must miss is itself judged to pass, controls are named as
 * such, each control changes its reference by exactly what it says, the boundary and real-shape cases sit on the
 * shapes the docs list, degenerate cases really hold rows with no live key, canaries cover exactly the dead keys, and
 * two generations are identical.
 */
class CorpusGeneratorRulesTest {
    private static final long SEED = 13;
    /**
     * The corpus a test judges: a fresh small one per test (PIT runs a test against a mutant only when the test itself
     * executed the mutated line, so every test builds its own; @BeforeAll code counts for no test), or the full one.
     */
    private CorpusGenerator current;
    private boolean small = true;

    private List<CorpusGenerator> judged() {
        if (current == null) {
            current = CorpusGenerator.build(SEED, true);
        }
        return List.of(current);
    }

    private String scale(CorpusGenerator g) {
        return small ? "small" : "full";
    }

    private static Map<String, CaseSpec> byId(CorpusGenerator g) {
        Map<String, CaseSpec> m = new LinkedHashMap<>();
        for (CaseSpec c : g.cases()) {
            m.put(c.id(), c);
        }
        return m;
    }

    private static int cfg(CaseSpec c, String key) {
        Object o = c.config().get(key);
        return o == null ? 0 : ((Number) o).intValue();
    }

    private static int[] shape(CaseSpec c, String tensor) {
        CaseSpec.Arr a = c.tensors().get(tensor);
        return a == null ? null : a.shape();
    }

    /** Raw keys of a union case: rawPrefix + tk. */
    private static int tkFull(CaseSpec c) {
        return cfg(c, "rawPrefix") + shape(c, "k")[2];
    }

    private static int tc(CaseSpec c) {
        int[] s = shape(c, "compressed_kv");
        return s == null ? 0 : s[2];
    }

    /** The absolute position of a union case's first query row: rawPrefix + tk - tq. */
    private static int q0(CaseSpec c) {
        return tkFull(c) - shape(c, "q")[2];
    }

    private static List<CaseSpec> cases(CorpusGenerator g, String claim, String idPart) {
        return g.cases().stream().filter(c -> c.claim().equals(claim) && c.id().contains(idPart)).toList();
    }

    private static List<CheckSpec> controlsAgainst(CorpusGenerator g, String caseId) {
        return g.checks().stream().filter(k -> k.control() && caseId.equals(k.against())).toList();
    }

    @Test
    void idsAreUniqueAndEveryCaseIsReadByACheck() {
        for (CorpusGenerator g : judged()) {
            Map<String, CaseSpec> cases = byId(g);
            assertEquals(g.cases().size(), cases.size(), scale(g) + ": case ids must be unique");
            assertEquals(g.checks().size(), g.checks().stream().map(CheckSpec::id).distinct().count(),
                    scale(g) + ": check ids must be unique");
            Set<String> read = new HashSet<>();
            for (CheckSpec k : g.checks()) {
                read.addAll(CorpusExport.caseIds(k));
            }
            for (String id : read) {
                assertTrue(cases.containsKey(id), scale(g) + ": a check reads " + id + ", which is not a case");
            }
            for (String id : cases.keySet()) {
                // The export keeps only the cases its checks read: a case no check reads is silently lost.
                assertTrue(read.contains(id), scale(g) + ": no check reads case " + id);
            }
        }
    }

    @Test
    void everyReferenceAControlMissesOrASameBitsPairMatchesIsJudgedToPass() {
        for (CorpusGenerator g : judged()) {
            Set<String> judged = g.checks().stream()
                    .filter(k -> !k.control() && (k.type().equals("oracle") || k.type().equals("degenerate")))
                    .map(k -> k.a().caseId()).collect(Collectors.toSet());
            for (CheckSpec k : g.checks()) {
                if (k.against() != null) {
                    assertTrue(judged.contains(k.against()), scale(g) + ": " + k.id() + " must miss " + k.against()
                            + "'s oracle, which no passing oracle or degenerate check judges");
                }
                if (k.type().equals("same-bits") && !k.control()) {
                    // Equal bits prove an identity only when the reference is itself right.
                    assertTrue(judged.contains(k.b().caseId()), scale(g) + ": " + k.id() + " matches the bits of "
                            + k.b().caseId() + ", which no passing oracle check judges");
                }
            }
        }
    }

    @Test
    void controlsAndOnlyControlsAreNamedControl() {
        for (CorpusGenerator g : judged()) {
            for (CheckSpec k : g.checks()) {
                assertEquals(k.control(), k.id().contains(":control"), scale(g) + ": check " + k.id() + " expects "
                        + k.expect());
            }
        }
    }

    @Test
    void everyClaimHasACaseAndANegativeControlInTheSmallCorpusToo() {
        for (CorpusGenerator g : judged()) {
            for (String claim : CorpusGenerator.CLAIMS) {
                assertTrue(g.checks().stream().anyMatch(k -> k.claim().equals(claim) && k.control()),
                        scale(g) + ": " + claim + " has a negative control");
                assertTrue(g.checks().stream().anyMatch(k -> k.claim().equals(claim) && !k.control()),
                        scale(g) + ": " + claim + " has a positive check");
            }
        }
    }

    @Test
    void twoGenerationsOfOneSeedAreIdentical() {
        CorpusGenerator first = judged().get(0);
        CorpusGenerator again = CorpusGenerator.build(SEED, true);
        assertEquals(first.checks(), again.checks());
        assertEquals(first.cases().size(), again.cases().size());
        for (int i = 0; i < first.cases().size(); i++) {
            CaseSpec a = first.cases().get(i);
            CaseSpec b = again.cases().get(i);
            assertEquals(a.id(), b.id());
            assertEquals(a.seed(), b.seed(), a.id());
            for (String t : a.tensors().keySet()) {
                assertArrayEquals(a.tensors().get(t).values(), b.tensors().get(t).values(), a.id() + " " + t);
            }
        }
    }

    // ---- controls change their reference by exactly what they say --------------------------------------------------

    @Test
    void aWindowPlusOneControlWidensItsReferenceByOneKey() {
        for (CorpusGenerator g : judged()) {
            Map<String, CaseSpec> cases = byId(g);
            int n = 0;
            for (CheckSpec k : g.checks()) {
                if (k.control() && k.a().caseId().contains("window+1")) {
                    assertEquals(cfg(cases.get(k.against()), "window") + 1, cfg(cases.get(k.a().caseId()), "window"),
                            scale(g) + ": " + k.id());
                    n++;
                }
            }
            assertTrue(n >= 3, scale(g) + ": window + 1 controls of U1, U5 and S6");
        }
    }

    @Test
    void b2QueriesAloneSeeTheirPrefixAndTheLateControlOneKeyMore() {
        for (CorpusGenerator g : judged()) {
            Map<String, CaseSpec> cases = byId(g);
            int n = 0;
            for (CaseSpec late : cases(g, "B2", "-query3-one-late-")) {
                String t = late.dtype();
                CaseSpec call = cases.get("B2-prefill-" + t);
                CaseSpec alone = cases.get("B2-query3-alone-" + t);
                assertNotNull(call, late.id() + ": its N-query call");
                assertNotNull(alone, late.id() + ": query 3 alone");
                // Query r of the call sits at q0 + r and sees keys 0 .. q0 + r: q0 + r + 1 keys alone.
                assertEquals(q0(call) + 3 + 1, tkFull(alone), alone.id() + ": keys up to its own position");
                assertEquals(tkFull(alone) + 1, tkFull(late), late.id() + ": one position later is one key more");
                assertEquals(1, shape(late, "q")[2], late.id() + ": one query");
                n++;
            }
            assertTrue(n >= 1, scale(g) + ": B2 has a one-late control");
        }
    }

    @Test
    void aCuSeqlensControlMovesOnlyTheFirstBoundaryOneRowLate() {
        for (CorpusGenerator g : judged()) {
            Map<String, CaseSpec> cases = byId(g);
            int n = 0;
            for (CheckSpec k : g.checks()) {
                if (k.control() && k.a().caseId().contains("cu-seqlens+1")) {
                    CaseSpec c = cases.get(k.a().caseId());
                    CaseSpec ref = cases.get(k.against());
                    assertEquals(cfg(ref, "window"), cfg(c, "window"), k.id() + ": only the boundary moves");
                    for (String key : List.of("cu_seqlens_q", "cu_seqlens_k")) {
                        int[] want = ((int[]) ref.config().get(key)).clone();
                        want[1]++;
                        assertArrayEquals(want, (int[]) c.config().get(key), k.id() + " " + key);
                    }
                    n++;
                }
            }
            assertTrue(n >= 2, scale(g) + ": S6 and the real-shape S6 have a cu_seqlens control");
        }
    }

    // ---- U: union attention -----------------------------------------------------------------------------------------

    @Test
    void u1SitsOnTheRawWindowEdgesAndS6IsWindowedToo() {
        for (CorpusGenerator g : judged()) {
            Map<String, Set<Integer>> tks = new LinkedHashMap<>();
            for (CheckSpec k : g.checks()) {
                if (k.claim().equals("U1") && !k.control()) {
                    CaseSpec c = byId(g).get(k.a().caseId());
                    assertEquals(0, cfg(c, "ratio"), c.id());
                    int w = cfg(c, "window");
                    Set<Integer> want = Set.of(w - 1, w, w + 1, 2 * w, 4 * w + 1);
                    tks.computeIfAbsent(c.dtype() + " W " + w, x -> new TreeSet<>()).add(tkFull(c));
                    assertTrue(want.contains(tkFull(c)), c.id() + ": t_k " + tkFull(c) + " not in " + want);
                }
            }
            assertFalse(tks.isEmpty());
            tks.forEach((key, got) -> assertEquals(5, got.size(), key + ": every one of W-1, W, W+1, 2W, 4W+1: " + got));
            // S6 (docs: the varlen fallback is causal and windowed): its plain varlen cases at a window and at none.
            Set<Integer> windows = cases(g, "S6", "S6-varlen-w").stream().filter(c -> !c.id().contains("+1"))
                    .map(c -> cfg(c, "window")).collect(Collectors.toSet());
            assertTrue(windows.contains(0) && windows.stream().anyMatch(w -> w > 0), scale(g) + ": S6 windows " + windows);
        }
    }

    @Test
    void u5SitsAroundTheWindowAtBothRatios() {
        for (CorpusGenerator g : judged()) {
            Map<String, Set<Integer>> tks = new LinkedHashMap<>();
            for (CheckSpec k : g.checks()) {
                if (k.claim().equals("U5") && !k.control()) {
                    CaseSpec c = byId(g).get(k.a().caseId());
                    int w = cfg(c, "window");
                    int r = cfg(c, "ratio");
                    assertTrue(r == 4 || r == 128, c.id() + ": ratio " + r);
                    tks.computeIfAbsent(c.dtype() + " R " + r + " W " + w, x -> new TreeSet<>()).add(tkFull(c));
                    // U5's Javadoc: t_k in {W-1, W, W+1, 2W, 4W, 4W+1}, W 128.
                    assertTrue(Set.of(w - 1, w, w + 1, 2 * w, 4 * w, 4 * w + 1).contains(tkFull(c)), c.id());
                }
            }
            if (!small) {
                assertEquals(6, tks.size(), "R 4 and 128 at every dtype: " + tks.keySet());
                tks.forEach((key, got) -> assertEquals(6, got.size(), key + ": every t_k around W: " + got));
            }
            assertFalse(tks.isEmpty(), scale(g) + ": U5");
        }
    }

    @Test
    void compressedBlocksAreOnlyOnCompressedLayersAndCoverTheRawKeysOfTheUnionClaims() {
        for (CorpusGenerator g : judged()) {
            for (CaseSpec c : g.cases()) {
                if (!c.kind().equals("union")) {
                    continue;
                }
                int r = cfg(c, "ratio");
                assertTrue(r == 0 || r == 4 || r == 128, c.id() + ": ratio " + r);
                if (r == 0) {
                    assertEquals(0, tc(c), c.id() + ": no compressed blocks on a ratio-0 layer");
                    continue;
                }
                if (!c.claim().startsWith("U")) {
                    continue;   // a ragged row alone keeps its cohort's blocks
                }
                // A block holds R raw keys: at most the blocks of the raw keys present, plus U7's two past the threshold.
                int blocks = (tkFull(c) + r - 1) / r;
                assertTrue(tc(c) <= blocks + 2, c.id() + ": " + tc(c) + " blocks for " + tkFull(c) + " raw keys at R " + r);
            }
        }
    }

    @Test
    void u3NarrowsToTheKeepSpanWithCanariesBeforeItAndTheControlOneKeyEarly() {
        for (CorpusGenerator g : judged()) {
            for (CaseSpec whole : cases(g, "U3", "U3-whole-")) {
                String t = whole.dtype();
                CaseSpec narrowed = byId(g).get("U3-narrowed-" + t);
                CaseSpec offset = byId(g).get("U3-offset-" + t);
                assertNotNull(narrowed);
                assertNotNull(offset);
                int tq = shape(whole, "q")[2];
                int w = cfg(whole, "window");
                int keep = shape(narrowed, "k")[2];
                int base = cfg(narrowed, "rawPrefix");
                // The window admits p - W < j <= p for p in q0 .. q0 + tq - 1: tq + W - 1 keys.
                assertEquals(Math.min(tq + w - 1, tkFull(whole)), keep, narrowed.id() + ": the keep span");
                assertEquals(tkFull(whole), base + keep, narrowed.id() + ": the span ends at the last key");
                int d = shape(whole, "k")[3];
                int b = shape(whole, "k")[0];
                int tk = shape(whole, "k")[2];
                float[] wk = whole.tensors().get("k").values();
                float[] nk = narrowed.tensors().get("k").values();
                float[] ok = offset.tensors().get("k").values();
                List<int[]> canary = whole.canary().getOrDefault("k", List.of());
                assertEquals(b * base, canary.size(), whole.id() + ": one canary per key before base");
                for (int row = 0; row < b; row++) {
                    for (int j = 0; j < tk; j++) {
                        boolean dead = j < base;
                        assertEquals(dead, Float.isNaN(wk[(row * tk + j) * d]), whole.id() + " key " + row + "," + j);
                    }
                    assertArrayEquals(Arrays.copyOfRange(wk, (row * tk + base) * d, (row * tk + tk) * d),
                            Arrays.copyOfRange(nk, row * keep * d, (row + 1) * keep * d), narrowed.id() + " row " + row);
                    float[] early = Arrays.copyOfRange(ok, row * keep * d, (row + 1) * keep * d);
                    assertArrayEquals(Arrays.copyOfRange(nk, row * keep * d, (row * keep + keep - 1) * d),
                            Arrays.copyOfRange(early, d, keep * d), offset.id() + ": the same span one key early");
                }
            }
        }
    }

    @Test
    void u4MasksHaveTheirDocumentedShapesAndEveryKindOfEntry() {
        for (CorpusGenerator g : judged()) {
            Map<String, int[]> shapes = new LinkedHashMap<>();
            for (CaseSpec c : cases(g, "U4", "U4-")) {
                int[] m = shape(c, "mask");
                if (m == null) {
                    continue;
                }
                int h = shape(c, "q")[1];
                int tq = shape(c, "q")[2];
                int n = tkFull(c);
                // docs/conformance.md: n = rawPrefix + tk (raw keys only) or rawPrefix + tk + tc.
                if (c.id().contains("rank2")) {
                    assertArrayEquals(new int[] {tq, n + tc(c)}, m, c.id());
                } else if (c.id().contains("rank4-raw")) {
                    assertArrayEquals(new int[] {shape(c, "q")[0], h, tq, n}, m, c.id());
                } else {
                    assertArrayEquals(new int[] {1, h, 1, n + tc(c)}, m, c.id());
                }
                shapes.put(c.id().replace("-" + c.dtype(), ""), m);
                float[] v = c.tensors().get("mask").values();
                assertTrue(hasEntry(v, x -> x == Float.NEGATIVE_INFINITY), c.id() + ": -inf entries");
                assertTrue(hasEntry(v, x -> x == 0f), c.id() + ": zero entries");
                assertTrue(hasEntry(v, x -> Float.isFinite(x) && x != 0f), c.id() + ": finite biases");
            }
            Set<String> want = small ? Set.of("U4-rank2", "U4-rank4-raw")
                    : Set.of("U4-rank2", "U4-rank4-raw", "U4-head-axis");
            assertEquals(want, shapes.keySet(), scale(g) + ": U4's caller masks");
        }
    }

    private interface FloatTest {
        boolean test(float x);
    }

    private static boolean hasEntry(float[] v, FloatTest t) {
        for (float x : v) {
            if (t.test(x)) {
                return true;
            }
        }
        return false;
    }

    private static final Pattern THRESHOLD = Pattern.compile("threshold (\\d+) of (\\d+) blocks");

    @Test
    void u7DecodesAtPositions14To16WithTheThresholdItsDescriptionStates() {
        for (CorpusGenerator g : judged()) {
            Map<String, Set<Integer>> positions = new LinkedHashMap<>();
            Map<String, CaseSpec> cases = byId(g);
            for (CaseSpec c : cases(g, "U7", "U7-p")) {
                assertEquals(1, shape(c, "q")[2], c.id() + ": a decode");
                int p = q0(c);
                int r = cfg(c, "ratio");
                positions.computeIfAbsent(c.dtype(), x -> new TreeSet<>()).add(p);
                Matcher m = THRESHOLD.matcher(c.description());
                assertTrue(m.find(), c.description());
                assertEquals((p + 1) / r, Integer.parseInt(m.group(1)), c.id() + ": floor((p+1)/R)");
                assertEquals(tc(c), Integer.parseInt(m.group(2)), c.id() + ": the blocks present");
                assertTrue(tc(c) >= (p + 1) / r + 2, c.id() + ": blocks past the threshold present");
            }
            assertFalse(positions.isEmpty());
            positions.forEach((t, got) -> assertEquals(Set.of(14, 15, 16), got, t));
            for (CheckSpec k : g.checks()) {
                if (k.claim().equals("U7") && k.control()) {
                    assertEquals(q0(cases.get(k.against())) + 1, q0(cases.get(k.a().caseId())), k.id()
                            + ": one position later");
                }
            }
        }
    }

    // ---- R: ragged cohorts --------------------------------------------------------------------------------------------

    private static final Pattern DEAD_PREFIX = Pattern.compile("dead prefix (\\d+)");

    @Test
    void raggedCohortsHoldNanCanariesExactlyInTheirDeadPrefixes() {
        for (CorpusGenerator g : judged()) {
            int n = 0;
            for (String claim : List.of("R1", "R9")) {
                for (CaseSpec c : cases(g, claim, "-ragged-")) {
                    long[] rowQ0 = (long[]) c.config().get("rowQ0");
                    int q0 = q0(c);
                    int tk = shape(c, "k")[2];
                    int d = shape(c, "k")[3];
                    float[] k = c.tensors().get("k").values();
                    Set<String> slots = c.canary().getOrDefault("k", List.of()).stream().map(Arrays::toString)
                            .collect(Collectors.toSet());
                    long dead = 0;
                    for (int b = 0; b < rowQ0.length; b++) {
                        long lead = q0 - rowQ0[b];
                        dead += lead;
                        for (int j = 0; j < tk; j++) {
                            assertEquals(j < lead, Float.isNaN(k[(b * tk + j) * d]), c.id() + " key " + b + "," + j);
                            assertEquals(j < lead, slots.contains(Arrays.toString(new int[] {b, 0, j})),
                                    c.id() + " canary " + b + "," + j);
                        }
                    }
                    assertTrue(dead > 0, c.id() + ": a ragged cohort has dead prefixes");
                    assertEquals(dead, slots.size(), c.id());
                    for (CheckSpec x : g.checks()) {
                        if (x.control() && x.type().startsWith("same") && x.b().caseId().startsWith(
                                c.id().replace("-ragged-", "-row3-alone-"))) {
                            Matcher m = DEAD_PREFIX.matcher(x.note());
                            assertTrue(m.find(), x.note());
                            assertEquals(q0 - rowQ0[3], Long.parseLong(m.group(1)), x.id() + ": row 3's dead prefix");
                            n++;
                        }
                    }
                }
            }
            assertTrue(n > 0, scale(g) + ": the batch-wide controls of R1 and R9");
        }
    }

    // ---- S: sinks attention -------------------------------------------------------------------------------------------

    /** Random masks: roughly a quarter -inf, the rest small biases (|bias| < 3, a few N(0, 0.5^2) sigmas). */
    @Test
    void randomMasksAreAboutAQuarterMinusInfinityAndSmallBiases() {
        for (CorpusGenerator g : judged()) {
            Set<Integer> ranks = new HashSet<>();
            for (CaseSpec c : g.cases()) {
                if (!c.claim().equals("S1") || shape(c, "mask") == null) {
                    continue;
                }
                if (!c.id().contains("gqa")) {
                    ranks.add(shape(c, "mask").length);
                }
                float[] v = c.tensors().get("mask").values();
                int inf = 0;
                for (float x : v) {
                    if (x == Float.NEGATIVE_INFINITY) {
                        inf++;
                    } else {
                        assertTrue(Float.isFinite(x) && Math.abs(x) < 3, c.id() + ": bias " + x + " is not small");
                    }
                }
                double share = (double) inf / v.length;
                assertTrue(share > 0.1 && share < 0.4, c.id() + ": " + share + " of the entries -inf, not about 1/4");
            }
            // S1's Javadoc: rank 4 and rank 2 masks (the small corpus has one head dim, so one of them).
            assertTrue(small ? ranks.size() == 1 : ranks.equals(Set.of(2, 4)), scale(g) + ": S1 mask ranks " + ranks);
        }
    }

    // ---- B: boundaries and degenerate rows -----------------------------------------------------------------------------

    @Test
    void b1SitsOnEveryBoundaryOfTheList() {
        for (CorpusGenerator g : judged()) {
            for (String t : small ? List.of("F32") : List.of("F32", "F16", "BF16")) {
                Set<Integer> prefill = new TreeSet<>();
                Set<Integer> decode = new TreeSet<>();
                Set<Integer> kvs = new TreeSet<>();
                Map<Integer, Set<Integer>> tiles = new LinkedHashMap<>();
                for (CaseSpec c : cases(g, "B1", "B1-")) {
                    if (!c.dtype().equals(t) || c.id().contains("window1")) {
                        continue;
                    }
                    int[] q = shape(c, "q");
                    if (c.id().startsWith("B1-tile")) {
                        tiles.computeIfAbsent(tkFull(c), x -> new TreeSet<>()).add(q[2]);
                    } else if (c.id().startsWith("B1-split")) {
                        kvs.add(shape(c, "k")[2]);
                    } else {
                        (q[2] == 1 ? decode : prefill).add(q[3]);
                    }
                }
                Set<Integer> dims = new TreeSet<>(small ? Boundaries.SMALL_HEAD_DIMS
                        : Boundaries.around(Boundaries.HEAD_DIM_EDGES));
                assertEquals(dims, prefill, scale(g) + " " + t + ": prefill head dims");
                assertTrue(dims.containsAll(decode) && decode.contains(64), scale(g) + " " + t + ": decode " + decode);
                if (!small) {
                    assertEquals(dims, decode, t + ": a decode at every head-dim edge");
                    assertEquals(new TreeSet<>(Boundaries.around(Boundaries.UNION_TILE_EDGES)), tiles.keySet(), t);
                }
                assertFalse(tiles.isEmpty(), scale(g) + " " + t + ": union tile edges");
                tiles.forEach((tk, tqs) -> assertEquals(Set.of(1, 4), tqs, "tile t_k " + tk));
                assertTrue(Boundaries.around(Boundaries.UNION_TILE_EDGES).containsAll(tiles.keySet()));
                assertEquals(new TreeSet<>(Boundaries.around(Boundaries.SPLIT_K_EDGES)), kvs, t + ": split-K kv");
            }
        }
    }

    /** True when query row {@code r} of batch row {@code b} has -inf at every key of a [B, 1, tq, tk] mask. */
    private static boolean noLiveKey(float[] mask, int[] shape, int b, int r) {
        int tk = shape[3];
        int from = (b * shape[2] + r) * tk;
        for (int j = 0; j < tk; j++) {
            if (mask[from + j] != Float.NEGATIVE_INFINITY) {
                return false;
            }
        }
        return true;
    }

    @Test
    void b6DegenerateCasesHoldARowWithNoLiveKeyInEveryBatchRowAndTheirSinksAsDescribed() {
        for (CorpusGenerator g : judged()) {
            Map<String, CaseSpec> cases = byId(g);
            int n = 0;
            for (CheckSpec k : g.checks()) {
                if (!k.claim().equals("B6") || !k.type().equals("degenerate") || k.control()
                        || !k.a().caseId().contains("no-live-key")) {
                    continue;
                }
                CaseSpec c = cases.get(k.a().caseId());
                int[] m = shape(c, "mask");
                float[] mask = c.tensors().get("mask").values();
                for (int b = 0; b < m[0]; b++) {
                    boolean any = false;
                    for (int r = 0; r < m[2]; r++) {
                        any |= noLiveKey(mask, m, b, r);
                    }
                    assertTrue(any, c.id() + ": batch row " + b + " has a row with no live key");
                }
                // The same rows live in the control: the masked rows become live.
                for (CheckSpec ctl : controlsAgainst(g, c.id())) {
                    float[] live = cases.get(ctl.a().caseId()).tensors().get("mask").values();
                    assertFalse(hasEntry(live, x -> x == Float.NEGATIVE_INFINITY), ctl.id());
                }
                if (c.id().contains("gqa")) {
                    // docs: -inf sinks on half the heads.
                    float[] sinks = c.tensors().get("sinks").values();
                    int none = 0;
                    for (float s : sinks) {
                        none += s == Float.NEGATIVE_INFINITY ? 1 : 0;
                    }
                    assertEquals(sinks.length / 2, none, c.id() + ": -inf sinks on half the heads");
                }
                n++;
            }
            assertTrue(n >= 2, scale(g) + ": B6 and the real-shape B6");
            for (CaseSpec c : cases(g, "B6", "no-sinks-as-zero-logits")) {
                for (float s : c.tensors().get("sinks").values()) {
                    assertEquals(0f, s, c.id() + ": no sinks passed as zero logits");
                }
            }
            for (CaseSpec c : cases(g, "B6", "B6-no-sinks-d")) {
                assertFalse(c.tensors().containsKey("sinks"), c.id() + ": the sinks field absent");
                int[] m = shape(c, "mask");
                assertTrue(noLiveKey(c.tensors().get("mask").values(), m, 0, 0)
                        || noLiveKey(c.tensors().get("mask").values(), m, 1, 2), c.id() + ": rows with no live key");
            }
        }
    }

    // ---- real shapes ---------------------------------------------------------------------------------------------------

    @Test
    void realShapesSitAtTheDocumentedHeadDimsAndGqaRatiosAndEachKindHasAControl() {
        for (CorpusGenerator g : judged()) {
            Map<String, CaseSpec> cases = byId(g);
            for (String kind : List.of("S1-gqa", "S6-gqa")) {
                Set<Integer> dims = new TreeSet<>();
                for (CaseSpec c : g.cases()) {
                    if (!c.id().startsWith(kind)) {
                        continue;
                    }
                    int[] q = shape(c, "q");
                    int[] k = shape(c, "k");
                    int d = q[q.length - 1];
                    dims.add(d);
                    // docs: GQA 16/2, GQA 8/2 at 512.
                    assertEquals(d == 512 ? 8 : 16, q[q.length - 2 - (kind.equals("S1-gqa") ? 1 : 0)], c.id() + ": Hq");
                    assertEquals(2, k[k.length - 2 - (kind.equals("S1-gqa") ? 1 : 0)], c.id() + ": Hkv");
                }
                Set<Integer> want = small ? Set.of(80) : Set.of(64, 80, 96, 128, 256, 512);
                assertEquals(want, dims, scale(g) + ": " + kind + " head dims");
            }
            // B4: 300 cached keys, window 128, control the window ignored; B5 at kv_len 1023, 1024, 1025, 3000 (small
            // 1025); B6 at GQA 16/2.
            Set<Integer> kvs = new TreeSet<>();
            for (CaseSpec c : g.cases()) {
                int[] q = shape(c, "q");
                int[] k = shape(c, "k");
                if (c.id().startsWith("B4-decode") && !c.id().contains("no-window")) {
                    assertEquals(1, q[2], c.id() + ": a decode step");
                    assertEquals(300, k[2], c.id() + ": cached keys");
                    assertEquals(128, cfg(c, "window"), c.id());
                    for (CheckSpec x : controlsAgainst(g, c.id())) {
                        assertEquals(0, cfg(cases.get(x.a().caseId()), "window"), x.id() + ": the window ignored");
                    }
                } else if (c.id().startsWith("B5-decode") && !c.id().contains("first-split")) {
                    assertEquals(1, q[2], c.id() + ": a decode step");
                    assertEquals(0, q[1] % k[1], c.id() + ": Hq a multiple of Hkv");
                    kvs.add(k[2]);
                } else if (c.id().startsWith("B6-gqa")) {
                    assertEquals(16, q[1], c.id());
                    assertEquals(2, k[1], c.id());
                }
            }
            assertEquals(small ? Set.of(1025) : Set.of(1023, 1024, 1025, 3000), kvs, scale(g) + ": B5 kv_len");
            // "Each kind has a control that must fail."
            for (String kind : List.of("S1-gqa", "S6-gqa", "B4-decode", "B5-decode", "B6-gqa", "B6-no-sinks")) {
                assertTrue(g.checks().stream().anyMatch(k -> k.control() && k.against() != null
                        && k.against().startsWith(kind) && cases.containsKey(k.a().caseId())),
                        scale(g) + ": the real-shape kind " + kind + " has a control");
            }
        }
    }

    /** Every rule above holds in the full corpus too (all dtypes, every boundary and real shape). */
    @Test
    void theFullCorpusKeepsEveryRuleToo() {
        current = CorpusGenerator.build(SEED, false);
        small = false;
        idsAreUniqueAndEveryCaseIsReadByACheck();
        everyReferenceAControlMissesOrASameBitsPairMatchesIsJudgedToPass();
        controlsAndOnlyControlsAreNamedControl();
        everyClaimHasACaseAndANegativeControlInTheSmallCorpusToo();
        aWindowPlusOneControlWidensItsReferenceByOneKey();
        aCuSeqlensControlMovesOnlyTheFirstBoundaryOneRowLate();
        u1SitsOnTheRawWindowEdgesAndS6IsWindowedToo();
        u5SitsAroundTheWindowAtBothRatios();
        compressedBlocksAreOnlyOnCompressedLayersAndCoverTheRawKeysOfTheUnionClaims();
        u3NarrowsToTheKeepSpanWithCanariesBeforeItAndTheControlOneKeyEarly();
        u4MasksHaveTheirDocumentedShapesAndEveryKindOfEntry();
        u7DecodesAtPositions14To16WithTheThresholdItsDescriptionStates();
        raggedCohortsHoldNanCanariesExactlyInTheirDeadPrefixes();
        randomMasksAreAboutAQuarterMinusInfinityAndSmallBiases();
        b1SitsOnEveryBoundaryOfTheList();
        b6DegenerateCasesHoldARowWithNoLiveKeyInEveryBatchRowAndTheirSinksAsDescribed();
        realShapesSitAtTheDocumentedHeadDimsAndGqaRatiosAndEachKindHasAControl();
    }
}
