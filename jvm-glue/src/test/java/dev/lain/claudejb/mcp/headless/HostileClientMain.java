package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import dev.lain.claudejb.mcp.McpClient;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A client run as its own process by {@link PseudoTerminalTest}: {@code <socket> <anything…>} (the
 * rest only makes its command line hostile). It introduces itself with a hostile name, runs the
 * task with a hostile name, and prints the result.
 */
public final class HostileClientMain {
    /** Cursor home and clear screen, a window title, a C1 CSI, a right-to-left override, an isolate. */
    static final String CLIENT_NAME = "friendly\u001b[H\u001b[2J\u001b]0;owned\u0007\u009b31m\u202eevil\u2066";
    static final String TASK_NAME = "build\u001b[8mhidden\u001b[0m\u200f\u061c";
    /** On the command line: what an argument of a hostile process could hold (ASCII only, argv has no charset). */
    static final String COMMAND_LINE_ARGUMENT = "\u001b[1A\u001b[2Kallow-me\r";

    private HostileClientMain() {
    }

    public static void main(String[] args) throws Exception {
        try (McpClient client = McpClient.connect(Paths.get(args[0])).timeout(Duration.ofSeconds(60))) {
            Map<String, Object> params = new LinkedHashMap<>();
            params.put("protocolVersion", "2025-11-25");
            params.put("capabilities", new LinkedHashMap<>());
            Map<String, Object> clientInfo = new LinkedHashMap<>();
            clientInfo.put("name", CLIENT_NAME);
            clientInfo.put("version", "1");
            params.put("clientInfo", clientInfo);
            client.request("initialize", params);
            client.notify("notifications/initialized", new LinkedHashMap<>());
            Map<String, Object> arguments = new LinkedHashMap<>();
            arguments.put("name", TASK_NAME);
            McpClient.ToolResult result = client.run("run_task", Json.write(arguments));
            System.out.println((result.isError() ? "ERROR " : "OK ") + result.text());
        }
    }
}
