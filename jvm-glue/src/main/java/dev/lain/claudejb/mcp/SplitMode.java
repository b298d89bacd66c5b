package dev.lain.claudejb.mcp;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * The split-mode flow of one project: route reports go to a {@link PageDelivery}; when every
 * route has failed, the servers are started through {@code servers} (which returns the running
 * set, starting it if it is not up) and the host's {@link Host#splitModeNotice} is called with
 * {@link Contract#SPLIT_MODE_MESSAGE} and the ready
 * {@code mcpServers} block for {@code launcher}. Safe from any thread; the notice is given once.
 *
 * <pre>{@code
 * SplitMode split = new SplitMode(new PageDelivery().registerRoute("jcef").registerRoute("browser"),
 *         () -> project.startMcpServersIfNeeded(), BridgeLauncher.currentJava(pluginDir));
 * split.report("jcef", RouteOutcome.failed("JCEF is not supported on this backend"));
 * }</pre>
 */
public final class SplitMode {
    private final PageDelivery delivery;
    private final Supplier<IdeMcpServers> servers;
    private final BridgeLauncher launcher;

    public SplitMode(PageDelivery delivery, Supplier<IdeMcpServers> servers, BridgeLauncher launcher) {
        this.delivery = Objects.requireNonNull(delivery, "delivery");
        this.servers = Objects.requireNonNull(servers, "servers");
        this.launcher = Objects.requireNonNull(launcher, "launcher");
    }

    /** The text of the split-mode notice. */
    public static String message() {
        return Native.splitModeMessage();
    }

    public PageDelivery delivery() {
        return delivery;
    }

    /**
     * Reports a route's outcome; on {@link PageDelivery.State#ENTER_SPLIT_MODE} starts the
     * servers if needed and announces split mode before returning.
     *
     * @throws McpException when the servers cannot be started (the state stays entered: the
     *         host reports the failure its own way)
     */
    public PageDelivery.State report(String route, RouteOutcome outcome) {
        PageDelivery.State state = delivery.report(route, outcome);
        if (state == PageDelivery.State.ENTER_SPLIT_MODE) {
            IdeMcpServers running = servers.get();
            if (running == null || running.isStopped()) {
                throw new McpException("split mode: the servers supplier returned no running servers");
            }
            running.announceSplitMode(launcher);
        }
        return state;
    }
}
