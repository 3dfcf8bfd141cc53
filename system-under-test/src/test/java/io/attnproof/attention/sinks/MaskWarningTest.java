package io.attnproof.attention.sinks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Device;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.SinksInputs;
import io.attnproof.oracles.Precision;
import java.lang.System.Logger.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** S4: a mask that forces a GPU call off its fused kernel warns exactly once per process, naming the loss. */
@Claim("S4")
class MaskWarningTest {
    static final long SEED = 400;

    final CapturingLogger log = new CapturingLogger();
    System.Logger previous;

    @BeforeEach
    void captureWithTheFlagReArmed() {
        previous = SinksAttention.useLogger(log);
        SinksAttention.resetMaskWarning();
    }

    @AfterEach
    void restore() {
        SinksAttention.useLogger(previous);
        SinksAttention.resetMaskWarning();
    }

    /** One call on {@code device} with head dim {@code d}, batch {@code batch}, masked or not. */
    static void call(Device device, int batch, int d, boolean masked) {
        SinksInputs in = SinksInputs.generate(SEED + d, batch, 4, 2, 3, 6, d, Precision.F32, 1.0);
        Tensor mask = masked ? Tensor.zeros(DType.F32, device, 3, 6) : null;
        SinksAttention.sinksAttn(SinksRun.tensor(in.q(), DType.F32, device), SinksRun.tensor(in.k(), DType.F32, device),
                SinksRun.tensor(in.v(), DType.F32, device), SinksRun.sinks(in.sinks(), device), mask, 0, true);
    }

    @Test
    void manyMaskedGpuCallsWarnExactlyOnce(Evidence ev) {
        ev.seed(SEED);
        // Calls a mask does not move off a fused kernel never warn: the CPU has none, 48 is outside both
        // envelopes, B > 1 would go varlen anyway, and unmasked calls take the fused arm.
        call(Device.CPU, 1, 64, true);
        call(Device.cuda(0), 1, 48, true);
        call(Device.metal(0), 1, 512, true);
        call(Device.cuda(0), 2, 64, true);
        call(Device.cuda(0), 1, 64, false);
        call(Device.metal(0), 1, 80, false);
        ev.check("warnings_for_calls_no_mask_moved_off_a_fused_kernel", log.entries().size(), 0, null);

        int calls = 0;
        long movedOff = 0;
        java.util.Set<Device.Kind> kinds = java.util.EnumSet.noneOf(Device.Kind.class);
        for (int i = 0; i < 12; i++) {
            Device device = i % 2 == 0 ? Device.cuda(i % 3) : Device.metal(0);
            int d = i % 3 == 0 ? 80 : 64;
            // Read from the system's dispatch: the mask moves this call off the fused arm it would take without one.
            Tensor q = SinksRun.tensor(SinksInputs.generate(SEED + d, 1, 4, 2, 3, 6, d, Precision.F32, 1.0).q(),
                    DType.F32, device);
            if (SinksAttention.armFor(q, null, true).fused()
                    && !SinksAttention.armFor(q, Tensor.zeros(DType.F32, device, 3, 6), true).fused()) {
                movedOff++;
                kinds.add(device.kind());
            }
            call(device, 1, d, true);
            calls++;
        }
        ev.degeneracy("masked_gpu_calls_moved_off_a_fused_arm", movedOff, Comparison.GE, 10,
                movedOff + " of " + calls + " calls, on " + kinds);
        ev.degeneracy("gpu_kinds_moved_off_a_fused_arm", kinds.size(), Comparison.GE, 2, "kinds " + kinds);
        ev.check("warnings_for_" + calls + "_masked_gpu_calls_minus_one", Math.abs(log.count(Level.WARNING) - 1), 0,
                null);
        ev.check("records_at_other_levels", log.entries().size() - log.count(Level.WARNING), 0, null);
        String message = log.entries().getFirst().message();
        assertTrue(message.contains("performance loss") && message.contains("flash_attn_sinks")
                && message.contains("sinks_attn_cpu") && message.contains("cuda:0"), message);

        // Control: re-arming the flag makes the next masked call warn again — the flag is what holds it to one.
        SinksAttention.resetMaskWarning();
        call(Device.metal(0), 1, 64, true);
        ev.controlAtLeast("warnings_after_rearming", log.count(Level.WARNING) - 1, 1);
        assertTrue(log.entries().getLast().message().contains("flash_attn_sinks_metal"), log.entries().getLast().message());
    }

    @Test
    void concurrentMaskedCallsStillWarnOnce(Evidence ev) throws Exception {
        ev.seed(SEED);
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            Device device = t % 2 == 0 ? Device.cuda(t) : Device.metal(t);
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 5; i++) {
                    call(device, 1, 64, true);
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join(30_000);
        }
        ev.check("warnings_for_20_concurrent_masked_gpu_calls_minus_one", Math.abs(log.count(Level.WARNING) - 1), 0,
                null);
    }
}
