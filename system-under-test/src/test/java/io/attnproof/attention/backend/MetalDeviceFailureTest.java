package io.attnproof.attention.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On a real Metal device: MSL that does not compile fails with Metal's error name and its compiler message, and the
 * lane keeps working afterwards. Skipped where no Metal device is present; failed instead under -Pmetal.
 */
@Tag("metal")
class MetalDeviceFailureTest {

    @BeforeAll
    static void theMetalLaneMustRunWhenRequired() {
        var reason = Backend.metal().unavailable();
        if (reason.isPresent() && Lanes.required(Backend.metal())) {
            throw new AssertionError("the metal lane is required here (-Pmetal) but cannot run: " + reason.get());
        }
    }

    static MetalRunner runner() {
        Lanes.assumeAvailable(Backend.metal());
        return (MetalRunner) Backend.metal().runner();
    }

    @Test
    void mslThatDoesNotCompileFailsWithTheMetalErrorName() {
        MetalRunner r = runner();
        NativeKernelException x = assertThrows(NativeKernelException.class,
                () -> r.compileAndRelease("kernel void broken(device float* x [[buffer(0)]]) { x[0] = ; }"));
        assertEquals("MTLLibraryErrorCompileFailure", x.errorName(), x.getMessage());
        LaneClaimsSmoke.fusedRuns(Backend.metal());
    }

    @Test
    void theLaneDescribesItsDevice() {
        MetalRunner r = runner();
        System.out.println("metal lane: " + r.describe());
        assertFalse(r.describe().isBlank());
    }
}
