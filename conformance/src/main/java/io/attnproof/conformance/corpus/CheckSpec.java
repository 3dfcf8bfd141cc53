package io.attnproof.conformance.corpus;

/**
 * One check of the manifest. {@code type}: {@code oracle} (the output of {@code a.case} against the fp64 oracle of
 * {@code against}, itself when null, under the tolerance rule, both tiers for F16/BF16), {@code same-bits} (the
 * selected slices of two outputs have the same bits), {@code same-within-rule} (they differ by at most the tolerance
 * limit of {@code b}'s case), {@code degenerate} (an oracle check where, in addition, every element the oracle gives
 * as exactly 0 must be exactly 0). {@code expect}: {@code pass}, or {@code fail} for a negative control, which must
 * miss by more than the limit.
 */
public record CheckSpec(String id, String claim, String type, String expect, Sel a, Sel b, String against,
        String note) {

    /** A slice of one case's output: batch rows {@code [b0, b1)} and query rows {@code [r0, r1)}; -1: all. */
    public record Sel(String caseId, int b0, int b1, int r0, int r1) {
        static Sel all(String caseId) {
            return new Sel(caseId, -1, -1, -1, -1);
        }

        static Sel rows(String caseId, int b0, int b1, int r0, int r1) {
            return new Sel(caseId, b0, b1, r0, r1);
        }

        public boolean whole() {
            return b0 < 0 && r0 < 0;
        }
    }

    public boolean control() {
        return expect.equals("fail");
    }
}
