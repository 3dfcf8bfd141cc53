package io.attnproof.conformance.kernel;

import io.attnproof.conformance.cases.SinksCase;
import java.nio.file.Path;

/** One lane's build of an adapter's sources (checked or plain), called per case as the adapter's host calls it. */
public interface KernelLane {
    /** The lane name: {@code checked} or {@code plain}. */
    String lane();

    /** Calls the adapter's entry for the case (already known to be inside the envelope). */
    KernelLibrary.Call call(Adapter adapter, Adapter.Entry entry, SinksCase c);

    /** Builds the adapter's sources for its language (CUDA: {@link KernelLibrary}, Metal: {@link MetalLibrary}). */
    static KernelLane build(Path repoRoot, Adapter adapter, Path outDir, boolean plain) {
        return adapter.language().equals("metal") ? MetalLibrary.build(repoRoot, adapter, outDir, plain)
                : KernelLibrary.build(repoRoot, adapter, outDir, plain);
    }
}
