package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On a real CUDA device: a bad PTX module and an impossible allocation fail with the CUDA error's name, and the lane
 * keeps working afterwards. Skipped where no device is present; failed instead under -Pcuda.
 */
@Tag("cuda")
@Claim("N2")
class CudaDeviceFailureTest {

    @BeforeAll
    static void theCudaLaneMustRunWhenRequired() {
        var reason = Backend.cuda().unavailable();
        if (reason.isPresent() && Lanes.required(Backend.cuda())) {
            throw new AssertionError("the cuda lane is required here (-Pcuda) but cannot run: " + reason.get());
        }
    }

    /** The lane's runner; where no device is present, an evidence line with the reason, then the skip. */
    static JCudaRunner runner(Evidence ev) {
        Lanes.assumeAvailable(Backend.cuda(), ev);
        return (JCudaRunner) Backend.cuda().runner();
    }

    @Test
    void badPtxFailsWithTheCudaErrorName(Evidence ev) {
        JCudaRunner r = runner(ev);
        NativeKernelException x = assertThrows(NativeKernelException.class, () -> r.loadModule(new NativeFiles.Ptx(
                "a deliberately bad module", ".version 8.0\n.target sm_75\nthis is not ptx\n".getBytes(
                        StandardCharsets.UTF_8))));
        assertTrue(x.errorName().startsWith("CUDA_ERROR_"), x.getMessage());
        r.loadModule(NativeFiles.ptx());
        LaneClaimsSmoke.fusedRuns(Backend.cuda());
    }

    @Test
    void anImpossibleAllocationFailsWithOutOfMemory(Evidence ev) {
        JCudaRunner r = runner(ev);
        NativeKernelException x = assertThrows(NativeKernelException.class, () -> r.allocateAndFree(1L << 52));
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", x.errorName(), x.getMessage());
        LaneClaimsSmoke.fusedRuns(Backend.cuda());
    }

    @Test
    void theLaneDescribesItsDevice(Evidence ev) {
        JCudaRunner r = runner(ev);
        System.out.println("cuda lane: " + r.describe());
        assertTrue(List.of(r.describe().split(", ")).size() >= 3, r.describe());
    }
}
