package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.AuditRecord;
import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The {@code status} domain on {@code ops}: what this host serves and how it is doing. */
final class StatusDomain {
    /** The most audit records the status shows (the latest). */
    static final int MAX_AUDIT_RECORDS = 20;

    private StatusDomain() {
    }

    static Domain domain(HeadlessHost host, ToolRunner runner) {
        return Domain.builder("status", Server.OPS)
                .description("The headless IDE MCP host itself: servers, sockets, domains, calls and recent verdicts")
                .tool(Tool.builder("status")
                        .description("The project, the runtime directory, each live server with its socket and domains, "
                                + "calls in flight and served, and the latest Security Guard verdicts")
                        .readOnly()
                        .inputSchema(Schemas.object(Schemas.required()))
                        .handler(runner.handler("status", (context, args) -> status(host)))
                        .build())
                .build();
    }

    static Map<String, Object> status(HeadlessHost host) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("project", host.project().toString());
        result.put("directory", host.servers().directory().toString());
        result.put("startedAt", host.startedAt().toString());
        result.put("uptimeSeconds", Duration.between(host.startedAt(), Instant.now()).getSeconds());
        List<Object> servers = new ArrayList<>();
        for (Server server : Server.values()) {
            if (!host.servers().liveServers().contains(server)) {
                continue;
            }
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("server", server.wireName());
            entry.put("socket", host.servers().socketPath(server).toString());
            entry.put("listening", Files.exists(host.servers().socketPath(server)));
            List<Object> domains = new ArrayList<>();
            for (Domain domain : host.domains()) {
                if (domain.server() == server) {
                    domains.add(domain.name() + " (" + domain.tools().size() + " tools)");
                }
            }
            entry.put("domains", domains);
            entry.put("callsInFlight", host.runner(server).inFlight());
            servers.add(entry);
        }
        result.put("servers", servers);
        result.put("git", host.isGitRepository());
        result.put("tasksFile", Files.exists(host.project().resolve(TaskCatalog.FILE)) ? TaskCatalog.FILE : null);
        Map<String, Object> calls = new LinkedHashMap<>();
        int inFlight = 0;
        long started = 0;
        long failed = 0;
        Map<String, Object> byTool = new TreeMap<>();
        for (Server server : Server.values()) {
            ToolRunner runner = host.runner(server);
            inFlight += runner.inFlight();
            started += runner.started();
            failed += runner.failed();
            runner.callsByTool().forEach((tool, count) -> byTool.merge(tool, count.get(),
                    (a, b) -> ((Long) a) + ((Long) b)));
        }
        calls.put("inFlight", inFlight);
        calls.put("started", started);
        calls.put("failed", failed);
        calls.put("byTool", byTool);
        result.put("calls", calls);
        List<AuditRecord> audit = host.servers().auditLog();
        List<Object> verdicts = new ArrayList<>();
        for (AuditRecord record : audit.subList(Math.max(0, audit.size() - MAX_AUDIT_RECORDS), audit.size())) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("time", record.time().toString());
            entry.put("client", record.clientName().orElse(null));
            entry.put("pid", record.clientPid().isPresent() ? record.clientPid().getAsInt() : null);
            entry.put("tool", record.server().wireName() + "/" + record.domain() + "/" + record.tool());
            entry.put("verdict", record.verdict().name().toLowerCase(java.util.Locale.ROOT));
            entry.put("reason", record.reason());
            entry.put("millis", record.duration().toMillis());
            // The names of its arguments only, never their values (as the audit log holds them).
            entry.put("arguments", String.join(" ", record.argumentNames()));
            verdicts.add(entry);
        }
        result.put("auditRecords", audit.size());
        result.put("latestVerdicts", verdicts);
        return result;
    }
}
