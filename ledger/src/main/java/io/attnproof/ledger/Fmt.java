package io.attnproof.ledger;

import io.attnproof.fixtures.evidence.EvidenceLine;

import java.util.Locale;

/** Number and text formatting shared by the ledger's HTML, Markdown and terminal output. */
public final class Fmt {
    /** The repository root seen from the ledger's directory ({@code ledger/target/ledger}): source links climb there. */
    public static final String ROOT_FROM_LEDGER = "../../../";

    private Fmt() {
    }

    /**
     * The link target of a source line {@code path:line} (path relative to the repository root), from the ledger's
     * directory: {@code ../../../path#Lline} ({@code #L} only for a line above 0).
     */
    public static String sourceHref(String source) {
        int colon = source.lastIndexOf(':');
        String path = source;
        String anchor = "";
        if (colon > 0 && source.substring(colon + 1).chars().allMatch(Character::isDigit) && colon + 1 < source.length()) {
            path = source.substring(0, colon);
            anchor = Integer.parseInt(source.substring(colon + 1)) > 0 ? "#L" + source.substring(colon + 1) : "";
        }
        return ROOT_FROM_LEDGER + path + anchor;
    }

    /** A source line as an HTML anchor: the text is {@code path:line}, the href {@link #sourceHref}. */
    public static String sourceHtml(String source) {
        return "<a class=\"src\" href=\"" + html(sourceHref(source)) + "\" title=\"" + html(source) + "\"><code>"
                + html(source) + "</code></a>";
    }

    /** A source line as a Markdown link: {@code [`path:line`](../../../path#Lline)}. */
    public static String sourceMd(String source) {
        return "[`" + md(source) + "`](" + sourceHref(source).replace(" ", "%20").replace(")", "%29") + ")";
    }

    /** A compact number: integers as integers, else three significant digits (scientific outside [1e-2, 1e4)). */
    public static String num(double x) {
        if (Double.isNaN(x) || Double.isInfinite(x)) {
            return Double.toString(x);
        }
        if (x == Math.rint(x) && Math.abs(x) < 1e15) {
            return Long.toString((long) x);
        }
        double abs = Math.abs(x);
        return String.format(Locale.ROOT, abs >= 1e-2 && abs < 1e4 ? "%.3g" : "%.2e", x);
    }

    /** "metric value cmp limit", "metric value (info)", or "skipped: reason". */
    public static String describe(EvidenceLine l) {
        if (l.isSkip()) {
            return "skipped: " + l.skipped();
        }
        if (!l.kind().judged()) {
            return l.metric() + " " + num(l.value()) + " (info)";
        }
        return l.metric() + " " + num(l.value()) + " " + (l.verdict() ? "" : "not ") + l.cmp().symbol() + " "
                + num(l.limit()) + (l.inconsistent() ? " (INCONSISTENT: the line says passed = " + l.recordedPassed()
                + ")" : "");
    }

    /** A ratio such as a margin: {@code 3.21×}, {@code 1.2e+04×}, {@code ∞}, {@code NaN}. */
    public static String times(double x) {
        if (Double.isNaN(x)) {
            return "NaN";
        }
        if (Double.isInfinite(x)) {
            return x > 0 ? "∞" : "-∞";
        }
        double abs = Math.abs(x);
        return String.format(Locale.ROOT, abs >= 1e-2 && abs < 1e4 ? "%.3g×" : "%.1e×", x);
    }

    /** HTML-escaped text. */
    public static String html(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(ch);
            }
        }
        return out.toString();
    }

    /** Text safe inside a Markdown table cell: pipes escaped, line breaks flattened. */
    public static String md(String s) {
        if (s == null) {
            return "";
        }
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ");
    }

    /** {@code s} cut to at most {@code max} characters with an ellipsis. */
    public static String cut(String s, int max) {
        if (s == null) {
            return "";
        }
        String flat = s.replace("\r", " ").replace('\n', ' ');
        return flat.length() <= max ? flat : flat.substring(0, Math.max(0, max - 1)) + "…";
    }

    /** The simple name of a class name ({@code a.b.C} -> {@code C}). */
    static String simpleName(String clazz) {
        return clazz.substring(clazz.lastIndexOf('.') + 1);
    }
}
