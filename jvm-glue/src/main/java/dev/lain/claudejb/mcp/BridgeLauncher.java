package dev.lain.claudejb.mcp;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How a client starts the stdio bridge to reach a server socket, for the {@code mcpServers}
 * block ({@link IdeMcpServers#mcpServersConfig}).
 */
public final class BridgeLauncher {
    private final Map<String, Object> json;

    private BridgeLauncher(String kind, Map<String, Object> fields) {
        Map<String, Object> object = new LinkedHashMap<>();
        object.put(kind, fields);
        this.json = object;
    }

    /**
     * The IDE's own Java runs {@code dev.lain.claudejb.mcp.StdioBridge} from the plugin's jars:
     * {@code <javaHome>/bin/java -cp <pluginDir>/lib/* dev.lain.claudejb.mcp.StdioBridge <socket>}.
     */
    public static BridgeLauncher java(Path javaHome, Path pluginDir) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("javaHome", Objects.requireNonNull(javaHome, "javaHome").toString());
        fields.put("pluginDir", Objects.requireNonNull(pluginDir, "pluginDir").toString());
        return new BridgeLauncher("java", fields);
    }

    /** The Java running this code, with {@code pluginDir}'s jars. */
    public static BridgeLauncher currentJava(Path pluginDir) {
        return java(Path.of(System.getProperty("java.home")), pluginDir);
    }

    /** The native executable shipped with the plugin: {@code <executable> bridge <socket>}. */
    public static BridgeLauncher nativeExecutable(Path executable) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("executable", Objects.requireNonNull(executable, "executable").toString());
        return new BridgeLauncher("native", fields);
    }

    String toJson() {
        return Json.write(json);
    }

    @Override
    public String toString() {
        return toJson();
    }
}
