package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import io.attnproof.attention.dsv4.UnionGeometry;
import io.attnproof.attention.mask.RaggedUnionMask;
import io.attnproof.attention.mask.UnionMask;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ledger's pictures, rendered as SVG text by the JDK: union mask heatmaps built by the system under test
 * ({@link UnionMask#materialize}, {@link RaggedUnionMask#materialize}), the R8 dead-prefix growth plot and error
 * histograms per backend.
 */
public final class Pictures {
    /** One picture: its file name under {@code pictures/}, a title and a caption. */
    public record Picture(String file, String title, String caption, String svg) {
    }

    static final String RAW = "#2b6cb0";
    static final String COMPRESSED = "#2f855a";
    static final String MASKED = "#f7fafc";
    static final String OUTSIDE = "#cbd5e0";
    static final String DEAD = "#4a5568";
    static final String DEAD_IN_WINDOW = "#c53030";
    static final String BEYOND_OWN_THRESHOLD = "#dd6b20";
    static final String GRID = "#e2e8f0";

    private Pictures() {
    }

    /** The uniform mask pictures: a prefill (t_k 40, W 16, R 4) and a chunk of 8 queries over the same cache. */
    public static List<Picture> uniformMasks() {
        List<Picture> out = new ArrayList<>();
        out.add(uniformMask("mask-uniform-prefill.svg", 40, 40, 16, 4));
        out.add(uniformMask("mask-uniform-chunk.svg", 8, 40, 16, 4));
        return out;
    }

    /** The uniform union mask of {@code tq} queries over {@code tk} keys (rawPrefix 0), window W, ratio R. */
    public static Picture uniformMask(String file, int tq, int tk, int window, int ratio) {
        int tc = ratio == 0 ? 0 : tk / ratio;
        UnionGeometry g = UnionGeometry.of(tq, tk, tc, window, 0);
        UnionMask mask = new UnionMask(g.q0(), tq, g.base(), g.keep(), window, tc, ratio);
        Tensor m = mask.materialize(DType.F32, Device.CPU);
        int n = mask.nKeys();
        int cols = (int) g.tkFull() + tc;
        String[][] cells = new String[tq][cols];
        for (int r = 0; r < tq; r++) {
            for (int j = 0; j < g.tkFull(); j++) {
                if (j < g.base()) {
                    cells[r][j] = OUTSIDE;
                } else {
                    cells[r][j] = m.flat(r * n + (int) (j - g.base())) == 0f ? RAW : MASKED;
                }
            }
            for (int b = 0; b < tc; b++) {
                cells[r][(int) g.tkFull() + b] = m.flat(r * n + g.keep() + b) == 0f ? COMPRESSED : MASKED;
            }
        }
        String title = String.format(Locale.ROOT, "Uniform union mask: t_q %d, t_k %d, W %d, R %d (q0 %d, keep %d,"
                + " base %d, t_c %d)", tq, tk, window, ratio, g.q0(), g.keep(), g.base(), tc);
        Svg svg = heatmapFrame(title, List.of(new Panel("", cells, (int) g.tkFull(), g.q0())), legendUniform(g.base() > 0));
        String caption = "Rows are queries (absolute position q0 + r), columns the cache: raw keys by absolute index,"
                + " then the compressed blocks. Blue: raw key admitted (p − W < j ≤ p); green: compressed block"
                + " admitted (b < ⌊(p+1)/R⌋)" + (g.base() > 0 ? "; grey: before base, narrowed away (invisible to"
                + " every row)" : "") + ". Built by UnionMask.materialize().";
        return new Picture(file, title, caption, svg.toString());
    }

    /**
     * The ragged mask of a left-aligned cohort (live lengths 40, 30, 20, 12; t_q 6; W 16; R 4), one panel per row:
     * its dead prefix, its window, and its own compressed threshold against the batch-wide one.
     */
    public static Picture raggedMask() {
        return raggedMask("mask-ragged.svg", new int[] {40, 30, 20, 12}, 6, 16, 4);
    }

    /** The ragged mask of rows with live lengths {@code lengths} (the longest at the end column). */
    public static Picture raggedMask(String file, int[] lengths, int tq, int window, int ratio) {
        int width = Arrays.stream(lengths).max().orElseThrow();
        int tc = ratio == 0 ? 0 : width / ratio;
        UnionGeometry g = UnionGeometry.of(tq, width, tc, window, 0);
        UnionMask uniform = new UnionMask(g.q0(), tq, g.base(), g.keep(), window, tc, ratio);
        long[] rowQ0 = Arrays.stream(lengths).mapToLong(l -> l - tq).toArray();
        RaggedUnionMask ragged = new RaggedUnionMask(uniform, rowQ0);
        Tensor m = ragged.materialize(DType.F32, Device.CPU);
        int n = uniform.nKeys();
        int cols = width + tc;
        List<Panel> panels = new ArrayList<>();
        for (int b = 0; b < lengths.length; b++) {
            long lead = ragged.lead(b);
            String[][] cells = new String[tq][cols];
            for (int r = 0; r < tq; r++) {
                int row = (b * tq + r) * n;
                for (int j = 0; j < width; j++) {
                    if (j < g.base()) {
                        cells[r][j] = j < lead ? DEAD : OUTSIDE;
                        continue;
                    }
                    int c = (int) (j - g.base());
                    if (m.flat(row + c) == 0f) {
                        cells[r][j] = RAW;
                    } else if (j < lead) {
                        cells[r][j] = uniform.admits(r, c) ? DEAD_IN_WINDOW : DEAD;
                    } else {
                        cells[r][j] = MASKED;
                    }
                }
                for (int blk = 0; blk < tc; blk++) {
                    int c = g.keep() + blk;
                    cells[r][width + blk] = m.flat(row + c) == 0f ? COMPRESSED
                            : uniform.admits(r, c) ? BEYOND_OWN_THRESHOLD : MASKED;
                }
            }
            long own0 = Math.min(tc, (rowQ0[b] + 1) / ratio);
            long ownLast = Math.min(tc, (rowQ0[b] + tq) / ratio);
            long batch0 = Math.min(tc, (g.q0() + 1) / ratio);
            long batchLast = Math.min(tc, (g.q0() + tq) / ratio);
            String label = String.format(Locale.ROOT, "row %d: live %d, rowQ0 %d, dead prefix %d; admits %d..%d of %d"
                    + " blocks (batch-wide rule: %d..%d)", b, lengths[b], rowQ0[b], lead, own0, ownLast, tc, batch0,
                    batchLast);
            panels.add(new Panel(label, cells, width, rowQ0[b]));
        }
        String title = String.format(Locale.ROOT, "Ragged union mask per row: live lengths %s, t_q %d, W %d, R %d"
                + " (batch q0 %d, base %d, t_c %d)", Arrays.toString(lengths), tq, window, ratio, g.q0(), g.base(), tc);
        Svg svg = heatmapFrame(title, panels, legendRagged());
        String caption = "One panel per batch row of a left-aligned cohort; columns are cache columns (the row's last"
                + " token at the end column), then the compressed blocks. Dark grey: the row's dead prefix (cache index"
                + " < lead = q0 − rowQ0); red: dead-prefix keys inside the window that the uniform mask would admit and"
                + " the ragged correction kills; blue: raw window admitted; green: compressed blocks below the row's own"
                + " threshold ⌊(rowQ0 + r + 1)/R⌋; orange: blocks the batch-wide threshold would admit but the row never"
                + " produced. Built by RaggedUnionMask.materialize().";
        return new Picture(file, title, caption, svg.toString());
    }

    /** One heatmap panel: a label, cell colours [rows][cols], where the compressed columns start, row 0's position. */
    private record Panel(String label, String[][] cells, int rawColumns, long firstPosition) {
    }

    private static Svg heatmapFrame(String title, List<Panel> panels, String[][] legend) {
        int cell = 10;
        int left = 56;
        int top = 34;
        int cols = panels.getFirst().cells()[0].length;
        int panelGap = 34;
        int plotWidth = cols * cell + 8;
        int height = top;
        for (Panel p : panels) {
            height += (p.label().isEmpty() ? 0 : 16) + p.cells().length * cell + panelGap;
        }
        int legendRows = (legend.length + 2) / 3;
        height += legendRows * 18 + 10;
        int width = Math.max(Math.max(left + plotWidth + 20, 760), 16 + (int) Math.ceil(title.length() * 7.8));
        Svg svg = new Svg(width, height, title);
        svg.text(8, 18, title, null, "font-size=\"13\" font-weight=\"bold\"");
        int y = top;
        for (Panel p : panels) {
            if (!p.label().isEmpty()) {
                svg.text(left, y + 11, p.label(), null, null);
                y += 16;
            }
            String[][] cells = p.cells();
            for (int r = 0; r < cells.length; r++) {
                // Merge runs of equal colour per row to keep the file small.
                int c = 0;
                while (c < cols) {
                    int end = c;
                    while (end + 1 < cols && cells[r][end + 1].equals(cells[r][c])
                            && !(end + 1 == p.rawColumns())) {
                        end++;
                    }
                    int gap = c >= p.rawColumns() ? 8 : 0;
                    svg.rect(left + c * cell + gap, y + r * cell, (end - c + 1) * cell, cell, cells[r][c], null, null);
                    c = end + 1;
                }
            }
            // Cell grid: raw columns, then the compressed columns after an 8-unit gap.
            for (int c = 0; c <= p.rawColumns(); c++) {
                svg.line(left + c * cell, y, left + c * cell, y + cells.length * cell, GRID, 0.5, null);
            }
            for (int c = p.rawColumns(); c <= cols && p.rawColumns() < cols; c++) {
                svg.line(left + c * cell + 8, y, left + c * cell + 8, y + cells.length * cell, GRID, 0.5, null);
            }
            for (int r = 0; r <= cells.length; r++) {
                svg.line(left, y + r * cell, left + p.rawColumns() * cell, y + r * cell, GRID, 0.5, null);
                if (p.rawColumns() < cols) {
                    svg.line(left + p.rawColumns() * cell + 8, y + r * cell, left + cols * cell + 8, y + r * cell, GRID,
                            0.5, null);
                }
            }
            // Row labels: the absolute position of every 4th query row (and the last).
            for (int r = 0; r < cells.length; r++) {
                if (r % 4 == 0 || r == cells.length - 1) {
                    svg.text(left - 4, y + r * cell + 8.5, "p " + (p.firstPosition() + r), "end", "font-size=\"8\"");
                }
            }
            // Column ticks: raw index every 8 columns, compressed block index every 2.
            int below = y + cells.length * cell + 10;
            for (int c = 0; c < p.rawColumns(); c += 8) {
                svg.text(left + c * cell + cell / 2.0, below, Integer.toString(c), "middle", "font-size=\"8\"");
            }
            for (int b = 0; b < cols - p.rawColumns(); b += 2) {
                svg.text(left + (p.rawColumns() + b) * cell + 8 + cell / 2.0, below, "b" + b, "middle",
                        "font-size=\"8\" fill=\"#2f855a\"");
            }
            y += cells.length * cell + panelGap;
        }
        for (int i = 0; i < legend.length; i++) {
            int lx = left + (i % 3) * 230;
            int ly = y - 14 + (i / 3) * 18;
            svg.rect(lx, ly, 12, 12, legend[i][0], "#718096", null);
            svg.text(lx + 17, ly + 10, legend[i][1], null, null);
        }
        return svg;
    }

    private static String[][] legendUniform(boolean narrowed) {
        List<String[]> l = new ArrayList<>();
        l.add(new String[] {RAW, "raw key admitted (window)"});
        l.add(new String[] {COMPRESSED, "compressed block admitted"});
        l.add(new String[] {MASKED, "masked (-inf)"});
        if (narrowed) {
            l.add(new String[] {OUTSIDE, "before base: narrowed away"});
        }
        return l.toArray(new String[0][]);
    }

    private static String[][] legendRagged() {
        return new String[][] {
            {RAW, "raw key admitted (window)"},
            {COMPRESSED, "block below the row's own threshold"},
            {MASKED, "masked (-inf)"},
            {DEAD, "dead prefix (cache index < lead)"},
            {DEAD_IN_WINDOW, "dead prefix inside the window: killed"},
            {BEYOND_OWN_THRESHOLD, "batch-wide threshold only: masked"},
            {OUTSIDE, "before base: narrowed away"},
        };
    }

    /** The R8 plot: mean dead prefix against step, log-log, both series, with their fitted slopes from step 100. */
    public static Picture r8Plot(R8Series s) {
        int width = 720;
        int height = 440;
        int left = 70;
        int right = 20;
        int top = 40;
        int bottom = 60;
        double xMin = Double.POSITIVE_INFINITY;
        double xMax = 0;
        double yMin = Double.POSITIVE_INFINITY;
        double yMax = 0;
        for (int i = 0; i < s.steps().length; i++) {
            if (s.steps()[i] <= 0) {
                continue;
            }
            xMin = Math.min(xMin, s.steps()[i]);
            xMax = Math.max(xMax, s.steps()[i]);
            for (double y : new double[] {s.perRow()[i], s.shared()[i]}) {
                if (y > 0) {
                    yMin = Math.min(yMin, y);
                    yMax = Math.max(yMax, y);
                }
            }
        }
        String title = "R8: mean dead prefix vs speculative step (log-log)";
        Svg svg = new Svg(width, height, title);
        svg.text(8, 18, title, null, "font-size=\"13\" font-weight=\"bold\"");
        if (!(xMax > 0) || !(yMax > 0)) {
            svg.text(width / 2.0, height / 2.0, "no positive data in " + s.file().getFileName(), "middle", null);
            return new Picture("r8-dead-prefix.svg", title, "The R8 series holds no positive values.", svg.toString());
        }
        double lx0 = Math.floor(Math.log10(xMin));
        double lx1 = Math.max(Math.ceil(Math.log10(xMax)), lx0 + 1);
        double ly0 = Math.floor(Math.log10(yMin));
        double ly1 = Math.max(Math.ceil(Math.log10(yMax)), ly0 + 1);
        int pw = width - left - right;
        int ph = height - top - bottom;
        java.util.function.DoubleUnaryOperator px = x -> left + (Math.log10(x) - lx0) / (lx1 - lx0) * pw;
        java.util.function.DoubleUnaryOperator py = y -> top + ph - (Math.log10(y) - ly0) / (ly1 - ly0) * ph;
        svg.rect(left, top, pw, ph, "#ffffff", "#a0aec0", null);
        for (double e = lx0; e <= lx1; e++) {
            double x = px.applyAsDouble(Math.pow(10, e));
            svg.line(x, top, x, top + ph, GRID, 1, null);
            svg.text(x, top + ph + 16, "10^" + (int) e, "middle", null);
        }
        for (double e = ly0; e <= ly1; e++) {
            double y = py.applyAsDouble(Math.pow(10, e));
            svg.line(left, y, left + pw, y, GRID, 1, null);
            svg.text(left - 6, y + 4, "10^" + (int) e, "end", null);
        }
        svg.text(left + pw / 2.0, height - 18, "step N", "middle", null);
        svg.text(18, top + ph / 2.0, "mean dead prefix (tokens)", "middle",
                "transform=\"rotate(-90 18 " + (top + ph / 2.0) + ")\"");
        double perRowSlope = R8Series.slope(s.steps(), s.perRow(), 100);
        double sharedSlope = R8Series.slope(s.steps(), s.shared(), 100);
        series(svg, s.steps(), s.shared(), px, py, "#c53030");
        series(svg, s.steps(), s.perRow(), px, py, "#2b6cb0");
        // Guides through the last per-row point: slope 1/2 (sqrt N) and slope 1 (linear).
        int last = s.steps().length - 1;
        double nLast = s.steps()[last];
        double yLast = s.perRow()[last];
        if (yLast > 0) {
            guide(svg, px, py, nLast, yLast, 0.5, Math.pow(10, lx0), Math.pow(10, ly0), "#718096");
        }
        if (s.shared()[last] > 0) {
            guide(svg, px, py, nLast, s.shared()[last], 1.0, Math.pow(10, lx0), Math.pow(10, ly0), "#a0aec0");
        }
        int ly = top + 14;
        svg.line(left + 12, ly - 4, left + 36, ly - 4, "#c53030", 2, null);
        svg.text(left + 42, ly, String.format(Locale.ROOT, "shared cache_len (curated mutant 31, measured): slope %.2f", sharedSlope), null,
                null);
        svg.line(left + 12, ly + 14, left + 36, ly + 14, "#2b6cb0", 2, null);
        svg.text(left + 42, ly + 18, String.format(Locale.ROOT, "per-row lengths: slope %.2f", perRowSlope), null, null);
        svg.line(left + 12, ly + 32, left + 36, ly + 32, "#718096", 1, "4 3");
        svg.text(left + 42, ly + 36, "guides: slope 1/2 (√N) and 1 (linear)", null, null);
        String caption = String.format(Locale.ROOT, "Mean dead prefix over %d steps (%s). Per-row lengths grow like"
                + " N^%.2f, the shared-cache_len bug like N^%.2f (least-squares slopes from step 100); the claim is"
                + " O(√N) against linear.", (int) xMax, s.file().getFileName(), perRowSlope, sharedSlope);
        return new Picture("r8-dead-prefix.svg", title, caption, svg.toString());
    }

    private static void series(Svg svg, int[] steps, double[] y, java.util.function.DoubleUnaryOperator px,
            java.util.function.DoubleUnaryOperator py, String colour) {
        List<double[]> pts = new ArrayList<>();
        for (int i = 0; i < steps.length; i++) {
            if (steps[i] > 0 && y[i] > 0) {
                pts.add(new double[] {px.applyAsDouble(steps[i]), py.applyAsDouble(y[i])});
            }
        }
        double[] xs = pts.stream().mapToDouble(p -> p[0]).toArray();
        double[] ys = pts.stream().mapToDouble(p -> p[1]).toArray();
        svg.polyline(xs, ys, colour, 2, null);
    }

    private static void guide(Svg svg, java.util.function.DoubleUnaryOperator px,
            java.util.function.DoubleUnaryOperator py, double n, double y, double slope, double xLo, double yLo,
            String colour) {
        double x0 = Math.max(xLo, n * Math.pow(yLo / y, 1 / slope));
        double y0 = y * Math.pow(x0 / n, slope);
        svg.line(px.applyAsDouble(x0), py.applyAsDouble(y0), px.applyAsDouble(n), py.applyAsDouble(y), colour, 1, "4 3");
    }

    /** Whether a line counts as an error measurement for the histograms: a measured {@code max_abs*} line with a positive limit. */
    public static boolean isErrorLine(EvidenceLine l) {
        return !l.isSkip() && l.metric().startsWith("max_abs") && l.limit() > 0 && Double.isFinite(l.limit());
    }

    /** One histogram per backend of {@code value / limit} over its error lines ({@link #isErrorLine}). */
    public static List<Picture> errorHistograms(List<EvidenceLine> lines) {
        Map<String, List<Double>> byBackend = new TreeMap<>();
        for (EvidenceLine l : lines) {
            if (isErrorLine(l)) {
                byBackend.computeIfAbsent(l.backend(), k -> new ArrayList<>()).add(l.value() / l.limit());
            }
        }
        List<Picture> out = new ArrayList<>();
        for (var e : byBackend.entrySet()) {
            out.add(histogram(e.getKey(), e.getValue()));
        }
        return out;
    }

    /** Ten bins over [0, 1] and one for failures above 1 (NaN counts there too). */
    static Picture histogram(String backend, List<Double> ratios) {
        int bins = 11;
        int[] counts = new int[bins];
        double worst = 0;
        for (double r : ratios) {
            int bin = Double.isNaN(r) || r > 1 ? 10 : Math.min(9, (int) Math.floor(r * 10));
            counts[Math.max(0, bin)]++;
            worst = Double.isNaN(r) ? Double.NaN : Double.isNaN(worst) ? worst : Math.max(worst, r);
        }
        int max = Math.max(1, Arrays.stream(counts).max().orElse(1));
        int width = 640;
        int height = 320;
        int left = 50;
        int top = 40;
        int pw = width - left - 20;
        int ph = height - top - 60;
        String title = String.format(Locale.ROOT, "%s: max_abs error ÷ limit over %d lines (worst %s)", backend,
                ratios.size(), Double.isNaN(worst) ? "NaN" : Fmt.num(worst));
        Svg svg = new Svg(width, height, title);
        svg.text(8, 18, title, null, "font-size=\"13\" font-weight=\"bold\"");
        svg.rect(left, top, pw, ph, "#ffffff", "#a0aec0", null);
        double bw = pw / (double) bins;
        for (int i = 0; i < bins; i++) {
            double h = 0.9 * ph * counts[i] / (double) max;
            String colour = i == 10 ? "#c53030" : i >= 5 ? "#d69e2e" : "#2b6cb0";
            String label = i == 10 ? "> 1 (fail)" : String.format(Locale.ROOT, "%.1f–%.1f", i / 10.0, (i + 1) / 10.0);
            svg.rect(left + i * bw + 2, top + ph - h, bw - 4, h, colour, null, label + ": " + counts[i] + " lines");
            svg.text(left + i * bw + bw / 2, top + ph - h - 4, Integer.toString(counts[i]), "middle", null);
            svg.text(left + i * bw + bw / 2, top + ph + 14, label, "middle", "font-size=\"9\"");
        }
        double limitX = left + 10 * bw;
        svg.line(limitX, top, limitX, top + ph, "#c53030", 1.5, "5 3");
        svg.text(limitX - 4, top + 12, "limit", "end", "fill=\"#c53030\"");
        svg.text(left + pw / 2.0, height - 16, "max_abs error ÷ tolerance limit (one count per evidence line)",
                "middle", null);
        String caption = String.format(Locale.ROOT, "Backend %s: every measured max_abs* evidence line's value ÷ its"
                + " limit (the tolerance rule); bars right of the dashed line failed.", backend);
        return new Picture("errors-" + backend.replaceAll("[^A-Za-z0-9._-]", "_") + ".svg", title, caption,
                svg.toString());
    }
}
