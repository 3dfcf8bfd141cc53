package io.attnproof.ledger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The R8 dead-prefix series ({@code R8-dead-prefix.csv}): per step, the mean dead prefix measured on the system with
 * per-row lengths ({@code perRow}), and the same test's series under the curated mutant that restores the shared
 * cache_len ({@code shared}, from the mutant's evidence folder; NaN where that run is absent). The test writes
 * {@code step,mean_dead_prefix}; a file with both columns is read as is.
 */
public record R8Series(Path file, int[] steps, double[] perRow, double[] shared) {
    public static final String HEADER = "step,per_row_mean_dead_prefix,shared_cache_len_mean_dead_prefix";
    public static final String RUN_HEADER = "step,mean_dead_prefix";

    /**
     * Reads {@code file}.
     *
     * @throws IllegalArgumentException naming the file and line for a malformed row or header
     */
    public static R8Series read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
        String header = lines.isEmpty() ? "" : lines.getFirst().trim();
        if (!header.equals(HEADER) && !header.equals(RUN_HEADER)) {
            throw new IllegalArgumentException(file + ":1: header must be " + RUN_HEADER + " or " + HEADER);
        }
        int columns = header.equals(HEADER) ? 3 : 2;
        int n = lines.size() - 1;
        int[] steps = new int[n];
        double[] perRow = new double[n];
        double[] shared = new double[n];
        for (int i = 0; i < n; i++) {
            String[] cells = lines.get(i + 1).split(",");
            try {
                if (cells.length != columns) {
                    throw new NumberFormatException(columns + " cells expected, found " + cells.length);
                }
                steps[i] = Integer.parseInt(cells[0].trim());
                perRow[i] = Double.parseDouble(cells[1].trim());
                shared[i] = columns == 3 ? Double.parseDouble(cells[2].trim()) : Double.NaN;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + ":" + (i + 2) + ": " + e.getMessage(), e);
            }
        }
        return new R8Series(file, steps, perRow, shared);
    }

    /** This series with {@code mutantRun}'s measured series (same steps) as the shared-cache_len one. */
    public R8Series withShared(R8Series mutantRun) {
        double[] s = new double[steps.length];
        java.util.Arrays.fill(s, Double.NaN);
        for (int i = 0; i < steps.length; i++) {
            for (int j = 0; j < mutantRun.steps.length; j++) {
                if (mutantRun.steps[j] == steps[i]) {
                    s[i] = mutantRun.perRow[j];
                    break;
                }
            }
        }
        return new R8Series(file, steps, perRow, s);
    }

    /** Least-squares slope of log(y) on log(step) over steps >= {@code fromStep} with y > 0; NaN if too few. */
    public static double slope(int[] steps, double[] y, int fromStep) {
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        int n = 0;
        for (int i = 0; i < steps.length; i++) {
            if (steps[i] >= fromStep && steps[i] > 0 && y[i] > 0) {
                double x = Math.log(steps[i]);
                double ly = Math.log(y[i]);
                sx += x;
                sy += ly;
                sxx += x * x;
                sxy += x * ly;
                n++;
            }
        }
        return n < 2 ? Double.NaN : (n * sxy - sx * sy) / (n * sxx - sx * sx);
    }
}
