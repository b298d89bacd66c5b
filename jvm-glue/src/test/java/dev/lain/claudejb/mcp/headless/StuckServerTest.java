package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.TestSupport;
import dev.lain.claudejb.mcp.Tool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** One server's tools stuck on every thread of its runner: the other servers' tools still answer. */
public class StuckServerTest {
    @Test
    public void aTasksFileThatIsAFifoHoldsNoThreadOfTheLibrary() throws Exception {
        try (TestProject project = new TestProject();
             HeadlessHost host = HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp))) {
            java.nio.file.Path tasks = project.root.resolve(TaskCatalog.FILE);
            java.nio.file.Files.delete(tasks);
            Process mkfifo = new ProcessBuilder("mkfifo", tasks.toString()).inheritIO().start();
            assertEquals(0, mkfifo.waitFor());
            try (McpClient run = TestSupport.initializedClient(host.servers().socketPath(Server.RUN), Duration.ofSeconds(60));
                 McpClient ops = TestSupport.initializedClient(host.servers().socketPath(Server.OPS), Duration.ofSeconds(60))) {
                // More runs than the library has callback threads: a guard blocked opening the FIFO
                // would hold one each, and then nothing could be called any more.
                for (int i = 0; i < 8; i++) {
                    McpClient.ToolResult denied = run.run("run_task", "{\"name\":\"hello\"}");
                    assertTrue(denied.text(), denied.isError() && denied.text().contains("not a regular file"));
                }
                McpClient.ToolResult listed = run.run("list_tasks", "{}");
                assertTrue(listed.text(), listed.isError() && listed.text().contains("not a regular file"));
                McpClient.ToolResult status = ops.run("status", "{}");
                assertFalse(status.text(), status.isError());
            }
        }
    }

    @Test
    public void theStatusToolAnswersWhileEveryCodeHandlerIsBusy() throws Exception {
        try (TestProject project = new TestProject().withGit();
             HeadlessHost host = HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp))) {
            ToolRunner code = host.runner(Server.CODE);
            assertNotSame(code, host.runner(Server.OPS));
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch entered = new CountDownLatch(code.threads());
            // A tool of the code server that holds its thread until the test lets go: it stands for
            // any handler that never returns (a read stuck on a FIFO, a runaway search).
            Domain stuck = Domain.builder("stuck", Server.CODE)
                    .description("Holds a thread of the code server")
                    .tool(Tool.builder("hold")
                            .description("Waits until the test releases it")
                            .readOnly()
                            .inputSchema(Schemas.object(Schemas.required()))
                            .handler(code.handler("hold", (context, args) -> {
                                entered.countDown();
                                release.await();
                                return "released";
                            }))
                            .build())
                    .build();
            assertTrue(host.servers().registerDomain(stuck).isEmpty());
            List<McpClient> holders = new ArrayList<>();
            List<McpClient.PendingRun> held = new ArrayList<>();
            try {
                for (int i = 0; i < code.threads(); i++) {
                    McpClient holder = TestSupport.initializedClient(host.servers().socketPath(Server.CODE));
                    holders.add(holder);
                    held.add(holder.startRun("hold", "{}"));
                }
                assertTrue("every thread of the code runner is held", entered.await(30, TimeUnit.SECONDS));
                // One more code call waits in the queue: the code server is saturated.
                McpClient.PendingRun queued = holders.get(0).startRun("read_file", "{\"path\":\"README.md\"}");

                try (McpClient ops = TestSupport.initializedClient(host.servers().socketPath(Server.OPS),
                        Duration.ofSeconds(30));
                     McpClient vcs = TestSupport.initializedClient(host.servers().socketPath(Server.VCS),
                             Duration.ofSeconds(30))) {
                    McpClient.ToolResult status = ops.run("status", "{}");
                    assertFalse(status.text(), status.isError());
                    assertTrue(status.text(), status.text().contains("inFlight: " + (code.threads() + 2)));
                    McpClient.ToolResult git = vcs.run("status", "{}");
                    assertFalse(git.text(), git.isError());
                    assertTrue(git.text(), git.text().contains("name: main"));
                }
                assertFalse("the queued code call waits for a thread", queued.result().isDone());
                release.countDown();
                McpClient.ToolResult read = queued.result().get(30, TimeUnit.SECONDS);
                assertFalse(read.text(), read.isError());
                for (McpClient.PendingRun run : held) {
                    assertTrue(run.result().get(30, TimeUnit.SECONDS).text().contains("released"));
                }
                Map<String, Object> after = host.status();
                assertEquals(0, ((Number) ((Map<?, ?>) after.get("calls")).get("inFlight")).intValue());
            } finally {
                release.countDown();
                for (McpClient holder : holders) {
                    holder.close();
                }
            }
        }
    }
}
