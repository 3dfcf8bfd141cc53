package io.attnproof.conformance.cases;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.attnproof.conformance.npy.Npy;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sinks case file (dense or packed varlen) is accepted exactly when it keeps README "Cases"' rules, at each rule's
 * boundary; a refusal names the case file, the field, the value and the rule.
 */
class SinksReaderRulesTest {
    /** Dense: q [B=2, Hq=2, tq=3, D=2], k [2, Hkv=1, tk=4, 2]. Varlen: q [4, 2, 2], k [5, 1, 2]. */
    static final int B = 2, HQ = 2, TQ = 3, TK = 4, D = 2, TOTAL_Q = 4, TOTAL_K = 5;

    @TempDir
    Path dir;
    CaseFiles files;

    @BeforeEach
    void inputs() {
        files = new CaseFiles(dir).npy("q", B, HQ, TQ, D).npy("k", B, 1, TK, D);
    }

    static String dense(String extra) {
        return "{'kind': 'sinks', 'q': 'q.npy', 'k': 'k.npy'" + extra + ", 'config': {'window': 0, 'dtype': 'F32'}}";
    }

    static String varlen(String cuQ, String cuK) {
        return "{'kind': 'sinks', 'q': 'q.npy', 'k': 'k.npy', 'config': {'window': 0, 'dtype': 'F32', 'cu_seqlens_q': "
                + cuQ + ", 'cu_seqlens_k': " + cuK + "}}";
    }

    SinksCase read(String json) {
        return assertInstanceOf(SinksCase.class, files.read(json));
    }

    void packed() {
        files.npy("q", TOTAL_Q, HQ, D).npy("k", TOTAL_K, 1, D);
    }

    @Test
    void theQAndKRulesNameTheDenseOrThePackedLayout() {
        files.npy("q", B, HQ, TQ);
        files.refused(dense(""), "q", "q.npy: shape (2, 2, 3) must be [B, Hq, tq, D] with every size >= 1");
        files.npy("q", B, HQ, TQ, D).npy("k", B + 1, 1, TK, D);
        files.refused(dense(""), "k", "k.npy: shape (3, 1, 4, 2) must be [B=" + B + ", Hkv, tk, D=" + D + "] with Hq = "
                + HQ + " a multiple of Hkv");
        files.npy("k", new int[] {B, 1, 0, D}, new float[0]);
        files.refused(dense(""), "k", "k.npy: shape (2, 1, 0, 2) must be [B=" + B + ", Hkv, tk, D=" + D + "]");

        files.npy("q", TOTAL_Q, HQ, D, 1).npy("k", TOTAL_K, 1, D);
        files.refused(varlen("[0, 4]", "[0, 5]"), "q", "q.npy: shape (4, 2, 2, 1) must be [total_q, Hq, D] (packed rows)"
                + " with every size >= 1");
        files.npy("q", TOTAL_Q, HQ, D).npy("k", TOTAL_K, 1, D + 1);
        files.refused(varlen("[0, 4]", "[0, 5]"), "k", "k.npy: shape (5, 1, 3) must be [total_k, Hkv, D=" + D
                + "] with Hq = " + HQ + " a multiple of Hkv");
    }

    @Test
    void maskShapesAreAcceptedExactlyAsDocumented() {
        String masked = dense(", 'mask': 'mask.npy'");
        for (int[] ok : new int[][] {{TQ, TK}, {1, 1, 1, TK}, {B, HQ, TQ, TK}, {B, 1, 1, TK}, {1, HQ, 1, TK},
                {1, 1, TQ, TK}}) {
            files.npy("mask", ok);
            assertArrayEquals(ok, read(masked).mask().shape());
        }
        for (int[] bad : new int[][] {{TQ + 1, TK}, {TQ, TK + 1}, {B + 1, 1, 1, TK}, {1, HQ + 1, 1, TK},
                {1, 1, TQ + 1, TK}, {1, 1, TQ, TK + 1}, {1, TQ, TK}}) {
            files.npy("mask", bad);
            files.refused(masked, "mask", "mask.npy: shape " + Npy.shapeText(bad) + " must be [tq=" + TQ + ", tk=" + TK
                    + "] or [B=" + B + "|1, Hq=" + HQ + "|1, tq=" + TQ + "|1, tk=" + TK + "]");
        }
        files.npy("mask", new int[] {TQ, TK}, CaseFiles.withAt(TQ * TK, 6, Float.NaN));
        files.refused(masked, "mask", "mask.npy: element 6 = NaN must be finite or -inf");
    }

