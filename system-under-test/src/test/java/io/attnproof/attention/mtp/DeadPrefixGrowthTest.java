package io.attnproof.attention.mtp;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Streams;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * R8 on the system's own step bookkeeping: for {@value #STEPS} steps per row, each row's commit under PER_SEQUENCE
 * ({@link KvAdvance#committed}) and the length its cache records ({@link StepAccounting#nextLengths}, use 4) come from
 * the system; acceptances of the row's one draft per step come from a seeded source. After every step a row's dead prefix is read off that recorded state: the front-aligned width
 * {@code max_j recorded_j} minus the tokens the row really holds. With per-row lengths it grows like sqrt(N); the
 * shared-cache_len bug (curated mutant 31) makes it linear, and this test's own growth checks catch it. The series is
 * written for the ledger's plot (the mutant's run writes its own, read from the mutant's evidence folder).
 */
@Claim("R8")
class DeadPrefixGrowthTest {
    static final int STEPS = 10_000;
    static final int ROWS = 4;
    static final int RUNS = 16;
    static final double ACCEPT = 0.7;
    static final long SEED = 8008;
    /** sqrt(N) growth bound: a random walk of per-step variance p(1-p) spreads ~sqrt(p(1-p) N); 8 of them is O(sqrt N). */
    static final double SQRT_BOUND_SPREADS = 8.0;

    @Test
    void deadPrefixGrowsLikeSqrtNOnTheSystemsBookkeeping(Evidence ev) throws IOException {
        ev.seed(SEED);
        double[] rates = {ACCEPT, ACCEPT, ACCEPT, ACCEPT};
        Series s = run(rates, SEED);
        writeSeries(s.meanDead);
        double exponent = exponent(s.meanDead);
        double bound = SQRT_BOUND_SPREADS * Math.sqrt(ACCEPT * (1 - ACCEPT) * STEPS);
        // Degeneracy, measured: rows commit different counts often, and a dead prefix does build up.
        ev.degeneracy("steps_where_rows_commit_differently_share", (double) s.raggedSteps / (RUNS * STEPS),
                Comparison.GT, 0.5, "rows must diverge for a dead prefix to exist");
        ev.degeneracy("mean_dead_prefix_at_n", s.meanDead[STEPS], Comparison.GT, 1.0, "a dead prefix must build up");
        ev.check("mean_dead_prefix_at_n_vs_sqrt_bound", s.meanDead[STEPS], bound, null);
        ev.check("dead_prefix_growth_exponent", exponent, 0.75, null);
        // Negative control: rows that never realign (one always accepts, one never) drift apart linearly on the same
        // bookkeeping; the exponent must then exceed the sqrt bound's 0.75.
        Series divergent = run(new double[] {1.0, 0.0, ACCEPT, ACCEPT}, SEED + 1);
        ev.controlGap("growth_exponent_with_rows_that_never_realign", exponent(divergent.meanDead), 0.75);
        System.out.printf("R8: exponent %.3f, mean dead prefix at N=%d: %.1f (bound %.1f)%n", exponent, STEPS,
                s.meanDead[STEPS], bound);
    }

    /** Mean dead prefix per step over {@link #RUNS} runs of {@link #ROWS} rows accepting drafts at {@code rates}. */
    static Series run(double[] rates, long seed) {
        double[] meanDead = new double[STEPS + 1];
        long raggedSteps = 0;
        for (int run = 0; run < RUNS; run++) {
            SplittableRandom rng = Streams.row(seed, run);
            int[] recorded = {32, 32, 32, 32};   // aligned start: the dead prefix measured is the steps' own
            int[] live = recorded.clone();        // tokens each row really holds (ground truth)
            for (int step = 1; step <= STEPS; step++) {
                int[] uPlusA = new int[ROWS];
                for (int i = 0; i < ROWS; i++) {
                    uPlusA[i] = 1 + (rng.nextDouble() < rates[i] ? 1 : 0); // one uncached token, its draft accepted or not
                }
                int[] committed = new int[ROWS];
                for (int i = 0; i < ROWS; i++) {
                    committed[i] = KvAdvance.PER_SEQUENCE.committed(uPlusA, i);
                    live[i] += committed[i];
                }
                raggedSteps += distinct(committed) > 1 ? 1 : 0;
                recorded = StepAccounting.nextLengths(recorded, committed);
                int width = max(recorded);
                double dead = 0;
                for (int i = 0; i < ROWS; i++) {
                    dead += width - live[i];
                }
                meanDead[step] += dead / ROWS / RUNS;
            }
        }
        return new Series(meanDead, raggedSteps);
    }

    record Series(double[] meanDead, long raggedSteps) {
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

    private static void writeSeries(double[] meanDead) throws IOException {
        Path dir = Path.of(System.getProperty("attnproof.evidence.dir", "target/evidence"));
        Files.createDirectories(dir);
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(dir.resolve("R8-dead-prefix.csv")))) {
            out.println("step,mean_dead_prefix");
            for (int step = 1; step <= STEPS; step = step < 100 ? step + 1 : step + 50) {
                out.printf(java.util.Locale.ROOT, "%d,%.4f%n", step, meanDead[step]);
            }
        }
    }

    private static int distinct(int[] a) {
        return (int) java.util.Arrays.stream(a).distinct().count();
    }

    private static int max(int[] a) {
        int m = Integer.MIN_VALUE;
        for (int v : a) {
            m = Math.max(m, v);
        }
        return m;
    }
}
