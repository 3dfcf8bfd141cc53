package io.attnproof.oracles;

import java.util.Arrays;

/** Softmax with an attention sink that sits in the denominator only, in two independently written forms. */
public final class SinkSoftmax {
    private SinkSoftmax() {}

    /** GPT-OSS form: softmax over [logits..., sink] (one extra logit column), the sink column dropped after softmax.
        Masked logits are -inf. sink may be -inf (no sink). Uses max-subtraction. If every entry, sink included,
        is -inf the textbook softmax is undefined and this form returns NaN (closedForm returns zeros). */
    public static double[] extraColumn(double[] logits, double sink) {
        check(logits, sink);
        int n = logits.length;
        double[] x = Arrays.copyOf(logits, n + 1);
        x[n] = sink;
        double m = Double.NEGATIVE_INFINITY;
        for (double xi : x) {
            m = Math.max(m, xi);
        }
        double[] e = new double[n + 1];
        double sum = 0;
        for (int i = 0; i <= n; i++) {
            e[i] = Math.exp(x[i] - m);
            sum += e[i];
        }
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            y[i] = e[i] / sum;
        }
        return y;
    }

    /** Closed form: y_k = e^{x_k-m} / (e^{sink-m} + sum_j e^{x_j-m}), m = max(sink, max_k x_k); a fully masked
        row (all -inf, sink finite) gives zeros, never NaN; all -inf including sink gives zeros too. */
    public static double[] closedForm(double[] logits, double sink) {
        check(logits, sink);
        double m = sink;
        for (double x : logits) {
            m = Math.max(m, x);
        }
        double[] y = new double[logits.length];
        if (m == Double.NEGATIVE_INFINITY) {
            return y;
        }
        double denominator = Math.exp(sink - m);
        for (double x : logits) {
            denominator += Math.exp(x - m);
        }
        for (int k = 0; k < logits.length; k++) {
            y[k] = Math.exp(logits[k] - m) / denominator;
        }
        return y;
    }

    private static void check(double[] logits, double sink) {
        Require.that(logits != null, "logits must not be null");
        for (int k = 0; k < logits.length; k++) {
            Require.logit("logits[" + k + "]", logits[k]);
        }
        Require.logit("sink", sink);
    }
}
