package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.Contract;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.TestSupport;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** {@code HeadlessHost.main} as a child process: the ready line first, the block, the agents' setup; stdin EOF stops it cleanly. */
public class HeadlessHostProcessTest {
    private static Process startHost(ProcessBuilder.Redirect stderr, String... args) throws Exception {
        List<String> options = new ArrayList<>();
        String library = System.getProperty("ide.mcp.native.library");
        if (library != null) {
            options.add("-Dide.mcp.native.library=" + library);
        }
        List<String> command = TestSupport.javaCommand(TestSupport.mainClasspath(), options,
                HeadlessHost.class.getName(), args);
        return new ProcessBuilder(command).redirectError(stderr).start();
    }

    @Test
    @SuppressWarnings("unchecked")
    public void theHostPrintsTheReadyLineAndStopsWhenStdinEnds() throws Exception {
        try (TestProject project = new TestProject().withGit()) {
            Process host = startHost(ProcessBuilder.Redirect.INHERIT, "--log-level", "error", "--base", project.temp.toString(), "--stop-on-stdin-eof", project.root.toString());
            BufferedReader stdout = new BufferedReader(new InputStreamReader(host.getInputStream(), StandardCharsets.UTF_8));
            Path directory = TestSupport.readyDirectory(stdout);
            assertTrue(directory.toString(), directory.startsWith(project.temp.resolve(Contract.SHARED_DIR_NAME)));
            StringBuilder block = new StringBuilder();
            String line;
            while ((line = stdout.readLine()) != null) {
                block.append(line).append('\n');
                if (line.equals("}")) {
                    break;
                }
            }
            Map<?, ?> servers = (Map<?, ?>) ((Map<?, ?>) Json.parse(block.toString())).get("mcpServers");
            assertEquals(4, servers.size());
            for (Server server : Server.values()) {
                assertTrue(server.wireName(), Files.exists(directory.resolve(server.socketFileName())));
            }
            try (McpClient client = TestSupport.initializedClient(directory.resolve(Server.CODE.socketFileName()))) {
                McpClient.ToolResult read = client.run("read_file", "{\"path\":\"README.md\"}");
                assertFalse(read.text(), read.isError());
                assertTrue(read.text(), read.text().contains("A demo project."));
            }
            host.getOutputStream().close();
            assertTrue("the host stops when stdin ends", host.waitFor(20, TimeUnit.SECONDS));
            assertEquals(0, host.exitValue());
            // Then the setup for each agent, and nothing else.
            List<String> rest = new ArrayList<>();
            while ((line = stdout.readLine()) != null) {
                rest.add(line);
            }
            String expected = McpServersConfig.clientSetup((Map<String, Object>) Json.parse(block.toString()), project.root);
            assertEquals(expected, String.join("\n", rest) + "\n");
            assertTrue(expected, expected.contains("claude mcp add --transport stdio --scope user ide-project-vcs -- "));
            assertFalse(directory + " was left behind", Files.exists(directory));
        }
    }

    @Test
    public void badArgumentsExitWithUsage() throws Exception {
        Process host = startHost(ProcessBuilder.Redirect.DISCARD, "--no-such-option");
        host.getOutputStream().close();
        assertTrue(host.waitFor(20, TimeUnit.SECONDS));
        assertEquals(2, host.exitValue());
    }

    @Test
    public void argumentsAreParsed() {
        HeadlessHost.Config config = HeadlessHost.parseArguments(new String[] {"--base", "/tmp", "--ask-unexpected",
                "--stop-on-stdin-eof", "--diagnostics", "."});
        assertEquals(Paths.get("/tmp"), config.bases.get(0));
        assertTrue(config.askUnexpected);
        assertTrue(config.stopOnStdinEof);
        assertTrue(config.diagnostics);
        assertEquals(Paths.get("."), config.project);
        assertNull(HeadlessHost.parseArguments(new String[] {"--help"}));
        try {
            HeadlessHost.parseArguments(new String[] {"/definitely/not/here"});
            throw new AssertionError("a missing directory was accepted");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("not a directory"));
        }
    }
}
