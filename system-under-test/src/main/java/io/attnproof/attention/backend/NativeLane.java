package io.attnproof.attention.backend;

import io.attnproof.attention.tensor.Device;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the four native backends share: the probe (run once, its reason cached; any {@link Throwable} it throws,
 * such as {@code UnsatisfiedLinkError} from a missing driver, becomes the reason) and the operations of
 * {@link NativeSinks} on the probed runner.
 */
final class NativeLane {
    private final String name;
    private final Device device;
    private final NativeSinks.Dialect dialect;
    private final Supplier<KernelRunner> probe;
    private volatile Probed probed;

    private record Probed(NativeSinks sinks, String reason) {
    }

    NativeLane(String name, Device device, NativeSinks.Dialect dialect, Supplier<KernelRunner> probe) {
        this.name = name;
        this.device = device;
        this.dialect = dialect;
        this.probe = probe;
    }

    String name() {
        return name;
    }

    Device device() {
        return device;
    }

    Optional<String> unavailable() {
        return Optional.ofNullable(probed().reason());
    }

    /** The lane's fixed device family; a call from another device is refused by the operations. */
    Device.Kind dispatchKind() {
        return device.kind();
    }

    /** The operations, or {@link LaneUnavailableException} with the probe's reason. */
    NativeSinks sinks() {
        Probed p = probed();
        if (p.sinks() == null) {
            throw new LaneUnavailableException(name, p.reason());
        }
        return p.sinks();
    }

    /** The runner itself (test hooks: deliberately bad launches). */
    KernelRunner runner() {
        sinks();
        return runner;
    }

    private KernelRunner runner;

    private Probed probed() {
        Probed p = probed;
        if (p == null) {
            synchronized (this) {
                p = probed;
                if (p == null) {
                    try {
                        runner = probe.get();
                        p = new Probed(new NativeSinks(name, device, dialect, runner), null);
                    } catch (Throwable t) {
                        p = new Probed(null, reason(t));
                    }
                    probed = p;
                }
            }
        }
        return p;
    }

    /** One line: the probe's own reason, or the throwable's class and first line (native loaders can be verbose). */
    private static String reason(Throwable t) {
        String text;
        if (t instanceof LaneUnavailableException u) {
            text = u.reason();
        } else if (t instanceof IllegalStateException && t.getMessage() != null) {
            text = t.getMessage();
        } else {
            text = t.getClass().getSimpleName() + ": " + t.getMessage();
        }
        String first = text.lines().findFirst().orElse(text);
        return first.length() > 400 ? first.substring(0, 400) + "..." : first;
    }

}
