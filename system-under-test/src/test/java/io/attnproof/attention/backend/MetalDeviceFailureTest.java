package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Evidence;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On a real Metal device: MSL that does not compile fails with Metal's error name and its compiler message, and the
 * lane keeps working afterwards. Skipped where no Metal device is present; failed instead under -Pmetal.
 */
@Tag("metal")
@Claim("N2")
class MetalDeviceFailureTest {

    @BeforeAll
    static void theMetalLaneMustRunWhenRequired() {
        var reason = Backend.metal().unavailable();
        if (reason.isPresent() && Lanes.required(Backend.metal())) {
            throw new AssertionError("the metal lane is required here (-Pmetal) but cannot run: " + reason.get());
        }
    }

    /** The lane's runner; where no device is present, an evidence line with the reason, then the skip. */
    static MetalRunner runner(Evidence ev) {
        Lanes.assumeAvailable(Backend.metal(), ev);
        return (MetalRunner) Backend.metal().runner();
    }

    @Test
    void mslThatDoesNotCompileFailsWithTheMetalErrorName(Evidence ev) {
        MetalRunner r = runner(ev);
        NativeKernelException x = assertThrows(NativeKernelException.class,
                () -> r.compileAndRelease("kernel void broken(device float* x [[buffer(0)]]) { x[0] = ; }"));
        assertEquals("MTLLibraryErrorCompileFailure", x.errorName(), x.getMessage());
        LaneClaimsSmoke.fusedRuns(Backend.metal());
    }

    @Test
    void theLaneDescribesItsDevice(Evidence ev) {
        MetalRunner r = runner(ev);
        System.out.println("metal lane: " + r.describe());
        assertFalse(r.describe().isBlank());
    }
}
