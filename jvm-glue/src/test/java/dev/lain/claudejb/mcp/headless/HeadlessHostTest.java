package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.TestSupport;
import dev.lain.claudejb.mcp.Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The headless host serving a real project (a git repository with a tasks file), driven over its sockets. */
public class HeadlessHostTest {
    private TestProject project;
    private HeadlessHost host;

    @Before
    public void start() throws Exception {
        project = new TestProject().withGit();
        // A change in the working tree and a staged one, for status and diff.
        TestProject.write(project.root.resolve("README.md"), "# Demo\n\nA demo project, changed.\n");
        TestProject.write(project.root.resolve("NOTES.md"), "staged notes\n");
        project.git("add", "NOTES.md");
        host = HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp));
    }

    @After
    public void stop() throws Exception {
        if (host != null) {
            host.close();
        }
        project.close();
    }

    private McpClient client(Server server) throws Exception {
        return TestSupport.initializedClient(host.servers().socketPath(server));
    }

    private static McpClient.ToolResult ok(McpClient client, String tool, String args) throws Exception {
        McpClient.ToolResult result = client.run(tool, args);
        assertFalse(tool + " " + args + " failed: " + result.text(), result.isError());
        return result;
    }

    private static McpClient.ToolResult error(McpClient client, String tool, String args) throws Exception {
        McpClient.ToolResult result = client.run(tool, args);
        assertTrue(tool + " " + args + " should fail but answered: " + result.text(), result.isError());
        return result;
    }

    private static void assertContains(String text, String... parts) {
        for (String part : parts) {
            assertTrue("expected `" + part + "` in:\n" + text, text.contains(part));
        }
    }

    @Test
    public void everyServerHasItsDomain() throws Exception {
        assertEquals(EnumSet.allOf(Server.class), host.servers().liveServers());
        try (McpClient code = client(Server.CODE); McpClient vcs = client(Server.VCS);
             McpClient run = client(Server.RUN); McpClient ops = client(Server.OPS)) {
            assertContains(code.domains(), "files");
            assertContains(code.tools("files"), "read_file", "list_directory", "find_files", "search_text", "readOnly: true");
            assertContains(vcs.domains(), "git");
            assertContains(vcs.tools("git"), "status", "diff", "log", "blame");
            assertContains(run.tools("tasks"), "list_tasks", "run_task", "destructive: true");
            assertContains(ops.tools("status"), "status");
        }
    }

    @Test
    public void readFileReadsAFileAndALineRange() throws Exception {
        try (McpClient code = client(Server.CODE)) {
            assertContains(ok(code, "read_file", "{\"path\":\"README.md\"}").text(), "A demo project, changed.", "totalLines: 3");
            String range = ok(code, "read_file", "{\"path\":\"src/Main.java\",\"startLine\":9,\"endLine\":11}").text();
            assertContains(range, "startLine: 9", "endLine: 11", "totalLines: 30", "line 9", "TODO: greet politely", "line 11");
            assertFalse(range, range.contains("line 12"));
            assertContains(error(code, "read_file", "{\"path\":\"src/Main.java\",\"startLine\":31}").text(), "30 lines");
            assertContains(error(code, "read_file", "{\"path\":\"logo.png\"}").text(), "binary");
            assertContains(error(code, "read_file", "{\"path\":\"nope.txt\"}").text(), "nope.txt");
            assertContains(error(code, "read_file", "{\"path\":\"src\"}").text(), "directory");
        }
    }

    @Test
    public void aHugeFileIsReadOnlyInRanges() throws Exception {
        StringBuilder big = new StringBuilder();
        for (int i = 1; i <= 40_000; i++) {
            big.append("line number ").append(i).append('\n');
        }
        TestProject.write(project.root.resolve("big.txt"), big.toString());
        try (McpClient code = client(Server.CODE)) {
            assertContains(error(code, "read_file", "{\"path\":\"big.txt\"}").text(), "startLine");
            assertContains(ok(code, "read_file", "{\"path\":\"big.txt\",\"startLine\":39999}").text(),
                    "line number 39999", "line number 40000", "totalLines: 40000");
        }
    }

    @Test
    public void listDirectoryFindFilesAndSearchText() throws Exception {
        try (McpClient code = client(Server.CODE)) {
            assertContains(ok(code, "list_directory", "{}").text(), "README.md,file", "src,directory", "escape.txt,symlink");
            assertContains(ok(code, "list_directory", "{\"path\":\"src\"}").text(), "Main.java", "util,directory");

            String java = ok(code, "find_files", "{\"glob\":\"*.java\"}").text();
            assertContains(java, "src/Main.java", "src/util/Strings.java", "count: 2");
            assertContains(ok(code, "find_files", "{\"glob\":\"src/**/*.java\"}").text(), "src/util/Strings.java");
            assertContains(ok(code, "find_files", "{\"glob\":\"*.java\",\"path\":\"src/util\"}").text(), "count: 1");
            assertContains(ok(code, "find_files", "{\"glob\":\"*\",\"maxResults\":1}").text(), "truncated");
            String ignored = ok(code, "find_files", "{\"glob\":\"*.txt\"}").text();
            assertFalse("git-ignored files are skipped: " + ignored, ignored.contains("build/output.txt"));

            String todo = ok(code, "search_text", "{\"pattern\":\"TODO\"}").text();
            assertContains(todo, "src/Main.java,10", "greet politely", "src/util/Strings.java,1");
            assertFalse("ignored by git: " + todo, todo.contains("build/"));
            assertFalse("no match leaves the project through a link: " + todo, todo.contains("secret"));
            assertContains(ok(code, "search_text", "{\"pattern\":\"todo: GREET\",\"ignoreCase\":true}").text(), "src/Main.java,10");
            String limited = ok(code, "search_text", "{\"pattern\":\"line \\\\d+\",\"glob\":\"*.java\",\"maxResults\":3}").text();
            assertContains(limited, "matches[3]", "truncated");
            assertContains(ok(code, "search_text", "{\"pattern\":\"TODO\",\"path\":\"src/util\"}").text(), "matches[1]");
            assertContains(error(code, "search_text", "{\"pattern\":\"(unclosed\"}").text(), "not a valid regular expression");
        }
    }

    @Test
    public void pathsOutsideTheProjectAreRefused() throws Exception {
        try (McpClient code = client(Server.CODE); McpClient vcs = client(Server.VCS)) {
            for (String path : new String[] {"../secret.txt", project.outside.toString(), "escape.txt",
                    "escape-dir/secret.txt", "src/../../secret.txt", "/etc/passwd"}) {
                String args = "{\"path\":" + Json.write(path) + "}";
                String text = error(code, "read_file", args).text();
                assertContains(text, "outside the project");
                assertFalse(text, text.contains("a secret outside"));
                error(code, "list_directory", args);
                error(vcs, "blame", args);
            }
            error(code, "list_directory", "{\"path\":\"..\"}");
            error(code, "find_files", "{\"glob\":\"*\",\"path\":\"escape-dir\"}");
            error(code, "search_text", "{\"pattern\":\"secret\",\"path\":\"..\"}");
            error(vcs, "diff", "{\"path\":\"../secret.txt\"}");
            error(vcs, "log", "{\"path\":\"../secret.txt\"}");
        }
    }

    @Test
    public void theHandlersConfineToo() throws Exception {
        ProjectPaths paths = new ProjectPaths(project.root);
        for (String path : new String[] {"../secret.txt", project.outside.toString(), "escape.txt", "escape-dir", ".."}) {
            try {
                paths.existing(path, "path");
                throw new AssertionError(path + " was accepted");
            } catch (ToolFailure expected) {
                assertContains(expected.getMessage(), "outside the project");
            }
        }
        assertEquals(project.root.resolve("src/Main.java"), paths.existing("src/Main.java", "path"));
        assertEquals(project.root, paths.existing(null, "path"));
        assertEquals(project.root.resolve("gone.txt"), paths.confined("gone.txt", "path"));
    }

    @Test
    public void gitStatusDiffLogAndBlame() throws Exception {
        try (McpClient vcs = client(Server.VCS)) {
            String status = ok(vcs, "status", "{}").text();
            assertContains(status, "name: main", "clean: false", "README.md,null,modified", "NOTES.md,added,null");

            String diff = ok(vcs, "diff", "{}").text();
            assertContains(diff, "README.md", "+A demo project, changed.", "-A demo project.");
            assertFalse(diff, diff.contains("staged notes"));
            assertContains(ok(vcs, "diff", "{\"staged\":true}").text(), "NOTES.md", "+staged notes");
            assertContains(ok(vcs, "diff", "{\"path\":\"src\"}").text(), "empty: true");

            String log = ok(vcs, "log", "{}").text();
            assertContains(log, "commits[1]", "Ada Lovelace", "ada@example.com", "Initial commit");
            assertContains(ok(vcs, "log", "{\"path\":\"src/Main.java\",\"maxCount\":5}").text(), "Initial commit");

            String blame = ok(vcs, "blame", "{\"path\":\"src/Main.java\",\"startLine\":10,\"endLine\":11}").text();
            assertContains(blame, "lines[2]", "10,", "Ada Lovelace", "Initial commit", "TODO: greet politely");
            assertContains(error(vcs, "blame", "{\"path\":\"src/Main.java\",\"startLine\":99}").text(), "30 lines");
        }
    }

    @Test
    public void tasksAreListedAndRunningOneIsDeniedWithoutATerminal() throws Exception {
        try (McpClient run = client(Server.RUN)) {
            assertContains(ok(run, "list_tasks", "{}").text(), "hello", "echo", "hello from a task", "Says hello", "slow");
            String denied = error(run, "run_task", "{\"name\":\"hello\"}").text();
            assertContains(denied, "denied");
            assertFalse(denied, denied.contains("hello from a task\n"));
            assertContains(error(run, "run_task", "{\"name\":\"nope\"}").text(), "no task `nope`", "hello");
        }
    }

    @Test
    public void theStatusToolShowsServersCallsAndVerdicts() throws Exception {
        try (McpClient code = client(Server.CODE); McpClient ops = client(Server.OPS)) {
            ok(code, "read_file", "{\"path\":\"README.md\"}");
            error(code, "read_file", "{\"path\":\"../secret.txt\"}");
            String status = ok(ops, "status", "{}").text();
            assertContains(status, project.root.toString(), host.directory().toString(), Server.CODE.socketFileName(), Server.VCS.socketFileName(),
                    "files (4 tools)", "git: true", "tasksFile: .ide-mcp/tasks.json", "read_file: 1",
                    "code/files/read_file,allowed", "code/files/read_file,denied");
        }
        Map<String, Object> status = host.status();
        assertEquals(4, ((List<?>) status.get("servers")).size());
    }

    @Test
    public void theMcpServersBlockHasEveryLiveServer() throws Exception {
        Map<?, ?> servers = (Map<?, ?>) host.mcpServers().get("mcpServers");
        assertEquals(4, servers.size());
        Map<?, ?> code = (Map<?, ?>) servers.get("code");
        assertEquals("stdio", code.get("type"));
        List<?> args = (List<?>) code.get("args");
        String command = (String) code.get("command");
        if (command.endsWith("ide-mcp")) {
            // The native bridge gets the stable form: the registry finds the set at every start.
            assertEquals(List.of("bridge", "--project", projectRoot(), "code"), args);
        } else {
            assertTrue(command, command.endsWith("/bin/java"));
            assertEquals(host.servers().socketPath(Server.CODE).toString(), args.get(args.size() - 1));
        }
        assertNotNull(Json.parse(host.mcpServersJson()));
    }

    private String projectRoot() {
        try {
            return project.root.toRealPath().toString();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    public void theHostIsRegisteredUnderItsProjectAndRemovedWhenItStops() throws Exception {
        Path record = host.servers().registryRecord();
        assertNotNull("the headless host is not in the registry of live server sets", record);
        Map<?, ?> fields = (Map<?, ?>) Json.parse(new String(Files.readAllBytes(record), java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(List.of(projectRoot()), fields.get("projectRoots"));
        assertEquals("ide-mcp headless", fields.get("host"));
        host.close();
        assertFalse(Files.exists(record));
        host = null;
    }

    @Test
    public void stoppingRemovesTheRuntimeDirectory() throws Exception {
        Path directory = host.directory();
        assertTrue(Files.isDirectory(directory));
        host.close();
        assertFalse(Files.exists(directory));
        host.close(); // idempotent
        host = null;
    }
}
