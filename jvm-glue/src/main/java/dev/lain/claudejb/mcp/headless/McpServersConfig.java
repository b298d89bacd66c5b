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
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The ready {@code mcpServers} block for the live servers, how a client starts the stdio
 * bridge (the native {@code ide-mcp bridge} when it is found, else the Java
 * {@code dev.lain.claudejb.mcp.StdioBridge} from this jar), and the setup text for each agent
 * that the host prints after the block ({@link #clientSetup}).
 */
final class McpServersConfig {
    static final String BRIDGE_CLASS = "dev.lain.claudejb.mcp.StdioBridge";

    /** Characters a shell word may hold unquoted. */
    private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_./:=@%+,-]+");
    /** The longest project part of a server name, so tool names stay short. */
    private static final int MAX_PROJECT_PART = 24;

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
     * {@code ide-mcp} ({@code ide-mcp.exe} on Windows) next to the jar, else
     * {@code target/release/ide-mcp} in a directory above it (a source checkout); null when none
     * is executable.
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
        String program = System.getProperty("os.name", "").startsWith("Windows") ? "ide-mcp.exe" : "ide-mcp";
        if (directory != null && Files.isExecutable(directory.resolve(program))) {
            return directory.resolve(program);
        }
        for (Path up = directory; up != null; up = up.getParent()) {
            Path candidate = up.resolve("target").resolve("release").resolve(program);
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
     * {@code {"mcpServers": {"code": {"type": "stdio", "command": …, "args": […]}, …}}}
     * (JSON text) for every live server: the library's block for the native bridge (the stable
     * {@code ide-mcp bridge --project <project> <server>}, which finds the set again at every
     * start through the per-user registry of live server sets), or for the Java bridge (the
     * socket, whose path changes with every start) when
     * this jar sits in a plugin layout ({@code <plugin>/lib/*.jar}); else, from
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

    /**
     * The name an agent knows {@code server} of {@code project} by: {@code ide-<project>-<server>},
     * the project's directory name cut to letters, digits and hyphens (Claude Code allows
     * letters, digits, hyphens and underscores; Gemini CLI splits tool names on underscores), so
     * two projects served at once do not collide.
     */
    static String agentServerName(Path project, String server) {
        Path name = project == null ? null : project.getFileName();
        String part = name == null ? "" : name.toString().toLowerCase(Locale.ROOT)
                .replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        if (part.length() > MAX_PROJECT_PART) {
            part = part.substring(0, MAX_PROJECT_PART).replaceAll("-+$", "");
        }
        return part.isEmpty() ? "ide-" + server : "ide-" + part + "-" + server;
    }

    /**
     * What each agent needs, after the plain {@code mcpServers} block: a {@code claude mcp add}
     * line per server for Claude Code (user scope, which asks no approval; a {@code remove}
     * first, so that running them again replaces the entries), then a {@code mcpServers} block
     * for Gemini CLI's {@code ~/.gemini/settings.json} with {@code trust: true}, after how to
     * trust the project's folder (without which Gemini CLI connects none of them). {@code block}
     * is the value of {@link #block}; lines starting with {@code #} say what each part is for.
     */
    @SuppressWarnings("unchecked")
    static String clientSetup(Map<String, Object> block, Path project) {
        Map<String, Object> servers = (Map<String, Object>) block.get("mcpServers");
        StringBuilder claude = new StringBuilder();
        Map<String, Object> gemini = new LinkedHashMap<>();
        for (Map.Entry<String, Object> server : servers.entrySet()) {
            Map<String, Object> entry = (Map<String, Object>) server.getValue();
            String name = agentServerName(project, server.getKey());
            List<String> command = new ArrayList<>();
            command.add((String) entry.get("command"));
            for (Object arg : (List<Object>) entry.get("args")) {
                command.add((String) arg);
            }
            claude.append("claude mcp remove --scope user ").append(name).append(" 2>/dev/null; ")
                    .append("claude mcp add --transport stdio --scope user ").append(name).append(" --");
            for (String word : command) {
                claude.append(' ').append(shellWord(word));
            }
            claude.append('\n');
            Map<String, Object> settings = new LinkedHashMap<>();
            settings.put("command", entry.get("command"));
            settings.put("args", entry.get("args"));
            settings.put("trust", Boolean.TRUE);
            gemini.put(name, settings);
        }
        Map<String, Object> geminiBlock = new LinkedHashMap<>();
        geminiBlock.put("mcpServers", gemini);
        return String.join("\n",
                "",
                "# Claude Code: run these lines (user scope: no approval needed; a pasted .mcp.json",
                "# stays \"Pending approval\" until the project is trusted). Check with `claude mcp list`.",
                claude.toString(),
                "# Gemini CLI: merge into \"mcpServers\" in ~/.gemini/settings.json (trust: true skips",
                "# Gemini's confirmation of each call; the IDE's guard still judges every one). In an untrusted",
                "# folder Gemini CLI connects no MCP server, not even these: trust the project (the trust",
                "# dialog, /permissions, or in ~/.gemini/trustedFolders.json: "
                        + Json.quote(project == null ? "" : project.toString()) + ": \"TRUST_FOLDER\").",
                Json.writePretty(geminiBlock),
                "");
    }

    /** {@code word} as one POSIX shell word. */
    static String shellWord(String word) {
        if (SHELL_SAFE.matcher(word).matches()) {
            return word;
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }
}
