package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.Test;

/** How Java handlers are called, answer, fail and see cancellation. */
public class HandlerBridgeTest {

    @Test
    public void aHandlerExceptionBecomesAnErrorResultNamingTheException() throws Exception {
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("explode").description("Throws")
                    .handler(context -> {
                        throw new IllegalStateException("the index is not ready");
                    }).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("explode", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("java.lang.IllegalStateException"));
                assertTrue(result.text(), result.text().contains("the index is not ready"));
                // The server keeps serving after it.
                assertTrue(client.domains().contains("test"));
            }
        }
    }

    @Test
    public void aHandlerThatHangsPastItsDeadlineIsAnErrorAndSeesCancellation() throws Exception {
        CountDownLatch cancelled = new CountDownLatch(1);
        AtomicBoolean sawIsCancelled = new AtomicBoolean();
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("hang").description("Never answers")
                    .deadline(Duration.ofMillis(300))
                    .handler(context -> context.onCancel(() -> {
                        sawIsCancelled.set(context.isCancelled());
                        cancelled.countDown();
                    })).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("hang", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("deadline"));
                assertTrue("the handler was told", cancelled.await(5, TimeUnit.SECONDS));
                assertTrue(sawIsCancelled.get());
            }
            assertEquals(0, Native.pendingCallCount());
        }
    }

    @Test
    public void aClientCancellationReachesTheJavaHandler() throws Exception {
        BlockingQueue<ToolCallContext> started = new ArrayBlockingQueue<>(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("wait").description("Waits to be cancelled")
                    .handler(context -> {
                        context.onCancel(cancelled::countDown);
                        started.add(context);
                    }).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.PendingRun run = client.startRun("wait", "{}");
                ToolCallContext context = started.poll(5, TimeUnit.SECONDS);
                assertFalse(context.isCancelled());
                client.cancel(run.id());
                assertTrue(cancelled.await(5, TimeUnit.SECONDS));
                assertTrue(context.isCancelled());
                // Answering after cancellation is a harmless no-op.
                assertFalse(context.completeText("too late"));
                assertTrue(client.domains().contains("test"));
            }
        }
    }

    @Test
    public void aHandlerMayAnswerLaterFromAnotherThread() throws Exception {
        // What the other thread saw; its asserts would be lost there, so they are rethrown here.
        CompletableFuture<Void> answered = new CompletableFuture<>();
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("later").description("Answers later")
                    .handler(context -> new Thread(() -> {
                        try {
                            Thread.sleep(100);
                            context.reportProgress(1, 2.0, "half way");
                            assertTrue(context.complete("{\"answer\":42}"));
                            assertFalse("a second answer does nothing", context.complete("{\"answer\":43}"));
                            answered.complete(null);
                        } catch (Throwable failure) {
                            answered.completeExceptionally(failure);
                            context.fail("the answering thread failed: " + failure);
                        }
                    }, "another-thread").start()).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("later", "{}");
                TestSupport.awaitOutcome(answered, "the answering thread");
                assertFalse(result.text(), result.isError());
                assertTrue(result.text(), result.text().contains("42"));
                assertFalse(result.text(), result.text().contains("43"));
            }
        }
    }

    @Test
    public void aFailedCallCarriesTheHandlersMessage() throws Exception {
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("refuse").description("Fails")
                    .handler(context -> context.fail("pick a file inside the project")).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("refuse", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("pick a file inside the project"));
            }
        }
    }

    @Test
    public void aResultThatIsNotJsonIsRefusedToTheHandlerAndAnErrorForTheModel() throws Exception {
        BlockingQueue<Throwable> thrown = new ArrayBlockingQueue<>(1);
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("broken").description("Bad JSON")
                    .handler(context -> {
                        try {
                            context.complete("{not json");
                        } catch (IllegalArgumentException e) {
                            thrown.add(e);
                        }
                    }).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                assertTrue(client.run("broken", "{}").isError());
                assertTrue(thrown.poll(5, TimeUnit.SECONDS) instanceof IllegalArgumentException);
            }
        }
    }

    @Test
    public void argumentsThatBreakTheSchemaNeverReachTheHandler() throws Exception {
        AtomicBoolean called = new AtomicBoolean();
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp, () -> called.set(true)));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("read_file", "{\"path\":7}");
                // The handler runs before its reply is written, so this is settled by now.
                assertFalse("the handler was reached: " + result.text(), called.get());
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("invalid arguments"));
            }
        }
    }
}
