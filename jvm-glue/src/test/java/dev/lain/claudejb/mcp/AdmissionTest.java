package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * Admission of unexpected clients, answered from Java. The connecting client is this JVM: it is
 * not declared, so it is unexpected unless the test declares it or grants a credit.
 */
public class AdmissionTest {
    /** A host that records each prompt and leaves the answer to the test. */
    private static final class PromptingHost implements Host {
        final BlockingQueue<UnexpectedClient> clients = new ArrayBlockingQueue<>(8);
        final BlockingQueue<AdmissionAnswer> answers = new ArrayBlockingQueue<>(8);
        final AtomicInteger prompts = new AtomicInteger();

        @Override
        public void unexpectedClient(UnexpectedClient client, AdmissionAnswer answer) {
            prompts.incrementAndGet();
            clients.add(client);
            answers.add(answer);
        }
    }

    /** Connects and initializes on another thread, so the test can watch it being held. */
    private static CompletableFuture<McpClient> connectInBackground(Fixture fixture) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return TestSupport.initializedClient(fixture.servers.socketPath(Server.CODE), Duration.ofSeconds(20));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    @Test
    public void anUnexpectedClientIsHeldUntilTheHostAllowsItFromAnotherThread() throws Exception {
        PromptingHost host = new PromptingHost();
        AtomicInteger runs = new AtomicInteger();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), host, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            CompletableFuture<McpClient> connecting = connectInBackground(fixture);
            UnexpectedClient client = host.clients.poll(10, TimeUnit.SECONDS);
            assertNotNull("the host was never asked", client);
            assertEquals(ProcessHandle.current().pid(), client.pid());
            assertTrue(client.toString(), client.executable().orElse("").contains("java"));
            assertFalse(client.commandLine().isEmpty());
            // Held: nothing it sent is answered before the host decides.
            try {
                connecting.get(500, TimeUnit.MILLISECONDS);
                fail("the unexpected client was answered before the host allowed it");
            } catch (TimeoutException expected) {
                // held
            }
            AdmissionAnswer answer = host.answers.poll(1, TimeUnit.SECONDS);
            CompletableFuture.runAsync(() -> assertTrue(answer.allow())).get(5, TimeUnit.SECONDS);
            try (McpClient admitted = connecting.get(10, TimeUnit.SECONDS)) {
                assertFalse(admitted.run("echo", "{}").isError());
            }
            assertFalse("a second answer finds nothing", answer.reject());
            assertEquals(1, runs.get());
            assertEquals(1, host.prompts.get());
        }
        assertEquals(0, Native.pendingQuestionCount());
    }

    @Test
    public void aRejectedClientIsClosedAndNothingItSentRuns() throws Exception {
        PromptingHost host = new PromptingHost();
        AtomicInteger runs = new AtomicInteger();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), host, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            CompletableFuture<McpClient> connecting = connectInBackground(fixture);
            AdmissionAnswer answer = host.answers.poll(10, TimeUnit.SECONDS);
            assertNotNull("the host was never asked", answer);
            assertTrue(answer.reject());
            try {
                connecting.get(10, TimeUnit.SECONDS).close();
                fail("a rejected client was served");
            } catch (ExecutionException expected) {
                assertTrue(String.valueOf(expected.getCause()), expected.getCause() instanceof java.io.UncheckedIOException
                        || expected.getCause() instanceof IOException);
            }
            assertEquals(0, runs.get());
        }
    }

    @Test
    public void noAnswerInTimeRejects() throws Exception {
        PromptingHost host = new PromptingHost();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), host,
                options -> options.admissionTimeout(Duration.ofMillis(300)))) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(new AtomicInteger())));
            CompletableFuture<McpClient> connecting = connectInBackground(fixture);
            try {
                connecting.get(10, TimeUnit.SECONDS).close();
                fail("a client nobody answered for was served");
            } catch (ExecutionException expected) {
                // closed
            }
            AdmissionAnswer late = host.answers.poll(1, TimeUnit.SECONDS);
            assertFalse("a late answer finds nothing", late.allow());
        }
    }

    @Test
    public void aHostThatThrowsRejects() throws Exception {
        Host host = new Host() {
            @Override
            public void unexpectedClient(UnexpectedClient client, AdmissionAnswer answer) {
                throw new IllegalStateException("no notification service");
            }
        };
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), host, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(new AtomicInteger())));
            try {
                connectInBackground(fixture).get(10, TimeUnit.SECONDS).close();
                fail("a client was served although the host failed to answer");
            } catch (ExecutionException expected) {
                // closed
            }
        }
        assertEquals(0, Native.pendingQuestionCount());
    }

    @Test
    public void aDeclaredClientIsAdmittedWithoutAPrompt() throws Exception {
        PromptingHost host = new PromptingHost();
        AtomicInteger runs = new AtomicInteger();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), host, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            fixture.servers.declareLaunchedClient(ProcessHandle.current().pid());
            try (McpClient client = fixture.client(Server.CODE)) {
                assertFalse(client.run("echo", "{}").isError());
            }
            assertEquals(0, host.prompts.get());
            assertEquals(1, runs.get());
            fixture.servers.forgetLaunchedClient(ProcessHandle.current().pid());
            CompletableFuture<McpClient> again = connectInBackground(fixture);
            assertNotNull("forgotten, the client is unexpected again", host.answers.poll(10, TimeUnit.SECONDS));
            again.cancel(true);
        }
    }

    @Test
    public void aCreditAdmitsOneUnexpectedClientWithoutAPrompt() throws Exception {
        PromptingHost host = new PromptingHost();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), host, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(new AtomicInteger())));
            fixture.servers.grantAdmissionCredit(Duration.ofSeconds(30));
            try (McpClient client = fixture.client(Server.CODE)) {
                client.ping();
            }
            assertEquals(0, host.prompts.get());
            assertNull(host.clients.poll());
        }
    }

    @Test
    public void theDefaultHostAllowsAfterLogging() throws Exception {
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), new Host() { }, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(new AtomicInteger())));
            try (McpClient client = fixture.client(Server.CODE)) {
                client.ping();
            }
        }
    }

    @Test
    public void badPidsAndCreditsAreIllegalArguments() throws Exception {
        try (Fixture fixture = new Fixture()) {
            for (long pid : new long[] {0, -1, 1L << 40}) {
                try {
                    fixture.servers.declareLaunchedClient(pid);
                    fail("pid " + pid + " was accepted");
                } catch (IllegalArgumentException expected) {
                    assertTrue(expected.getMessage(), expected.getMessage().contains("process id"));
                }
            }
            try {
                fixture.servers.grantAdmissionCredit(Duration.ZERO);
                fail("a credit valid for no time was accepted");
            } catch (IllegalArgumentException expected) {
                // refused
            }
        }
    }
}
