package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code diagnostics} domain of {@code ide-mcp testserver}, in Java ({@code echo}, {@code sleep},
 * {@code fail}, {@code big}): served with {@code --diagnostics}, so protocol test suites written
 * against the test server can drive this host too.
 */
final class DiagnosticsDomain {
    static final long MAX_BIG_BYTES = 64L * 1024 * 1024;

    private DiagnosticsDomain() {
    }

    static Domain domain(Server server, ToolRunner runner) {
        return Domain.builder("diagnostics", server)
                .description("Tools for checking the connection: echo, sleep, fail, big")
                .tool(Tool.builder("echo")
                        .description("Answers with the value it was given")
                        .readOnly()
                        .inputSchema("{\"type\":\"object\",\"properties\":{\"value\":{\"description\":\"Any JSON value\"}},"
                                + "\"required\":[\"value\"],\"additionalProperties\":false}")
                        .handler(runner.handler("echo", (context, args) -> {
                            Map<String, Object> result = new LinkedHashMap<>();
                            result.put("value", context.arguments().get("value"));
                            return result;
                        }))
                        .build())
                .tool(Tool.builder("sleep")
                        .description("Waits `ms` milliseconds, reporting progress; stops when cancelled")
                        .readOnly()
                        .inputSchema("{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\",\"minimum\":0,"
                                + "\"maximum\":3600000,\"description\":\"How long to wait\"}},\"required\":[\"ms\"],"
                                + "\"additionalProperties\":false}")
                        .handler(runner.handler("sleep", (context, args) -> {
                            int ms = args.integer("ms", 0, 0, 3_600_000);
                            Thread.sleep(ms);
                            Map<String, Object> result = new LinkedHashMap<>();
                            result.put("slept", ms);
                            return result;
                        }))
                        .build())
                .tool(Tool.builder("fail")
                        .description("Fails with the given message")
                        .readOnly()
                        .inputSchema("{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\","
                                + "\"description\":\"The failure message\"}},\"required\":[\"message\"],\"additionalProperties\":false}")
                        .handler(runner.handler("fail", (context, args) -> {
                            String message = args.string("message");
                            throw new ToolFailure(message == null ? "failed" : message);
                        }))
                        .build())
                .tool(Tool.builder("big")
                        .description("Answers a string of `bytes` bytes")
                        .readOnly()
                        .inputSchema("{\"type\":\"object\",\"properties\":{\"bytes\":{\"type\":\"integer\",\"minimum\":0,"
                                + "\"maximum\":" + MAX_BIG_BYTES + ",\"description\":\"The length of the answer\"}},"
                                + "\"required\":[\"bytes\"],\"additionalProperties\":false}")
                        .handler(runner.handler("big", (context, args) -> "x".repeat(args.integer("bytes", 0, 0,
                                (int) MAX_BIG_BYTES))))
                        .build())
                .build();
    }
}
