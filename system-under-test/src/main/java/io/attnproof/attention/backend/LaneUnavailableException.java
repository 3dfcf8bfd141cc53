package io.attnproof.attention.backend;

/** A lane that cannot run on this machine was asked to run; the message carries its probe's reason. */
public final class LaneUnavailableException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String lane;
    private final String reason;

    public LaneUnavailableException(String lane, String reason) {
        super("backend " + lane + " is unavailable here: " + reason);
        this.lane = lane;
        this.reason = reason;
    }

    public String lane() {
        return lane;
    }

    public String reason() {
        return reason;
    }
}
