package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.fixtures.json.JsonTrees;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The standing scan: the evidence this build wrote holds no line that cannot fail; the scan itself has teeth. */
class EvidenceScanTest {

    private static EvidenceLine line(String json) {
        return EvidenceLine.parse(json, "t.jsonl:1");
    }

    @Test
    void flagsEachKindOfLineThatCannotFail() {
        List<EvidenceLine> bad = List.of(
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"control\",\"metric\":\"control_gap:x\",\"value\":1,"
                        + "\"cmp\":\">\",\"limit\":0,\"passed\":true,\"test\":\"T#a\",\"run\":\"1\"}"),
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"m\",\"value\":1,"
                        + "\"cmp\":\"<=\",\"limit\":\"Infinity\",\"passed\":true,\"test\":\"T#b\",\"run\":\"1\"}"),
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"m\",\"value\":5,"
                        + "\"cmp\":\"<=\",\"limit\":1,\"passed\":true,\"test\":\"T#c\",\"run\":\"1\"}"),
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"m\",\"value\":0.37,"
                        + "\"cmp\":\"<=\",\"limit\":0.37,\"passed\":true,\"test\":\"T#d\",\"run\":\"1\"}"));
        List<String> found = EvidenceScan.findings(bad);
        assertEquals(4, found.size(), found.toString());
        List<String> misfiled = EvidenceScan.findings(List.of(
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"control_gap:x\",\"value\":1,"
                        + "\"cmp\":\">\",\"limit\":0.5,\"passed\":true,\"test\":\"T#g\",\"run\":\"1\"}"),
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"control\",\"metric\":\"gap\",\"value\":1,"
                        + "\"cmp\":\">\",\"limit\":0.5,\"passed\":true,\"test\":\"T#h\",\"run\":\"1\"}")));
        assertEquals(2, misfiled.size(), misfiled.toString());
        assertTrue(misfiled.get(0).contains("T#g") && misfiled.get(0).contains("kind check with metric control_gap:x"),
                misfiled.get(0));
        assertTrue(misfiled.get(1).contains("T#h") && misfiled.get(1).contains("kind control with metric gap"),
                misfiled.get(1));
        assertTrue(found.get(0).contains("T#a") && found.get(0).contains("bar"), found.get(0));
        assertTrue(found.get(1).contains("cannot fail"), found.get(1));
        assertTrue(found.get(2).contains("contradicts"), found.get(2));
        assertTrue(found.get(3).contains("by construction"), found.get(3));
        List<EvidenceLine> good = List.of(
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"n\",\"value\":1,"
                        + "\"cmp\":\">=\",\"limit\":1,\"passed\":true,\"test\":\"T#e\",\"run\":\"1\"}"),
                line("{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"info\",\"metric\":\"i\",\"value\":0.5,"
                        + "\"test\":\"T#f\",\"run\":\"1\"}"));
        assertEquals(List.of(), EvidenceScan.findings(good));
    }

    /**
     * "Equal by construction" flags a non-integral value equal to its limit under an inequality only: never an
     * equality check (equal is its pass), an integral count at its bar, or a value short of its limit.
     */
    @Test
    void equalByConstructionIsOnlyANonIntegralValueAtItsLimitUnderAnInequality() {
        String head = "{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"m\",";
        List<String> flagged = EvidenceScan.findings(List.of(
                line(head + "\"value\":0.37,\"cmp\":\">=\",\"limit\":0.37,\"passed\":true,\"test\":\"T#ge\",\"run\":\"1\"}")));
        assertEquals(1, flagged.size(), flagged.toString());
        assertTrue(flagged.get(0).contains("T#ge") && flagged.get(0).contains("by construction"), flagged.get(0));
        assertEquals(List.of(), EvidenceScan.findings(List.of(
                line(head + "\"value\":0.37,\"cmp\":\"==\",\"limit\":0.37,\"passed\":true,\"test\":\"T#eq\",\"run\":\"1\"}"),
                line(head + "\"value\":2,\"cmp\":\"<=\",\"limit\":2,\"passed\":true,\"test\":\"T#int\",\"run\":\"1\"}"),
                line(head + "\"value\":0.36,\"cmp\":\"<=\",\"limit\":0.37,\"passed\":true,\"test\":\"T#lt\",\"run\":\"1\"}"))));
    }

    /** A lower bound (>= or >) at -Infinity cannot fail, whichever of the two it is. */
    @Test
    void aLowerBoundAtMinusInfinityCannotFail() {
        String head = "{\"claim\":\"U5\",\"backend\":\"cpu\",\"kind\":\"check\",\"metric\":\"m\",\"value\":1,";
        for (String cmp : List.of(">=", ">")) {
            List<String> found = EvidenceScan.findings(List.of(line(head + "\"cmp\":\"" + cmp
                    + "\",\"limit\":\"-Infinity\",\"passed\":true,\"test\":\"T#x\",\"run\":\"1\"}")));
            assertEquals(1, found.size(), cmp + ": " + found);
            assertTrue(found.get(0).contains("limit -Infinity with " + cmp + " cannot fail"), found.get(0));
        }
    }

    /** The evidence of the build that ran before this module's tests (the reactor's earlier modules). */
    @Test
    void thisBuildsEvidenceHoldsNoLineThatCannotFail() {
        Path root = Path.of("").toAbsolutePath().getParent();
        Assumptions.assumeTrue(root != null && Files.isDirectory(root.resolve("system-under-test")),
                "not inside the attnproof repository: " + Path.of("").toAbsolutePath());
        Ledger ledger = Ledger.build(root, List.of());
        Assumptions.assumeTrue(!ledger.lines().isEmpty(), "no evidence of the latest run under " + root
                + " (run the reactor build: mvn -B verify)");
        List<String> found = EvidenceScan.findings(ledger.lines());
        assertEquals(List.of(), found, found.size() + " lines that cannot fail");
        assertEquals(List.of(), ledger.problems(), "unreadable evidence");
    }
}
