package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.TestSupport;
import dev.lain.claudejb.mcp.Server;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** run_task with a person at a (simulated) terminal: asked, then run or declined; cancelled and timed-out runs are killed. */
public class TasksWithATerminalTest {
    private TestProject project;
    private HeadlessHost host;
    private PipedOutputStream keyboard;
    private StringWriter screen;

    @Before
    public void start() throws Exception {
        project = new TestProject();
        keyboard = new PipedOutputStream();
        PipedInputStream input = new PipedInputStream(keyboard);
        screen = new StringWriter();
        Terminal terminal = new Terminal(input, StandardCharsets.UTF_8, new PrintWriter(screen, true), true,
                Duration.ofSeconds(30));
        host = HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp).terminal(terminal));
    }

    @After
    public void stop() throws Exception {
        host.close();
        keyboard.close();
        project.close();
    }

    private void type(String line) throws Exception {
        keyboard.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        keyboard.flush();
    }

    private void awaitQuestion(String part) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!screen.toString().contains(part)) {
            assertTrue("no question containing `" + part + "` on the terminal: " + screen, System.nanoTime() < deadline);
            Thread.sleep(20);
        }
    }

    private McpClient client() throws Exception {
        return TestSupport.initializedClient(host.servers().socketPath(Server.RUN));
    }

    @Test
    public void thePersonAllowsARun() throws Exception {
        try (McpClient run = client()) {
            McpClient.PendingRun pending = run.startRun("run_task", "{\"name\":\"hello\"}");
            awaitQuestion("Run task `hello` (echo \"hello from a task\")");
            assertTrue(screen.toString(), screen.toString().contains("[y/N]"));
            type("y");
            McpClient.ToolResult result = pending.result().get();
            assertFalse(result.text(), result.isError());
            assertTrue(result.text(), result.text().contains("hello from a task"));
            assertTrue(result.text(), result.text().contains("exitCode: 0"));
            assertTrue(result.text(), result.text().contains("succeeded: true"));
        }
    }

    @Test
    public void theApprovedTaskRunsNotTheOneSwappedInWhileThePromptIsUp() throws Exception {
        TestProject.write(project.root.resolve("sub/marker"), "");
        TestProject.write(project.root.resolve(".ide-mcp/tasks.json"), "{\"tasks\": {\"swap\": "
                + "{\"command\": [\"sh\", \"-c\", \"echo approved ran in $(pwd) with $GREETING\"], "
                + "\"directory\": \"sub\", \"env\": {\"GREETING\": \"hello\"}}}}");
        try (McpClient run = client()) {
            McpClient.PendingRun pending = run.startRun("run_task", "{\"name\":\"swap\"}");
            awaitQuestion("Run task `swap` (sh -c \"echo approved ran in $(pwd) with $GREETING\") in "
                    + project.root.resolve("sub") + " with GREETING=hello?");
            // The file changes under the question: another command, directory and environment.
            TestProject.write(project.root.resolve(".ide-mcp/tasks.json"), "{\"tasks\": {\"swap\": "
                    + "{\"command\": [\"sh\", \"-c\", \"echo SWAPPED ran in $(pwd) with $GREETING\"], "
                    + "\"env\": {\"GREETING\": \"swapped\"}}}}");
            type("y");
            McpClient.ToolResult result = pending.result().get();
            assertFalse(result.text(), result.isError());
            assertTrue(result.text(), result.text().contains("approved ran in " + project.root.resolve("sub") + " with hello"));
            assertFalse(result.text(), result.text().contains("SWAPPED"));
            assertFalse(result.text(), result.text().contains("swapped"));
        }
    }

    @Test
    public void thePersonDeclines() throws Exception {
        try (McpClient run = client()) {
            McpClient.PendingRun pending = run.startRun("run_task", "{\"name\":\"hello\"}");
            awaitQuestion("Run task `hello`");
            type("n");
            McpClient.ToolResult result = pending.result().get();
            assertTrue(result.text(), result.isError());
        }
    }

    @Test
    public void cancellingARunKillsItsProcesses() throws Exception {
        try (McpClient run = client()) {
            McpClient.PendingRun pending = run.startRun("run_task", "{\"name\":\"slow\"}");
            awaitQuestion("Run task `slow`");
            type("yes");
            Path pidFile = project.root.resolve("slow.pid");
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (!Files.exists(pidFile) || Files.readAllLines(pidFile).isEmpty()) {
                assertTrue("the task never started", System.nanoTime() < deadline);
                Thread.sleep(20);
            }
            long shell = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
            ProcessHandle handle = ProcessHandle.of(shell).orElseThrow(AssertionError::new);
            long sleeper = handle.descendants().findFirst().map(ProcessHandle::pid).orElse(-1L);
            run.cancel(pending.id());
            deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (handle.isAlive() || (sleeper > 0 && ProcessHandle.of(sleeper).map(ProcessHandle::isAlive).orElse(false))) {
                assertTrue("the task's processes outlived the cancellation", System.nanoTime() < deadline);
                Thread.sleep(20);
            }
            run.ping(); // the connection goes on
        }
    }

    @Test
    public void aTaskPastItsTimeoutIsKilled() throws Exception {
        try (McpClient run = client()) {
            McpClient.PendingRun pending = run.startRun("run_task", "{\"name\":\"short\"}");
            awaitQuestion("Run task `short`");
            type("y");
            McpClient.ToolResult result = pending.result().get();
            assertFalse(result.text(), result.isError());
            assertTrue(result.text(), result.text().contains("timedOut"));
            assertTrue(result.text(), result.text().contains("succeeded: false"));
        }
    }

    @Test
    public void aLargeOutputKeepsItsStartAndEnd() throws Exception {
        TestProject.write(project.root.resolve(".ide-mcp/tasks.json"),
                "{\"tasks\": {\"loud\": {\"command\": [\"seq\", \"1\", \"200000\"]}}}");
        try (McpClient run = client()) {
            McpClient.PendingRun pending = run.startRun("run_task", "{\"name\":\"loud\"}");
            awaitQuestion("Run task `loud`");
            type("y");
            McpClient.ToolResult result = pending.result().get();
            assertFalse(result.text(), result.isError());
            assertTrue(result.text(), result.text().contains("truncated"));
            assertTrue(result.text(), result.text().contains("1\\n2\\n3\\n"));
            assertTrue(result.text(), result.text().contains("199999\\n200000"));
            assertTrue(result.text().length() < 100_000);
        }
        assertEquals(0, host.status().get("calls") instanceof java.util.Map
                ? ((Number) ((java.util.Map<?, ?>) host.status().get("calls")).get("inFlight")).intValue() : -1);
    }
}
