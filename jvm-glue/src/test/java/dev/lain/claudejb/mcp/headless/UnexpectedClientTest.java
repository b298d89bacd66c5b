package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.TestSupport;
import dev.lain.claudejb.mcp.Server;
import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.Test;

/** With --ask-unexpected, a client nobody declared is held until the person at the terminal answers. */
public class UnexpectedClientTest {
    private static final class Console {
        final PipedOutputStream keyboard = new PipedOutputStream();
        final StringWriter screen = new StringWriter();
        final Terminal terminal;

        Console() throws IOException {
            terminal = new Terminal(new PipedInputStream(keyboard), StandardCharsets.UTF_8, new PrintWriter(screen, true),
                    true, Duration.ofSeconds(30));
        }

        void answerWhenAsked(String answer) {
            Thread typist = new Thread(() -> {
                try {
                    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
                    while (!screen.toString().contains("unexpected client") && System.nanoTime() < deadline) {
                        Thread.sleep(20);
                    }
                    keyboard.write((answer + "\n").getBytes(StandardCharsets.UTF_8));
                    keyboard.flush();
                } catch (IOException | InterruptedException ignored) {
                    // The test fails on its own assertions.
                }
            }, "typist");
            typist.setDaemon(true);
            typist.start();
        }
    }

    private static HeadlessHost start(TestProject project, Console console) throws IOException {
        return HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp)
                .askUnexpectedClients(true).terminal(console.terminal));
    }

    @Test
    public void anAllowedClientIsServed() throws Exception {
        Console console = new Console();
        try (TestProject project = new TestProject(); HeadlessHost host = start(project, console)) {
            console.answerWhenAsked("y");
            try (McpClient client = TestSupport.initializedClient(host.servers().socketPath(Server.CODE))) {
                McpClient.ToolResult read = client.run("read_file", "{\"path\":\"README.md\"}");
                assertFalse(read.text(), read.isError());
            }
            assertTrue(console.screen.toString(), console.screen.toString().contains("Allow it?"));
        }
    }

    @Test
    public void aRejectedClientIsClosed() throws Exception {
        Console console = new Console();
        try (TestProject project = new TestProject(); HeadlessHost host = start(project, console)) {
            console.answerWhenAsked("n");
            try (McpClient client = McpClient.connect(host.servers().socketPath(Server.CODE))) {
                client.timeout(Duration.ofSeconds(20));
                client.initialize();
                throw new AssertionError("a rejected client was answered");
            } catch (IOException expected) {
                // Closed without a reply.
            }
        }
    }
}
