package dev.lain.claudejb.mcp;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** Everything the guard may judge a call by. The arguments are exactly what the handler will get. */
public final class GuardRequest {
    private final Server server;
    private final String domain;
    private final String tool;
    private final String argumentsJson;
    private final boolean readOnly;
    private final boolean destructive;
    private final int pid;
    private final String clientName;
    private final long connectionId;
    private final long callNumber;
    private final List<String> concerns;

    GuardRequest(Server server, String domain, String tool, String argumentsJson, boolean readOnly,
                 boolean destructive, int pid, String clientName, long connectionId, long callNumber,
                 List<String> concerns) {
        this.server = server;
        this.domain = domain;
        this.tool = tool;
        this.argumentsJson = argumentsJson;
        this.readOnly = readOnly;
        this.destructive = destructive;
        this.pid = pid;
        this.clientName = clientName;
        this.connectionId = connectionId;
        this.callNumber = callNumber;
        this.concerns = Collections.unmodifiableList(concerns);
    }

    public Server server() { return server; }

    public String domain() { return domain; }

    public String tool() { return tool; }

    /** The validated arguments as a JSON object. */
    public String argumentsJson() { return argumentsJson; }

    /** The arguments parsed (see {@link ToolCallContext#arguments()}). */
    @SuppressWarnings("unchecked")
    public Map<String, Object> arguments() { return (Map<String, Object>) Json.parse(argumentsJson, DecodeBudget.UNLIMITED); }

    public boolean readOnly() { return readOnly; }

    public boolean destructive() { return destructive; }

    /** The client's process id, from the kernel. */
    public OptionalInt clientPid() { return pid < 0 ? OptionalInt.empty() : OptionalInt.of(pid); }

    /** The name the client gave itself (self-reported, so not proof of anything). */
    public Optional<String> clientName() { return Optional.ofNullable(clientName); }

    /** A number unique to the client's connection within this server set. */
    public long connectionId() { return connectionId; }

    /**
     * The call's number, unique within the process: the handler's context carries the same
     * ({@link ToolCallContext#callNumber()}), so a guard can hand the handler exactly what it
     * judged — a snapshot of what the arguments name — rather than the handler reading it again.
     */
    public long callNumber() { return callNumber; }

    /**
     * What the baseline policy found wrong with the arguments: a path argument (one the tool's
     * schema marks with {@code "x-ide-mcp-path": true}) outside the project roots or at a
     * credential file. With any concern, only {@link Verdict#allowExplicitly()} runs the call;
     * {@link Verdict#allow()} is then a denial naming the concerns.
     */
    public List<String> concerns() { return concerns; }

    @Override
    public String toString() {
        return server.wireName() + "/" + domain + "/" + tool + " " + argumentsJson;
    }
}
