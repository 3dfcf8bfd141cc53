package io.attnproof.ledger;

import java.util.Locale;

/** A small SVG 1.1 writer: shapes and text in user units, escaped; {@link #toString} closes the document. */
final class Svg {
    private final StringBuilder out = new StringBuilder(8192);
    private final int width;
    private final int height;

    Svg(int width, int height, String title) {
        this.width = width;
        this.height = height;
        out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
                .append("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"").append(width)
                .append("\" height=\"").append(height).append("\" viewBox=\"0 0 ").append(width).append(' ')
                .append(height).append("\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"11\">\n")
                .append("<title>").append(Fmt.html(title)).append("</title>\n")
                .append("<rect x=\"0\" y=\"0\" width=\"").append(width).append("\" height=\"").append(height)
                .append("\" fill=\"#ffffff\"/>\n");
    }

    int width() {
        return width;
    }

    int height() {
        return height;
    }

    Svg rect(double x, double y, double w, double h, String fill, String stroke, String tooltip) {
        out.append("<rect x=\"").append(n(x)).append("\" y=\"").append(n(y)).append("\" width=\"").append(n(w))
                .append("\" height=\"").append(n(h)).append("\" fill=\"").append(fill).append('"');
        if (stroke != null) {
            out.append(" stroke=\"").append(stroke).append("\" stroke-width=\"0.5\"");
        }
        if (tooltip != null) {
            out.append("><title>").append(Fmt.html(tooltip)).append("</title></rect>\n");
        } else {
            out.append("/>\n");
        }
        return this;
    }

    Svg line(double x1, double y1, double x2, double y2, String stroke, double strokeWidth, String dash) {
        out.append("<line x1=\"").append(n(x1)).append("\" y1=\"").append(n(y1)).append("\" x2=\"").append(n(x2))
                .append("\" y2=\"").append(n(y2)).append("\" stroke=\"").append(stroke).append("\" stroke-width=\"")
                .append(n(strokeWidth)).append('"');
        if (dash != null) {
            out.append(" stroke-dasharray=\"").append(dash).append('"');
        }
        out.append("/>\n");
        return this;
    }

    Svg polyline(double[] xs, double[] ys, String stroke, double strokeWidth, String dash) {
        out.append("<polyline fill=\"none\" stroke=\"").append(stroke).append("\" stroke-width=\"").append(n(strokeWidth))
                .append('"');
        if (dash != null) {
            out.append(" stroke-dasharray=\"").append(dash).append('"');
        }
        out.append(" points=\"");
        for (int i = 0; i < xs.length; i++) {
            out.append(i == 0 ? "" : " ").append(n(xs[i])).append(',').append(n(ys[i]));
        }
        out.append("\"/>\n");
        return this;
    }

    Svg text(double x, double y, String text, String anchor, String extra) {
        out.append("<text x=\"").append(n(x)).append("\" y=\"").append(n(y)).append('"');
        if (anchor != null) {
            out.append(" text-anchor=\"").append(anchor).append('"');
        }
        if (extra != null) {
            out.append(' ').append(extra);
        }
        out.append('>').append(Fmt.html(text)).append("</text>\n");
        return this;
    }

    @Override
    public String toString() {
        return out + "</svg>\n";
    }

    private static String n(double x) {
        if (x == Math.rint(x) && Math.abs(x) < 1e9) {
            return Long.toString((long) x);
        }
        return String.format(Locale.ROOT, "%.2f", x);
    }
}
