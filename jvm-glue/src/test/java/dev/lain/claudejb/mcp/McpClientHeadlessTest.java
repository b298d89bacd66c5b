package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** A Java domain served over a real socket, driven by the reference client. */
public class McpClientHeadlessTest {
    private Path temp;
    private Path project;
    private IdeMcpServers servers;

    @Before
    public void start() throws Exception {
        temp = Files.createTempDirectory("mcp-headless");
        project = Files.createDirectories(temp.resolve("project"));
        Files.write(project.resolve("hello.txt"), "hello from the project\n".getBytes(StandardCharsets.UTF_8));
        servers = IdeMcpServers.start(IdeMcpServers.Options.builder()
                .base(temp)
                .guard(SecurityGuard.allowAll())
                .build());
        servers.registerDomain(TestDomains.files(project));
    }

    @After
    public void stop() throws Exception {
        servers.close();
        TestDomains.deleteRecursively(temp);
    }

    @Test
    public void aJavaDomainIsServedOverTheSocket() throws Exception {
        assertEquals(EnumSet.of(Server.CODE), servers.liveServers());
        Path socket = servers.socketPath(Server.CODE);
        assertTrue(Files.exists(socket));
        try (McpClient client = McpClient.connect(socket)) {
            Map<String, Object> result = client.initialize();
            assertEquals(McpClient.PROTOCOL_VERSION, result.get("protocolVersion"));
            String domains = client.domains();
            assertTrue(domains, domains.contains("files"));
            String tools = client.tools("files");
            assertTrue(tools, tools.contains("read_file"));
            McpClient.ToolResult read = client.run("read_file", "{\"path\":\"hello.txt\"}");
            assertFalse(read.text(), read.isError());
            assertTrue(read.text(), read.text().contains("hello from the project"));
        }
    }

    @Test
    public void aMissingFileIsAnErrorResultTheModelCanActOn() throws Exception {
        try (McpClient client = McpClient.connect(servers.socketPath(Server.CODE))) {
            client.initialize();
            McpClient.ToolResult read = client.run("read_file", "{\"path\":\"nope.txt\"}");
            assertTrue(read.isError());
            assertTrue(read.text(), read.text().contains("nope.txt"));
        }
    }

    @Test
    public void stoppingRemovesTheDirectory() throws Exception {
        Path directory = servers.directory();
        assertTrue(Files.isDirectory(directory));
        servers.close();
        assertFalse(Files.exists(directory));
        servers.close(); // idempotent
    }
}
