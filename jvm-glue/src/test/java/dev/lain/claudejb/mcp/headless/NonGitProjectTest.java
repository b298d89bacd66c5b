package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.TestSupport;
import dev.lain.claudejb.mcp.Server;
import java.nio.file.Files;
import java.util.EnumSet;
import org.junit.Test;

/** A project that is not a git repository: no git domain, so no vcs socket; files are walked. */
public class NonGitProjectTest {
    @Test
    public void aProjectWithoutGitHasNoVcsSocket() throws Exception {
        try (TestProject project = new TestProject();
             HeadlessHost host = HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp))) {
            assertFalse(host.isGitRepository());
            assertEquals(EnumSet.of(Server.CODE, Server.RUN, Server.OPS), host.servers().liveServers());
            assertFalse(Files.exists(host.directory().resolve(Server.VCS.socketFileName())));
            assertTrue(Files.exists(host.directory().resolve(Server.CODE.socketFileName())));
            assertFalse(((java.util.Map<?, ?>) host.mcpServers().get("mcpServers")).containsKey("vcs"));
            try (McpClient code = TestSupport.initializedClient(host.servers().socketPath(Server.CODE))) {
                McpClient.ToolResult found = code.run("find_files", "{\"glob\":\"*.java\"}");
                assertFalse(found.text(), found.isError());
                assertTrue(found.text(), found.text().contains("src/util/Strings.java"));
                McpClient.ToolResult todo = code.run("search_text", "{\"pattern\":\"TODO\"}");
                assertFalse(todo.text(), todo.isError());
                assertTrue(todo.text(), todo.text().contains("src/Main.java,10"));
                assertFalse("the walk follows no link out: " + todo.text(), todo.text().contains("secret"));
            }
        }
    }
}
