package io.attnproof.conformance.cli;

import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.AnyCase;
import io.attnproof.attention.backend.Backend;
import io.attnproof.conformance.cases.CaseException;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.CaseRunner;
import io.attnproof.conformance.npy.Npy;
import io.attnproof.conformance.npy.NpyException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code attnproof run --case case.json --out out.npy}: the system under test on a case. */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Runs the system under test (Dsv4Attention) on a case and writes its output [B, H, tq, D]"
            + " as a float32 .npy.", "Bad input (malformed JSON, a missing or truncated .npy, a wrong dtype or shape, a"
            + " config that contradicts its tensors) is one error line naming the file and field, exit code 2, and"
            + " nothing written."})
final class RunCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--case", required = true, paramLabel = "CASE.json", description = "The case file (README \"Cases\").")
    Path caseFile;

    @Option(names = "--out", required = true, paramLabel = "OUT.npy", description = "Where to write the output.")
    Path out;

    @Override
    public Integer call() {
        try {
            AnyCase c = CaseReader.readAny(caseFile);
            Tensor o = CaseRunner.run(c, Backend.cpu());
            Npy.write(out, Npy.DType.F4, o.shape(), o.toFloatArray());
            spec.commandLine().getOut().println("run: wrote " + out + " '<f4' " + Npy.shapeText(o.shape())
                    + " from " + caseFile + " (" + c.describe() + ")");
            return 0;
        } catch (CaseException | NpyException e) {
            spec.commandLine().getErr().println("attnproof run: " + e.getMessage());
            return 2;
        }
    }
}
