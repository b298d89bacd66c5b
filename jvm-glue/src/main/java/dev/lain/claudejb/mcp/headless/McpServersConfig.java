package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import dev.lain.claudejb.mcp.BridgeLauncher;
import dev.lain.claudejb.mcp.IdeMcpServers;
import dev.lain.claudejb.mcp.Server;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The ready {@code mcpServers} block for the live servers, and how a client starts the stdio
 * bridge: the native {@code ide-mcp bridge} when it is found, else the Java
 * {@code dev.lain.claudejb.mcp.StdioBridge} from this jar.
 */
final class McpServersConfig {
    static final String BRIDGE_CLASS = "dev.lain.claudejb.mcp.StdioBridge";

    private McpServersConfig() {
    }

    /** Where the classes of this host come from: the jar, or a classes directory. */
    static Path codeSource() {
        try {
            return Paths.get(HeadlessHost.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The native bridge: {@code explicit} if given, else {@code $IDE_MCP_BIN}, else
     * {@code ide-mcp} next to the jar, else {@code target/release/ide-mcp} in a directory above
     * it (a source checkout); null when none is executable.
     */
    static Path findNativeBridge(Path explicit) {
        if (explicit != null) {
            return Files.isExecutable(explicit) ? explicit.toAbsolutePath() : null;
        }
        String fromEnvironment = System.getenv("IDE_MCP_BIN");
        if (fromEnvironment != null && !fromEnvironment.isEmpty() && Files.isExecutable(Paths.get(fromEnvironment))) {
            return Paths.get(fromEnvironment).toAbsolutePath();
        }
        Path source = codeSource();
        if (source == null) {
            return null;
        }
        Path directory = Files.isDirectory(source) ? source : source.getParent();
        if (directory != null && Files.isExecutable(directory.resolve("ide-mcp"))) {
            return directory.resolve("ide-mcp");
        }
        for (Path up = directory; up != null; up = up.getParent()) {
            Path candidate = up.resolve("target").resolve("release").resolve("ide-mcp");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** The command (program and arguments, before the socket) that starts a bridge. */
    static List<String> bridgeCommand(Path nativeBridge) {
        List<String> command = new ArrayList<>();
        if (nativeBridge != null) {
            command.add(nativeBridge.toString());
            command.add("bridge");
        } else {
            command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
            command.add("-cp");
            Path source = codeSource();
            command.add(source != null ? source.toString() : System.getProperty("java.class.path", "").split(File.pathSeparator)[0]);
            command.add(BRIDGE_CLASS);
        }
        return command;
    }

    /**
     * {@code {"mcpServers": {"code": {"type": "stdio", "command": …, "args": [… socket]}, …}}}
     * (JSON text) for every live server: the library's block for the native bridge, or for the
     * Java bridge when this jar sits in a plugin layout ({@code <plugin>/lib/*.jar}); else, from
     * a build directory, the same entries with this jar (or classes directory) as the class path.
     */
    static String block(IdeMcpServers servers, Path nativeBridge) {
        if (nativeBridge != null) {
            return servers.mcpServersConfig(BridgeLauncher.nativeExecutable(nativeBridge));
        }
        Path source = codeSource();
        Path parent = source == null ? null : source.getParent();
        if (source != null && Files.isRegularFile(source) && parent != null && parent.getFileName() != null
                && parent.getFileName().toString().equals("lib") && parent.getParent() != null) {
            return servers.mcpServersConfig(BridgeLauncher.currentJava(parent.getParent()));
        }
        List<String> command = bridgeCommand(null);
        Map<String, Object> entries = new LinkedHashMap<>();
        for (Server server : Server.values()) {
            if (!servers.liveServers().contains(server)) {
                continue;
            }
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("type", "stdio");
            entry.put("command", command.get(0));
            List<Object> args = new ArrayList<>(command.subList(1, command.size()));
            args.add(servers.socketPath(server).toString());
            entry.put("args", args);
            entries.put(server.wireName(), entry);
        }
        Map<String, Object> block = new LinkedHashMap<>();
        block.put("mcpServers", entries);
        return Json.write(block);
    }
}
