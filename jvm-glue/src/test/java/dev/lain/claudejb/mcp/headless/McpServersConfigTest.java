package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.Json;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/** The setup text for each agent, built from the {@code mcpServers} block. */
public class McpServersConfigTest {
    private static final String BLOCK = "{\"mcpServers\": {"
            + "\"code\": {\"type\": \"stdio\", \"command\": \"/opt/ide mcp/ide-mcp\", \"args\": [\"bridge\", \"--project\", \"/home/me/demo\", \"code\"]},"
            + "\"ops\": {\"type\": \"stdio\", \"command\": \"/opt/ide-mcp\", \"args\": [\"bridge\", \"/tmp/x/ops.sock\"]}}}";

    @SuppressWarnings("unchecked")
    private static String setup(String project) {
        return McpServersConfig.clientSetup((Map<String, Object>) Json.parse(BLOCK), Paths.get(project));
    }

    @Test
    public void serverNamesCarryTheProjectInLettersDigitsAndHyphens() {
        assertEquals("ide-my-app-code", McpServersConfig.agentServerName(Paths.get("/home/me/My_App"), "code"));
        assertEquals("ide-ops", McpServersConfig.agentServerName(Paths.get("/home/me/__"), "ops"));
        assertEquals("ide-ops", McpServersConfig.agentServerName(Paths.get("/"), "ops"));
        String longName = McpServersConfig.agentServerName(Paths.get("/p/a-very-long-project-name-indeed-it-is"), "vcs");
        assertEquals("ide-a-very-long-project-name-vcs", longName);
    }

    @Test
    public void claudeCodeGetsOneRemoveAndAddLinePerServerInShellWords() {
        List<String> lines = new ArrayList<>();
        for (String line : setup("/home/me/demo").split("\n")) {
            if (line.startsWith("claude ")) {
                lines.add(line);
            }
        }
        assertEquals(List.of(
                "claude mcp remove --scope user ide-demo-code 2>/dev/null; claude mcp add --transport stdio --scope user"
                        + " ide-demo-code -- '/opt/ide mcp/ide-mcp' bridge --project /home/me/demo code",
                "claude mcp remove --scope user ide-demo-ops 2>/dev/null; claude mcp add --transport stdio --scope user"
                        + " ide-demo-ops -- /opt/ide-mcp bridge /tmp/x/ops.sock"), lines);
        assertEquals("'it'\\''s'", McpServersConfig.shellWord("it's"));
    }

    @Test
    public void geminiCliGetsATrustedSettingsBlockAfterTheComments() {
        String text = setup("/home/me/demo");
        String gemini = text.substring(text.indexOf("# Gemini CLI"));
        assertTrue(gemini, gemini.contains("~/.gemini/settings.json"));
        assertTrue(gemini, gemini.contains("in ~/.gemini/trustedFolders.json: \"/home/me/demo\": \"TRUST_FOLDER\")."));
        Object parsed = Json.parse(gemini.substring(gemini.indexOf('{')));
        Map<?, ?> servers = (Map<?, ?>) ((Map<?, ?>) parsed).get("mcpServers");
        assertEquals(List.of("ide-demo-code", "ide-demo-ops"), new ArrayList<>(servers.keySet()));
        Map<?, ?> code = (Map<?, ?>) servers.get("ide-demo-code");
        assertEquals("/opt/ide mcp/ide-mcp", code.get("command"));
        assertEquals(List.of("bridge", "--project", "/home/me/demo", "code"), code.get("args"));
        assertEquals(Boolean.TRUE, code.get("trust"));
        assertTrue(text, text.startsWith("\n# Claude Code") && text.endsWith("}\n"));
    }
}
