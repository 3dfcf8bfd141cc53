package io.attnproof.conformance.cli;

import io.attnproof.attention.tensor.DType;
import io.attnproof.conformance.cases.AnyCase;
import io.attnproof.conformance.cases.CaseChecker;
import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.npy.Npy;
import io.attnproof.conformance.npy.NpyException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code attnproof check --case case.json --actual out.npy}: any implementation's output against the fp64 oracle. */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = {"Checks any implementation's output of a case (a .npy [B, H, tq, D] of float32 or float64, either"
            + " byte order; float16 for an F16 case) against the fp64 oracle with the tolerance rule: max_abs_err <= 2 x"
            + " (naive same-precision error) + 2 x noise floor, and for F16/BF16 also the precision-contract tier (2 x"
            + " the error of a reference keeping logits and probabilities in f32 + 2 x noise floor). NaN/inf positions"
            + " must match the oracle's exactly; the cosine difference is reported. With rowQ0, each row is checked"
            + " against itself run alone, its dead prefix absent. Union and sinks cases alike.",
            "Prints the verdict, the worst element (b, h, r, c) and the margin (limit / max_abs_err).",
            "Exit code 0 PASS, 1 FAIL, 2 bad input (one error line naming the file and field)."})
final class CheckCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--case", required = true, paramLabel = "CASE.json", description = "The case file (README \"Cases\").")
    Path caseFile;

    @Option(names = "--actual", required = true, paramLabel = "ACTUAL.npy", description = "The output to judge.")
    Path actual;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try {
            AnyCase c = CaseReader.readAny(caseFile);
            Npy.Wide wide;
            try {
                wide = Npy.readWide(actual);
            } catch (NpyException e) {
                throw new CaseException(actual, "--actual", e.detail());
            }
            Npy.Array a = wide.array();
            int[] expected = c.outputShape();
            if (!Arrays.equals(a.shape(), expected)) {
                throw new CaseException(actual, "--actual", "shape " + a.shapeText() + " must be the case's output shape"
                        + " [B, H, tq, D] = " + Npy.shapeText(expected));
            }
            if (a.dtype().isHalf() && c.dtype() != DType.F16) {
                throw new CaseException(actual, "--actual", "dtype '<f2' (float16) cannot hold a " + c.dtype()
                        + " output: dump it as float32");
            }
            CaseChecker.Verdict v = CaseChecker.check(c, wide.values());
            out.println("check: " + v.line());
            out.println("  case   " + caseFile + " (" + c.describe() + ")");
            out.println("  actual " + actual + " '" + a.dtype().descr() + "' " + a.shapeText());
            out.println("  " + v.ruleLine());
            out.println("  " + v.detailLine());
            out.flush();
            return v.passed() ? 0 : 1;
        } catch (CaseException | NpyException e) {
            spec.commandLine().getErr().println("attnproof check: " + e.getMessage());
            return 2;
        }
    }
}
