package dev.lain.claudejb.mcp;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One verdict of the Security Guard checkpoint, as {@link IdeMcpServers#auditLog()} returns it:
 * who asked, which tool, what was decided, why, and how long deciding took. Never the token and
 * never an argument's value.
 */
public final class AuditRecord {
    /** What was decided. */
    public enum Decision {
        /** The call ran. */
        ALLOWED,
        /** The call was refused (by the baseline policy, the guard, or a person). */
        DENIED
    }

    private final Instant time;
    private final int clientPid;
    private final String clientName;
    private final long connectionId;
    private final Server server;
    private final String domain;
    private final String tool;
    private final List<String> argumentNames;
    private final Decision verdict;
    private final String reason;
    private final Duration duration;

    private AuditRecord(Map<String, Object> json) {
        this.time = Instant.ofEpochMilli(number(json.get("atMillis")).longValueExact());
        Object pid = json.get("clientPid");
        this.clientPid = pid == null ? -1 : number(pid).intValueExact();
        this.clientName = (String) json.get("clientName");
        this.connectionId = number(json.get("connectionId")).longValueExact();
        this.server = Server.fromWireName((String) json.get("server"));
        this.domain = (String) json.get("domain");
        this.tool = (String) json.get("tool");
        List<String> names = new ArrayList<>();
        for (Object name : (List<?>) json.get("arguments")) {
            names.add((String) name);
        }
        this.argumentNames = Collections.unmodifiableList(names);
        this.verdict = Decision.valueOf((String) json.get("verdict"));
        this.reason = (String) json.get("reason");
        this.duration = Duration.ofNanos(number(json.get("durationNanos")).longValueExact());
    }

    private static BigDecimal number(Object value) {
        return (BigDecimal) value;
    }

    @SuppressWarnings("unchecked")
    static AuditRecord fromJson(Object json) {
        return new AuditRecord((Map<String, Object>) json);
    }

    /** When the verdict was reached. */
    public Instant time() { return time; }

    /** The client's process id, from the kernel. */
    public OptionalInt clientPid() { return clientPid < 0 ? OptionalInt.empty() : OptionalInt.of(clientPid); }

    /** The name the client gave itself (self-reported). */
    public Optional<String> clientName() { return Optional.ofNullable(clientName); }

    /** A number unique to the client's connection within the server set. */
    public long connectionId() { return connectionId; }

    public Server server() { return server; }

    public String domain() { return domain; }

    public String tool() { return tool; }

    /** The names of the arguments the call gave, as the tool's schema declares them (never their values). */
    public List<String> argumentNames() { return argumentNames; }

    public Decision verdict() { return verdict; }

    /**
     * Who decided and why, in words that hold no argument value ({@code allowed by the Security
     * Guard}, {@code confirmed by the user}, {@code denied by the Security Guard}, {@code denied by
     * the baseline policy: `path` is outside the project; …}). The guard's own reason goes to the
     * model, not here: it may quote the arguments.
     */
    public String reason() { return reason; }

    /** How long deciding took, a person's confirmation included. */
    public Duration duration() { return duration; }

    @Override
    public String toString() {
        return time + " " + server.wireName() + "/" + domain + "/" + tool + argumentNames + " " + verdict + " (" + reason + ")"
                + " connection " + connectionId + (clientPid < 0 ? "" : " pid " + clientPid);
    }
}
