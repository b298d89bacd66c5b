package dev.lain.claudejb.mcp;

import java.lang.ref.Cleaner;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The delivery routes of one project's chat page (a JCEF panel, an external browser, …). The
 * host registers the routes it will try and reports how each ended; when every route has
 * failed, {@link #report} returns {@link State#ENTER_SPLIT_MODE} exactly once, and the host
 * should start the servers (if they are not up) and announce split mode —
 * {@link SplitMode} does both. It lives independently of any server set. Safe from any thread.
 */
public final class PageDelivery implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** What a report means for the project. */
    public enum State {
        /** Some routes have not reported yet. */
        WAITING,
        /** The page was shown: no split mode. */
        SHOWN,
        /** Every route failed, and this report found out: enter split mode now. */
        ENTER_SPLIT_MODE,
        /** Every route failed, and split mode was entered already. */
        IN_SPLIT_MODE
    }

    private final long handle;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;

    public PageDelivery() {
        long created = Native.newPageDelivery();
        this.handle = created;
        this.cleanable = CLEANER.register(this, () -> Native.freePageDelivery(created));
    }

    /** Declares a route that will report. */
    public PageDelivery registerRoute(String route) {
        checkOpen();
        Native.registerRoute(handle, Objects.requireNonNull(route, "route"));
        return this;
    }

    /** Records how {@code route} ended (an unregistered route is registered by its report). */
    public State report(String route, RouteOutcome outcome) {
        checkOpen();
        Objects.requireNonNull(outcome, "outcome");
        int state = Native.reportRoute(handle, Objects.requireNonNull(route, "route"), outcome.isDelivered(),
                outcome.reason().orElse(null));
        return State.values()[state];
    }

    /** Every route and its outcome so far ({@code null} for one that has not reported), by name. */
    @SuppressWarnings("unchecked")
    public Map<String, RouteOutcome> outcomes() {
        checkOpen();
        Map<String, RouteOutcome> outcomes = new LinkedHashMap<>();
        for (Object entry : (List<Object>) Json.parse(Native.routeOutcomes(handle))) {
            Map<String, Object> route = (Map<String, Object>) entry;
            String outcome = (String) route.get("outcome");
            outcomes.put((String) route.get("route"), "delivered".equals(outcome) ? RouteOutcome.delivered()
                    : "failed".equals(outcome) ? RouteOutcome.failed((String) route.get("reason")) : null);
        }
        return outcomes;
    }

    @Override
    public void close() {
        closed = true;
        cleanable.clean();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this page delivery is closed");
        }
    }
}
