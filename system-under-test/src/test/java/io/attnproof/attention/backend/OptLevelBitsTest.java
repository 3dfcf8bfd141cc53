package io.attnproof.attention.backend;

import io.attnproof.attention.tensor.Device;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The mutant campaign builds a kernel mutant's lane at -O0 ({@code ATTNPROOF_EMU_OPT=0} in native/emu/build.sh: less
 * than half the compile time), while the normal lanes are built at -O2. That changes nothing the campaign judges
 * only if both give the same bits: built here at -O0 from the same sources, the cuda-emu and metal-emu lanes give
 * the -O2 lanes' output bits on every claim input of N5 (CheckedPlainBitsTest's set: every kernel of both sources,
 * GQA 16/2 and 64/8 included); the control is N5's (a one-ulp input change shows in the comparison). Without FMA
 * contraction ({@code -ffp-contract=off}) g++ neither fuses nor reassociates at any level; the cuda-emu-fma lane,
 * whose contraction needs the optimiser, is always built at -O2.
 */
@Timeout(600)
class OptLevelBitsTest {
    static Path dir;

    @BeforeAll
    static void buildAtO0() throws IOException {
        Path repo = FrontEnd.REPO;
        // Built from this repository's unpatched sources and build, so the same libraries whichever lanes are under
        // test: a mutant's run (its lanes in its own folder) finds the normal build's, which build.sh keeps while no
        // source is newer.
        dir = repo.resolve("system-under-test/target/native/opt0");
        FrontEnd.Result r = FrontEnd.run(List.of("bash", repo.resolve("native/emu/build.sh").toString(),
                dir.toString(), repo.resolve("native/cuda/sinks_attn.cu").toString(),
                repo.resolve("native/metal/sinks_attn.metal").toString()),
                Map.of("ATTNPROOF_EMU_ONLY", "cuda-emu,metal-emu", "ATTNPROOF_EMU_OPT", "0"));
        if (r.code() != 0) {
            throw new AssertionError("native/emu/build.sh at -O0 failed (" + r.code() + "):\n" + r.output());
        }
    }

    static CheckedPlainBitsTest.Lane atO0(NativeSinks.Dialect dialect) {
        boolean cuda = dialect == NativeSinks.Dialect.CUDA;
        String lane = cuda ? "cuda-emu" : "metal-emu";
        EmuRunner r = EmuRunner.load(lane, dir.resolve(cuda ? NativeFiles.CUDA_EMU_LIBRARY
                : NativeFiles.METAL_EMU_LIBRARY));
        Device d = cuda ? Device.cuda(0) : Device.metal(0);
        return new CheckedPlainBitsTest.Lane(lane + "@O0", new NativeSinks(lane, d, dialect, r), r, d);
    }

    @Test
    @Claim("N5")
    void cudaEmuAtO0GivesTheBitsOfCudaEmuAtO2OnTheClaimInputs(Evidence ev) {
        CheckedPlainBitsTest.sameBits(NativeSinks.Dialect.CUDA, ev, atO0(NativeSinks.Dialect.CUDA), "O2_vs_O0");
    }

    @Test
    @Claim("N5")
    void metalEmuAtO0GivesTheBitsOfMetalEmuAtO2OnTheClaimInputs(Evidence ev) {
        CheckedPlainBitsTest.sameBits(NativeSinks.Dialect.METAL, ev, atO0(NativeSinks.Dialect.METAL), "O2_vs_O0");
    }
}
