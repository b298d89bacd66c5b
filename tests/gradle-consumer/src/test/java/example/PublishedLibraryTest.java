package example;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.IdeMcpServers;
import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.SecurityGuard;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * The "Gradle integration test" use case, end to end, against the published artifact: start the
 * servers (the library loads itself from the jar), register a tool, drive it with the reference
 * client over the real socket.
 */
public class PublishedLibraryTest {
    @Test
    public void aToolRegisteredThroughThePublishedJarAnswersTheReferenceClient() throws Exception {
        Path temp = Files.createTempDirectory("ide-mcp-consumer");
        try (IdeMcpServers servers = IdeMcpServers.start(IdeMcpServers.Options.builder()
                .base(temp)
                .guard(SecurityGuard.allowAll())
                .build())) {
            servers.registerDomain(Domain.builder("greetings", Server.CODE)
                    .description("Says hello")
                    .tool(Tool.builder("greet")
                            .description("Greets someone")
                            .readOnly()
                            .inputSchema("{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
                                    + "\"required\":[\"name\"]}")
                            .handler(ctx -> ctx.completeText("hello, " + ctx.stringArgument("name")))
                            .build())
                    .build());
            try (McpClient client = McpClient.connect(servers.socketPath(Server.CODE))) {
                client.initialize();
                assertTrue(client.domains(), client.domains().contains("greetings"));
                assertTrue(client.tools("greetings").contains("greet"));
                McpClient.ToolResult result = client.run("greet", "{\"name\":\"plugin\"}");
                assertFalse(result.text(), result.isError());
                assertTrue(result.text(), result.text().contains("hello, plugin"));
                McpClient.ToolResult invalid = client.run("greet", "{}");
                assertTrue(invalid.text(), invalid.isError());
            }
            assertEquals(temp.toRealPath(), servers.directory().getParent().getParent().toRealPath());
        } finally {
            try (Stream<Path> paths = Files.walk(temp)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }
}
