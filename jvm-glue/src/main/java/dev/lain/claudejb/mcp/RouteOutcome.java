package dev.lain.claudejb.mcp;

import java.util.Objects;
import java.util.Optional;

/** How one delivery route of the chat page ended, as reported to {@link PageDelivery#report}. */
public final class RouteOutcome {
    private static final RouteOutcome DELIVERED = new RouteOutcome(true, null);

    private final boolean delivered;
    private final String reason;

    private RouteOutcome(boolean delivered, String reason) {
        this.delivered = delivered;
        this.reason = reason;
    }

    /** The page arrived this way. */
    public static RouteOutcome delivered() {
        return DELIVERED;
    }

    /** This route failed, and why. */
    public static RouteOutcome failed(String reason) {
        return new RouteOutcome(false, Objects.requireNonNull(reason, "reason"));
    }

    public boolean isDelivered() { return delivered; }

    /** Why the route failed; empty for a delivered one. */
    public Optional<String> reason() { return Optional.ofNullable(reason); }

    @Override
    public String toString() {
        return delivered ? "delivered" : "failed(" + reason + ")";
    }
}
