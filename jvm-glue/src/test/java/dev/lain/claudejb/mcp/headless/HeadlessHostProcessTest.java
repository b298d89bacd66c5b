package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
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
        String classpath = System.getProperty("ide.mcp.test.classpath");
        assertTrue("the build passes ide.mcp.test.classpath", classpath != null && !classpath.isEmpty());
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        String library = System.getProperty("ide.mcp.native.library");
        if (library != null) {
            command.add("-Dide.mcp.native.library=" + library);
        }
        command.add("-cp");
        command.add(classpath);
        command.add(HeadlessHost.class.getName());
        command.addAll(java.util.Arrays.asList(args));
        return new ProcessBuilder(command).redirectError(stderr).start();
    }

    @Test
    @SuppressWarnings("unchecked")
    public void theHostPrintsTheReadyLineAndStopsWhenStdinEnds() throws Exception {
        try (TestProject project = new TestProject().withGit()) {
            Process host = startHost(ProcessBuilder.Redirect.INHERIT, "--log-level", "error", "--base", project.temp.toString(), "--stop-on-stdin-eof", project.root.toString());
            BufferedReader stdout = new BufferedReader(new InputStreamReader(host.getInputStream(), StandardCharsets.UTF_8));
            String ready = stdout.readLine();
            assertTrue(ready, ready != null && ready.startsWith("IDE MCP servers listening under "));
            Path directory = Paths.get(ready.substring("IDE MCP servers listening under ".length()));
            assertTrue(directory.toString(), directory.startsWith(project.temp.resolve("claude-ide-mcp")));
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
            for (String name : new String[] {"code", "run", "vcs", "ops"}) {
                assertTrue(name, Files.exists(directory.resolve(name + ".sock")));
            }
            try (McpClient client = McpClient.connect(directory.resolve("code.sock"))) {
                client.initialize();
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
