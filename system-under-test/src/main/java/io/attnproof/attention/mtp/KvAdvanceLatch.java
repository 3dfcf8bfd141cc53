package io.attnproof.attention.mtp;

import io.attnproof.attention.Require;
import java.util.Optional;

/** Latches the KV advance mode once per pipeline: a PER_SEQUENCE request is granted only if every capability passes. */
public final class KvAdvanceLatch {
    /** The latched mode and, when a PER_SEQUENCE request was refused, the refusal text. */
    public record Decision(KvAdvance mode, Optional<String> refusal) {
    }

    private Decision decision;

    /** Decides once; a second call is an error (the mode never changes mid-run). */
    public synchronized Decision latch(KvAdvance requested, Capabilities capabilities) {
        Require.present("requested", requested);
        Require.present("capabilities", capabilities);
        if (decision != null) {
            throw new IllegalStateException("KvAdvance already latched to " + decision.mode()
                    + "; it is decided once per pipeline (requested now: " + requested + ")");
        }
        Optional<String> refusal = requested == KvAdvance.PER_SEQUENCE ? capabilities.refusal() : Optional.empty();
        decision = new Decision(refusal.isPresent() ? KvAdvance.COHORT : requested, refusal);
        return decision;
    }

    /** The latched decision, if any. */
    public synchronized Optional<Decision> decision() {
        return Optional.ofNullable(decision);
    }
}
