package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The R8 series: both CSV forms, errors naming file and line, the mutant run's series matched by step, and the
 * log-log slope over exactly the steps the rule admits (step >= from, step > 0, y > 0; NaN below two points).
 */
class R8SeriesTest {
    @TempDir
    Path dir;

    @Test
    void readsBothFormsSkippingBlankLines() throws IOException {
        Path run = Files.writeString(dir.resolve("run.csv"), "step,mean_dead_prefix\n1,2.0\n\n4,8.0\n");
        R8Series r = R8Series.read(run);
        assertArrayEquals(new int[] {1, 4}, r.steps());
        assertArrayEquals(new double[] {2.0, 8.0}, r.perRow());
        assertTrue(Double.isNaN(r.shared()[0]) && Double.isNaN(r.shared()[1]), "one column: no shared series");
        Path both = Files.writeString(dir.resolve("both.csv"), R8Series.HEADER + "\n2, 1.5, 3.0\n");
        R8Series b = R8Series.read(both);
        assertArrayEquals(new double[] {3.0}, b.shared());
    }

    @Test
    void malformedRowsAndHeadersNameFileAndLine() throws IOException {
        Path badRow = Files.writeString(dir.resolve("row.csv"), "step,mean_dead_prefix\n1,2.0\n2,x\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> R8Series.read(badRow));
        assertTrue(e.getMessage().startsWith(badRow + ":3: "), e.getMessage());
        Path cells = Files.writeString(dir.resolve("cells.csv"), "step,mean_dead_prefix\n1,2.0,3.0\n");
        e = assertThrows(IllegalArgumentException.class, () -> R8Series.read(cells));
        assertEquals(cells + ":2: 2 cells expected, found 3", e.getMessage());
        Path header = Files.writeString(dir.resolve("header.csv"), "step,value\n1,2.0\n");
        e = assertThrows(IllegalArgumentException.class, () -> R8Series.read(header));
        assertEquals(header + ":1: header must be " + R8Series.RUN_HEADER + " or " + R8Series.HEADER, e.getMessage());
        Path empty = Files.writeString(dir.resolve("empty.csv"), "");
        assertThrows(IllegalArgumentException.class, () -> R8Series.read(empty));
    }

    @Test
    void theMutantRunIsMatchedByStep() {
        R8Series own = new R8Series(dir, new int[] {1, 2, 4}, new double[] {1, 2, 3}, new double[] {0, 0, 0});
        R8Series mutant = new R8Series(dir, new int[] {4, 1}, new double[] {40, 10}, new double[] {0, 0});
        R8Series merged = own.withShared(mutant);
        assertArrayEquals(new int[] {1, 2, 4}, merged.steps());
        assertArrayEquals(new double[] {1, 2, 3}, merged.perRow());
        assertEquals(10.0, merged.shared()[0]);
        assertTrue(Double.isNaN(merged.shared()[1]), "step 2 is absent from the mutant run");
        assertEquals(40.0, merged.shared()[2]);
    }

    @Test
    void theSlopeCountsOnlyAdmittedPoints() {
        // y = step^0.5 on steps 4 and 16: slope 0.5 from two points.
        assertEquals(0.5, R8Series.slope(new int[] {4, 16}, new double[] {2, 4}, 4), 1e-12);
        // From step 4: the point at step 1 (off the line) is left out, the one at step 4 is kept.
        assertEquals(0.5, R8Series.slope(new int[] {1, 4, 16}, new double[] {100, 2, 4}, 4), 1e-12);
        // Step 0 and y 0 are left out (their logs are infinite).
        assertEquals(0.5, R8Series.slope(new int[] {0, 4, 16}, new double[] {5, 2, 4}, 0), 1e-12);
        assertEquals(0.5, R8Series.slope(new int[] {2, 4, 16}, new double[] {0, 2, 4}, 0), 1e-12);
        // Fewer than two points: NaN (negative control: one admitted point).
        assertTrue(Double.isNaN(R8Series.slope(new int[] {1, 4}, new double[] {1, 2}, 2)));
    }
}
