package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.AdmissionAnswer;
import dev.lain.claudejb.mcp.Confirmation;
import dev.lain.claudejb.mcp.GuardRequest;
import dev.lain.claudejb.mcp.Host;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.UnexpectedClient;
import java.util.List;

/**
 * The headless host's {@link Host}: questions go to the terminal when there is one (and are
 * denied when there is none); unexpected clients are logged and admitted, or, with
 * {@code --ask-unexpected}, asked about on the terminal.
 */
final class HeadlessHostCallbacks implements Host {
    private final Terminal terminal;
    private final boolean askUnexpected;

    HeadlessHostCallbacks(Terminal terminal, boolean askUnexpected) {
        this.terminal = terminal;
        this.askUnexpected = askUnexpected;
    }

    @Override
    public boolean canConfirm() {
        return terminal != null && terminal.interactive();
    }

    @Override
    public void confirm(GuardRequest request, String prompt, Confirmation confirmation) {
        if (!canConfirm()) {
            confirmation.decline();
            return;
        }
        String client = request.clientName().orElse("a client")
                + (request.clientPid().isPresent() ? " (pid " + request.clientPid().getAsInt() + ")" : "");
        terminal.ask(client + " asks: " + prompt).thenAccept(yes -> {
            HostLog.info((yes ? "allowed: " : "declined: ") + request.domain() + "/" + request.tool());
            if (yes) {
                confirmation.allow();
            } else {
                confirmation.decline();
            }
        });
    }

    @Override
    public void toolsWithheld(Server server, String normalizedName, List<String> tools) {
        HostLog.warn("tools withheld on " + server.wireName() + " because their names collide as `" + normalizedName
                + "`: " + tools);
    }

    /**
     * A client nobody declared: logged, then admitted; with {@code --ask-unexpected} the person
     * at the terminal decides, and with no terminal it is rejected.
     */
    @Override
    public void unexpectedClient(UnexpectedClient client, AdmissionAnswer answer) {
        if (!askUnexpected) {
            HostLog.warn("an unexpected client connected, admitted (start with --ask-unexpected to be asked): " + client);
            answer.allow();
            return;
        }
        if (!canConfirm()) {
            HostLog.warn("an unexpected client connected, rejected (--ask-unexpected, and no terminal to ask on): " + client);
            answer.reject();
            return;
        }
        terminal.ask("An unexpected client wants to use the IDE MCP servers: " + client + ". Allow it?").thenAccept(yes -> {
            HostLog.info((yes ? "admitted: " : "rejected: ") + client);
            if (yes) {
                answer.allow();
            } else {
                answer.reject();
            }
        });
    }

    @Override
    public void splitModeNotice(String message, String mcpServersJson) {
        HostLog.warn(message + ": " + mcpServersJson);
    }
}
