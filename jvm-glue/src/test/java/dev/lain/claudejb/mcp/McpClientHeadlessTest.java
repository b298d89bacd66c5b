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
        TestSupport.deleteRecursively(temp);
    }

    @Test
    public void aJavaDomainIsServedOverFramesByDefault() throws Exception {
        assertEquals(EnumSet.of(Server.CODE), servers.liveServers());
        Path socket = servers.socketPath(Server.CODE);
        assertTrue(Files.exists(socket));
        try (McpClient client = McpClient.connect(socket)) {
            assertEquals(McpClient.Wire.FRAMES, client.wire());
            roundTrip(client);
        }
    }

    @Test
    public void andOverNdjsonOnRequest() throws Exception {
        try (McpClient client = McpClient.connect(servers.socketPath(Server.CODE), McpClient.Wire.NDJSON)) {
            roundTrip(client);
        }
    }

    /**
     * The reader thread sits blocked in the channel's read while this thread writes: with the
     * streams of {@code Channels.newInputStream/newOutputStream} that deadlocks on JDK 17.
     */
    @Test
    public void writesGetThroughWhileTheReaderIsBlocked() throws Exception {
        java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch> latch =
                new java.util.concurrent.atomic.AtomicReference<>();
        servers.registerDomain(Domain.builder("slow", Server.CODE).description("Waits")
                .tool(Tool.builder("wait").description("Waits for the test").readOnly()
                        .handler(context -> {
                            java.util.concurrent.CountDownLatch release = latch.get();
                            new Thread(() -> {
                            try {
                                release.await();
                                context.completeText("released");
                            } catch (InterruptedException e) {
                                context.fail("interrupted");
                            }
                            }).start();
                        }).build())
                .build());
        for (McpClient.Wire wire : McpClient.Wire.values()) {
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            latch.set(release);
            try (McpClient client = McpClient.connect(servers.socketPath(Server.CODE), wire)
                    .timeout(java.time.Duration.ofSeconds(10))) {
                client.initialize();
                McpClient.PendingRun waiting = client.startRun("wait", "{}");
                Thread.sleep(200); // the reader is now blocked in read()
                for (int i = 0; i < 20; i++) {
                    client.ping();
                }
                assertFalse(waiting.result().isDone());
                release.countDown();
                assertEquals("released", waiting.result().get(10, java.util.concurrent.TimeUnit.SECONDS).text());
            }
        }
    }

    private void roundTrip(McpClient client) throws Exception {
        {
            Map<String, Object> result = client.initialize();
            assertEquals(McpClient.PROTOCOL_VERSION, result.get("protocolVersion"));
            String domains = client.domains();
            assertTrue(domains, domains.contains("files"));
            String tools = client.tools("files");
            assertTrue(tools, tools.contains("read_file"));
            McpClient.ToolResult read = client.run("read_file", "{\"path\":\"hello.txt\"}");
            assertFalse(read.text(), read.isError());
            assertTrue(read.text(), read.text().contains("hello from the project"));
            // Awkward text both ways: quotes, delimiters, newlines, a leading hyphen, non-BMP.
            String awkward = "- a,b: \"c\"\n\t#d [e] {f} \uD83D\uDE80 007 true";
            Files.write(project.resolve("awkward name, [1].txt"), awkward.getBytes(StandardCharsets.UTF_8));
            McpClient.ToolResult back = client.run("read_file", "{\"path\":\"awkward name, [1].txt\"}");
            assertFalse(back.text(), back.isError());
            // The result text is the TOON of the handler's result: here one string, quoted.
            assertEquals(awkward, Toon.decode(back.text()));
        }
    }

    @Test
    public void aMissingFileIsAnErrorResultTheModelCanActOn() throws Exception {
        try (McpClient client = TestSupport.initializedClient(servers.socketPath(Server.CODE))) {
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
