package io.attnproof.attention.mtp;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * R8: over N speculative steps the dead prefix of a front-aligned cohort grows like sqrt(N) when lengths are the
 * rows' own ({@link StepAccounting}); recording {@code cache_len + committed_i} (the shared-width bug) makes it
 * grow linearly. Measured by simulating the length arithmetic; the series is written for the ledger's plot.
 */
@Claim("R8")
class DeadPrefixGrowthTest {
    static final int STEPS = 10_000;
    static final int ROWS = 4;
    static final int RUNS = 32;
    static final double ACCEPT = 0.7;
    static final long SEED = 8008;

    @Test
    void deadPrefixGrowsLikeSqrtWithPerRowLengthsAndLinearlyWithTheSharedWidth(Evidence ev) throws IOException {
        ev.seed(SEED);
        double[] perRow = new double[STEPS + 1];
        double[] shared = new double[STEPS + 1];
        for (int run = 0; run < RUNS; run++) {
            SplittableRandom rng = Streams.row(SEED, run);
            int[] live = {32, 32, 32, 32}; // aligned start: the dead prefix measured is the steps' own
            int[] honest = live.clone();
            int[] recorded = live.clone(); // the upstream record: includes the dead prefix
            for (int step = 1; step <= STEPS; step++) {
                int[] committed = new int[ROWS];
                for (int i = 0; i < ROWS; i++) {
                    committed[i] = 1 + (rng.nextDouble() < ACCEPT ? 1 : 0); // u_i + a_i under PER_SEQUENCE
                }
                honest = StepAccounting.nextLengths(honest, committed);
                int width = max(recorded);
                for (int i = 0; i < ROWS; i++) {
                    recorded[i] = width + committed[i]; // set_len(cache_len + committed_i)
                    live[i] += committed[i];
                }
                perRow[step] += mean(StepAccounting.leads(honest)) / RUNS;
                int nextWidth = max(recorded);
                double dead = 0;
                for (int i = 0; i < ROWS; i++) {
                    dead += nextWidth - live[i];
                }
                shared[step] += dead / ROWS / RUNS;
            }
        }
        double perRowExp = exponent(perRow);
        double sharedExp = exponent(shared);
        ev.degeneracy("rows_commit_different_counts", ACCEPT > 0 && ACCEPT < 1, "acceptance " + ACCEPT);
        ev.degeneracy("per_row_prefix_nonzero", perRow[STEPS] > 1, "mean lead at N = " + perRow[STEPS]);
        ev.check("dead_prefix_growth_exponent", perRowExp, 0.75, null);
        ev.info("dead_prefix_growth_exponent:shared_cache_len", sharedExp);
        ev.info("mean_dead_prefix_at_n:per_row", perRow[STEPS]);
        ev.info("mean_dead_prefix_at_n:shared_cache_len", shared[STEPS]);
        writeSeries(perRow, shared);
        System.out.printf("R8: exponent per-row %.3f, shared %.3f; mean dead prefix at N=%d: %.1f vs %.1f%n",
                perRowExp, sharedExp, STEPS, perRow[STEPS], shared[STEPS]);
    }

    /** Least-squares slope of log(dead prefix) on log(step) over log-spaced steps from 100 to N. */
    static double exponent(double[] series) {
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        int n = 0;
        for (double s = 100; s <= STEPS; s *= 1.1) {
            int step = (int) s;
            double x = Math.log(step);
            double y = Math.log(series[step]);
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
            n++;
        }
        return (n * sxy - sx * sy) / (n * sxx - sx * sx);
    }

    private static void writeSeries(double[] perRow, double[] shared) throws IOException {
        Path dir = Path.of(System.getProperty("attnproof.evidence.dir", "target/evidence"));
        Files.createDirectories(dir);
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(dir.resolve("R8-dead-prefix.csv")))) {
            out.println("step,per_row_mean_dead_prefix,shared_cache_len_mean_dead_prefix");
            for (int step = 1; step <= STEPS; step = step < 100 ? step + 1 : step + 50) {
                out.printf(java.util.Locale.ROOT, "%d,%.4f,%.4f%n", step, perRow[step], shared[step]);
            }
        }
    }

    private static int max(int[] a) {
        int m = Integer.MIN_VALUE;
        for (int v : a) {
            m = Math.max(m, v);
        }
        return m;
    }

    private static double mean(int[] a) {
        double s = 0;
        for (int v : a) {
            s += v;
        }
        return s / a.length;
    }
}
