package io.attnproof.reports.cli;

import io.attnproof.attention.tensor.DType;
import io.attnproof.reports.cases.AttnCase;
import io.attnproof.reports.cases.CaseChecker;
import io.attnproof.reports.cases.CaseException;
import io.attnproof.reports.cases.CaseReader;
import io.attnproof.reports.npy.Npy;
import io.attnproof.reports.npy.NpyException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code attnproof check --case case.json --actual out.npy}: any implementation's output against the fp64 oracle. */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = {"Checks any implementation's output of a case (a .npy [B, H, tq, D], float32; float16 for an F16"
            + " case) against the fp64 oracle with the tolerance rule: max_abs_err <= 2 x (naive same-precision error)"
            + " + 2 x noise floor. With rowQ0, each row is checked against itself run alone, its dead prefix absent.",
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
            AttnCase c = CaseReader.read(caseFile);
            Npy.Array a;
            try {
                a = Npy.read(actual);
            } catch (NpyException e) {
                throw new CaseException(actual, "--actual", e.detail());
            }
            int[] expected = c.outputShape();
            if (!Arrays.equals(a.shape(), expected)) {
                throw new CaseException(actual, "--actual", "shape " + a.shapeText() + " must be the case's output shape"
                        + " [B, H, tq, D] = " + Npy.shapeText(expected));
            }
            if (a.dtype() == Npy.DType.F2 && c.dtype() != DType.F16) {
                throw new CaseException(actual, "--actual", "dtype '<f2' (float16) cannot hold a " + c.dtype()
                        + " output: dump it as float32");
            }
            CaseChecker.Verdict v = CaseChecker.check(c, a.data());
            out.println("check: " + v.line());
            out.println("  case   " + caseFile + " (" + c.describe() + ")");
            out.println("  actual " + actual + " '" + a.dtype().descr() + "' " + a.shapeText());
            out.println("  " + v.ruleLine());
            out.flush();
            return v.passed() ? 0 : 1;
        } catch (CaseException | NpyException e) {
            spec.commandLine().getErr().println("attnproof check: " + e.getMessage());
            return 2;
        }
    }
}