    @Test
    void nonFiniteKeysAndValuesAreRefusedUnlessACanaryMarksThem() {
        int n = B * TK * D;
        files.npy("k", new int[] {B, 1, TK, D}, CaseFiles.withAt(n, n - 1, Float.NaN));
        files.refused(dense(""), "k", "k.npy: element (1, 0, 3, 1) = NaN is not finite");
        files.npy("k", B, 1, TK, D).npy("v", new int[] {B, 1, TK, D}, CaseFiles.withAt(n, 2, Float.NEGATIVE_INFINITY));
        files.refused(dense(", 'v': 'v.npy'"), "v", "v.npy: element (0, 0, 1, 0) = -Infinity is not finite");
        SinksCase marked = read(dense(", 'v': 'v.npy', 'canary': {'v': [[0, 0, 1]]}"));
        assertEquals(TK, marked.v().dim(2), "a canary may lie in a given v");
        files.refused(dense(", 'canary': {'v': [[0]]}"), "canary.v", "names no input tensor of the case");
    }

    @Test
    void cuSeqlensAreJudgedEntryByEntry() {
        packed();
        assertEquals(3, read(varlen("[0, 1, 1, 4]", "[0, 2, 2, 5]")).batch(), "an empty sequence repeats a boundary");
        files.refused(varlen("[1, 4]", "[0, 5]"), "config.cu_seqlens_q", "entry 0 = 1 must be 0");
        files.refused(varlen("[0, 2, 1, 4]", "[0, 2, 3, 5]"), "config.cu_seqlens_q",
                "entry 2 = 1 < entry 1 = 2: boundaries never decrease");
        files.refused(varlen("[0, " + Integer.MAX_VALUE + "]", "[0, 5]"), "config.cu_seqlens_q",
                "ends at " + Integer.MAX_VALUE + ", but q packs " + TOTAL_Q + " rows");
        files.refused(varlen("[0, -1]", "[0, 5]"), "config.cu_seqlens_q", "entry 1 = -1.0 must be an integer >= 0");
        int[] cuQ = {0, 1, 4};
        int[] cuK = {0, 3, 5};
        files.refused(varlen("[0, 1, 4]", "[0, 3, 5]"), "config.cu_seqlens_q", "sequence 1 has " + (cuQ[2] - cuQ[1])
                + " query rows but " + (cuK[2] - cuK[1]) + " keys: every query needs its own key");
        files.npy("q", 1, HQ, D).npy("k", 1, 1, D);
        files.refused(varlen("[1]", "[1]"), "config.cu_seqlens_q", "entry 0 = 1 must be 0 (the first sequence starts"
                + " at packed row 0)");
    }

    @Test
    void describeNamesTheLayoutAndWhetherVIsK() {
        String dense = "sinks attention, B=" + B + " Hq=" + HQ + " Hkv=1 tq=" + TQ + " tk=" + TK + " D=" + D
                + ", window 0, F32";
        assertEquals(dense + ", v = k", read(dense("")).describe());
        files.npy("v", B, 1, TK, D);
        assertEquals(dense, read(dense(", 'v': 'v.npy'")).describe());
        packed();
        assertEquals("sinks attention, varlen 2 sequences, cu_seqlens_q [0, 1, 4], cu_seqlens_k [0, 2, 5], Hq=" + HQ
                + " Hkv=1 D=" + D + ", window 0, F32, v = k", read(varlen("[0, 1, 4]", "[0, 2, 5]")).describe());
    }
}
