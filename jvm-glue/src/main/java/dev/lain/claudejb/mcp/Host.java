package dev.lain.claudejb.mcp;

import java.util.List;

/**
 * What the servers ask of the application hosting them. Every method has a safe default, so
 * a host implements only what it has a UI or a policy for. Methods run on callback threads
 * and should return quickly; answers that need a person come back later through the object
 * passed in ({@link Confirmation}, {@link AdmissionAnswer}), from any thread.
 */
public interface Host {
    /**
     * Whether the host can show a confirmation to a person. Read once, at start. Without a
     * UI (headless, split mode) a guard's "ask" is a denial.
     */
    default boolean canConfirm() {
        return false;
    }

    /**
     * Asks the person whether {@code request} may run; answer through {@code confirmation},
     * now or later (for example from the EDT). No answer within the confirmation timeout is a
     * denial. The prompt, the client's name and the arguments carry text a client or a
     * repository chose: show control and bidirectional characters escaped (the headless host
     * passes everything for its terminal through one escaper).
     */
    default void confirm(GuardRequest request, String prompt, Confirmation confirmation) {
        confirmation.decline();
    }

    /**
     * A connection came from a process the host did not declare
     * ({@link IdeMcpServers#declareLaunchedClient}) and no admission credit covered. Nothing it
     * sent runs until {@code answer} is given: {@link AdmissionAnswer#allow()} or
     * {@link AdmissionAnswer#reject()}, from any thread, possibly later (a notification's
     * buttons, when the "Ask me before an unexpected client may talk to our servers" setting is
     * on). One prompt per client: its other connections wait on the same answer. No answer
     * within the admission timeout rejects it. The default logs the client and allows it. Its
     * command line is the client's to choose: show it with control characters escaped.
     */
    default void unexpectedClient(UnexpectedClient client, AdmissionAnswer answer) {
        System.getLogger("dev.lain.claudejb.mcp").log(System.Logger.Level.WARNING,
                "an unexpected client connected to the IDE MCP servers: {0}", client);
        answer.allow();
    }

    /**
     * Split mode: the chat page could not be shown over any route, but the servers are up.
     * Show {@code message} ({@link Contract#SPLIT_MODE_MESSAGE}) with
     * a way to copy {@code mcpServersJson}, the ready {@code {"mcpServers":{…}}} block. The
     * default logs both.
     */
    default void splitModeNotice(String message, String mcpServersJson) {
        System.getLogger("dev.lain.claudejb.mcp").log(System.Logger.Level.WARNING,
                "{0}: {1}", message, mcpServersJson);
    }

    /** Tools were withheld because their names normalise to the same name on {@code server}. */
    default void toolsWithheld(Server server, String normalizedName, List<String> tools) {
    }
}
