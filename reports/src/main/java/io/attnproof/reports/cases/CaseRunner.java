package io.attnproof.reports.cases;

import io.attnproof.attention.dsv4.Dsv4Attention;
import io.attnproof.attention.tensor.Tensor;

/** Runs the system under test ({@code Dsv4Attention.attention}, the path it picks) on a case. */
public final class CaseRunner {
    private CaseRunner() {
    }

    /**
     * The system's output {@code [B, H, tq, D]} in the case's dtype.
     *
     * @throws CaseException naming the case file and "config" when the system refuses the case
     */
    public static Tensor run(AttnCase c) {
        try {
            return Dsv4Attention.attention(c.q(), c.k(), c.v(), c.compressedKv(), c.mask(), c.sinks(), c.config());
        } catch (IllegalArgumentException e) {
            throw new CaseException(c.file(), "config", "the system under test refuses the case: " + e.getMessage());
        }
    }
}
