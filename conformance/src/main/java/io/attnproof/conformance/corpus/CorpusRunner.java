package io.attnproof.conformance.corpus;

import io.attnproof.attention.backend.Backend;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.AnyCase;
import io.attnproof.conformance.cases.CaseReader;
import io.attnproof.conformance.cases.CaseRunner;
import io.attnproof.conformance.npy.Npy;
import java.nio.file.Path;

/** {@code attnproof corpus run}: the system under test on every case of a corpus, on one lane, into {@code OUT/<id>.npy}. */
public final class CorpusRunner {
    private CorpusRunner() {
    }

    /** How many outputs were written, and how long it took. */
    public record Result(int cases, double seconds) {
    }

    /**
     * Runs every case of the corpus in {@code dir} on {@code lane} and writes {@code out/<case id>.npy} ('<f4').
     *
     * @throws io.attnproof.conformance.cases.CaseException naming the file and field of a bad manifest or case
     * @throws io.attnproof.attention.backend.LaneUnavailableException when the lane cannot run here
     */
    public static Result run(Path dir, Path out, Backend lane) {
        lane.requireAvailable();
        Manifest m = Manifest.read(dir);
        long t0 = System.nanoTime();
        // Every case is read and validated before anything is written: bad input writes nothing.
        java.util.List<AnyCase> cases = new java.util.ArrayList<>();
        for (Manifest.Entry e : m.cases()) {
            cases.add(CaseReader.readAny(dir.resolve(e.caseFile())));
        }
        for (int i = 0; i < cases.size(); i++) {
            Tensor o = CaseRunner.run(cases.get(i), lane);
            Npy.write(out.resolve(m.cases().get(i).id() + ".npy"), Npy.DType.F4, o.shape(), o.toFloatArray());
        }
        return new Result(m.cases().size(), (System.nanoTime() - t0) / 1e9);
    }
}
