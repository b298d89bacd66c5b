package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/** The Security Guard and the host, implemented in Java. */
public class GuardAndHostTest {
    @Test
    public void anAllowRunsTheHandlerAndTheGuardSeesTheArguments() throws Exception {
        BlockingQueue<GuardRequest> judged = new ArrayBlockingQueue<>(1);
        AtomicInteger runs = new AtomicInteger();
        SecurityGuard guard = request -> {
            judged.add(request);
            return Verdict.allow();
        };
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                assertFalse(client.run("echo", "{\"x\":1}").isError());
            }
            GuardRequest request = judged.poll(5, TimeUnit.SECONDS);
            assertEquals(Server.CODE, request.server());
            assertEquals("test", request.domain());
            assertEquals("echo", request.tool());
            assertEquals("{\"x\":1}", request.argumentsJson());
            assertTrue(request.readOnly());
            assertTrue(request.clientPid().isPresent());
            assertEquals(1, runs.get());
        }
    }

    @Test
    public void theHandlerOfACallSeesTheCallNumberItsGuardSaw() throws Exception {
        java.util.List<Long> judged = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.List<Long> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        SecurityGuard guard = request -> {
            judged.add(request.callNumber());
            return Verdict.allow();
        };
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Domain.builder("numbers", Server.CODE).description("Call numbers")
                    .tool(Tool.builder("number").description("Answers with its call's number").readOnly()
                            .inputSchema("{\"type\":\"object\"}")
                            .handler(context -> {
                                handled.add(context.callNumber());
                                context.complete(Long.toString(context.callNumber()));
                            })
                            .build())
                    .build());
            try (McpClient client = fixture.client(Server.CODE)) {
                for (int i = 0; i < 3; i++) {
                    assertFalse(client.run("number", "{}").isError());
                }
            }
            assertEquals(judged, handled);
            assertEquals(3, new java.util.HashSet<>(handled).size());
        }
    }

    @Test
    public void aJavaGuardAndAJavaHandlerAreEnteredOnceAndTheHandlerGetsTheVeryStringTheGuardJudged() throws Exception {
        // The guard and the handler of one call run in one job of one callback thread: what
        // the guard left in its thread's local is what the handler finds there. With two
        // entries the handler would run in a later job, on any of the callback threads, after
        // other calls' judgements.
        ThreadLocal<String> judgedHere = new ThreadLocal<>();
        List<String> judged = Collections.synchronizedList(new ArrayList<>());
        List<String> handled = Collections.synchronizedList(new ArrayList<>());
        List<String> mismatches = Collections.synchronizedList(new ArrayList<>());
        SecurityGuard guard = request -> {
            judged.add(request.argumentsJson());
            judgedHere.set(request.argumentsJson());
            return Verdict.allow();
        };
        Tool tool = Tool.builder("echo").description("Echoes").readOnly().handler(context -> {
            handled.add(context.argumentsJson());
            if (!context.argumentsJson().equals(judgedHere.get())) {
                mismatches.add(context.argumentsJson() + " judged here: " + judgedHere.get());
            } else if (context.argumentsJson() != judgedHere.get()) {
                // Made once per call: the handler holds the very string the guard judged, so
                // large arguments are converted and held in the heap once.
                mismatches.add(context.argumentsJson() + " is a copy of the judged string");
            }
            judgedHere.remove();
            context.complete(context.argumentsJson());
        }).build();
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(tool));
            int calls = 24;
            List<McpClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    clients.add(fixture.client(Server.CODE));
                }
                // Several connections at once, so that judgements of other calls interleave.
                List<McpClient.PendingRun> runs = new ArrayList<>();
                for (int i = 0; i < calls; i++) {
                    runs.add(clients.get(i % 3).startRun("echo", "{\"n\":" + i + ",\"s\":\"\\u0000ü\"}"));
                }
                for (int i = 0; i < calls; i++) {
                    assertFalse(runs.get(i).result().get(20, TimeUnit.SECONDS).isError());
                }
            } finally {
                for (McpClient client : clients) {
                    client.close();
                }
            }
            assertEquals(calls, handled.size());
            assertEquals(new HashSet<>(judged), new HashSet<>(handled));
            assertEquals(calls, judged.size());
            assertTrue(mismatches.toString(), mismatches.isEmpty());
        }
    }

    @Test
    public void theNamesACallIsJudgedUnderAreMadeOnceForAServerSet() throws Exception {
        // A server set makes the Java strings of its tools' names once and passes the same
        // objects to every judgement; a fresh string per call would be a new object each time.
        List<GuardRequest> judged = Collections.synchronizedList(new ArrayList<>());
        SecurityGuard guard = request -> {
            judged.add(request);
            return Verdict.allow();
        };
        AtomicInteger runs = new AtomicInteger();
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient first = fixture.client(Server.CODE); McpClient second = fixture.client(Server.CODE)) {
                for (int i = 0; i < 3; i++) {
                    assertFalse(first.run("echo", "{}").isError());
                    assertFalse(second.run("echo", "{}").isError());
                }
            }
            assertEquals(6, judged.size());
            GuardRequest firstJudged = judged.get(0);
            for (GuardRequest request : judged) {
                assertEquals(Server.CODE, request.server());
                assertEquals("test", request.domain());
                assertEquals("echo", request.tool());
                assertSame(firstJudged.domain(), request.domain());
                assertSame(firstJudged.tool(), request.tool());
                assertTrue(request.concerns().isEmpty());
            }
            assertEquals(6, runs.get());
        }
    }

    @Test
    public void eachCallIsJudgedUnderItsOwnClientsName() throws Exception {
        // A callback thread keeps the Java string of the last client name it passed; clients
        // taking turns (one name plain, one with a character beyond U+FFFF and a NUL, which
        // take another way into Java) must each be judged under their own name.
        String plain = "first client";
        String awkward = "second \uD83D\uDE00 [\u0000] client";
        List<String> judgedNames = Collections.synchronizedList(new ArrayList<>());
        SecurityGuard guard = request -> {
            judgedNames.add(request.clientName().orElse("<none>"));
            return Verdict.deny("denied for " + request.clientName().orElse("<none>"));
        };
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(new AtomicInteger())));
            try (McpClient first = McpClient.connect(fixture.servers.socketPath(Server.CODE)).clientName(plain);
                    McpClient second = McpClient.connect(fixture.servers.socketPath(Server.CODE)).clientName(awkward)) {
                first.initialize();
                second.initialize();
                for (int i = 0; i < 3; i++) {
                    McpClient.ToolResult firstResult = first.run("echo", "{}");
                    McpClient.ToolResult secondResult = second.run("echo", "{}");
                    // The verdict's reason comes back through the same strings, both ways.
                    assertTrue(firstResult.text(), firstResult.text().contains("denied for " + plain));
                    assertTrue(secondResult.text(), secondResult.text().contains("denied for " + awkward));
                }
            }
            assertEquals(Arrays.asList(plain, awkward, plain, awkward, plain, awkward), judgedNames);
        }
    }

    @Test
    public void aDenialThroughTheOneEntryRunsNothingAndIsAudited() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger judged = new AtomicInteger();
        SecurityGuard guard = request -> {
            judged.incrementAndGet();
            return Verdict.deny("not here");
        };
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                for (int i = 0; i < 5; i++) {
                    McpClient.ToolResult result = client.run("echo", "{}");
                    assertTrue(result.isError());
                    assertTrue(result.text(), result.text().contains("not here"));
                }
            }
            assertEquals(0, runs.get());
            assertEquals(5, judged.get());
            List<AuditRecord> audit = fixture.servers.auditLog();
            assertEquals(5, audit.size());
            for (AuditRecord record : audit) {
                assertEquals(AuditRecord.Decision.DENIED, record.verdict());
            }
            assertEquals(0, Native.pendingCallCount());
        }
    }

    @Test
    public void aDenyIsAnErrorWithTheReasonAndNothingRuns() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        SecurityGuard guard = request -> Verdict.deny("echo is disabled in this project");
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("echo", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("echo is disabled in this project"));
            }
            assertEquals(0, runs.get());
        }
    }

    @Test
    public void anAskWithNoUiIsADenial() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        SecurityGuard guard = request -> Verdict.ask("Run echo?");
        try (Fixture fixture = new Fixture(guard, new Host() { }, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("echo", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("no UI"));
            }
            assertEquals(0, runs.get());
        }
    }

    @Test
    public void anAskIsAnsweredByTheHostFromAnotherThread() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        BlockingQueue<String> prompts = new ArrayBlockingQueue<>(1);
        Host host = new Host() {
            @Override
            public boolean canConfirm() {
                return true;
            }

            @Override
            public void confirm(GuardRequest request, String prompt, Confirmation confirmation) {
                prompts.add(prompt);
                new Thread(confirmation::allow, "edt-stand-in").start();
            }
        };
        try (Fixture fixture = new Fixture(request -> Verdict.ask("Run echo?"), host, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                assertFalse(client.run("echo", "{}").isError());
            }
            assertEquals("Run echo?", prompts.poll(5, TimeUnit.SECONDS));
            assertEquals(1, runs.get());
        }
    }

    @Test
    public void aGuardThatThrowsDenies() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        SecurityGuard guard = request -> {
            throw new UnsupportedOperationException("policy file missing");
        };
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("echo", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("policy file missing"));
            }
            assertEquals(0, runs.get());
        }
    }

    @Test
    public void aGuardThatReturnsNoVerdictDenies() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        SecurityGuard guard = request -> null;
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("echo", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("null instead of a Verdict"));
            }
            assertEquals(0, runs.get());
        }
    }

    /**
     * A handler started through the one entry that returns without answering is told of a
     * cancellation: one that came while it was still running as soon as it returns, one that
     * comes later when it comes.
     */
    @Test
    public void aCancellationReachesAHandlerTheOneEntryStartedWhetherItRunsOrWaits() throws Exception {
        SecurityGuard guard = request -> Verdict.allow();
        BlockingQueue<ToolCallContext> waiting = new ArrayBlockingQueue<>(1);
        CountDownLatch toldWhileWaiting = new CountDownLatch(1);
        CountDownLatch toldAfterRunning = new CountDownLatch(1);
        CountDownLatch spinning = new CountDownLatch(1);
        AtomicBoolean sawCancellationWhileRunning = new AtomicBoolean();
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Domain.builder("test", Server.CODE).description("Test tools")
                    .tool(Tool.builder("wait").description("Waits to be cancelled")
                            .handler(context -> {
                                context.onCancel(toldWhileWaiting::countDown);
                                waiting.add(context);
                            }).build())
                    .tool(Tool.builder("spin").description("Runs until it sees the cancellation")
                            .handler(context -> {
                                spinning.countDown();
                                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                                while (!context.isCancelled() && System.nanoTime() < until) {
                                    Thread.sleep(1);
                                }
                                sawCancellationWhileRunning.set(context.isCancelled());
                                context.onCancel(toldAfterRunning::countDown);
                            }).build())
                    .build());
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.PendingRun waitRun = client.startRun("wait", "{}");
                ToolCallContext context = waiting.poll(5, TimeUnit.SECONDS);
                assertFalse(context.isCancelled());
                client.cancel(waitRun.id());
                assertTrue(toldWhileWaiting.await(5, TimeUnit.SECONDS));
                assertTrue(context.isCancelled());

                McpClient.PendingRun spinRun = client.startRun("spin", "{}");
                // Cancelled once it runs: a call cancelled before would never start it.
                assertTrue(spinning.await(5, TimeUnit.SECONDS));
                client.cancel(spinRun.id());
                assertTrue(toldAfterRunning.await(5, TimeUnit.SECONDS));
                assertTrue(sawCancellationWhileRunning.get());
                assertTrue(client.domains().contains("test"));
            }
            assertEquals(0, Native.pendingCallCount());
        }
    }

    @Test
    public void aGuardThatIsTooSlowDenies() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        SecurityGuard guard = request -> {
            Thread.sleep(1500);
            return Verdict.allow();
        };
        try (Fixture fixture = new Fixture(guard, null, options -> options.guardTimeout(Duration.ofMillis(200)))) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("echo", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("did not answer"));
            }
            assertEquals(0, runs.get());
        }
    }

    @Test
    public void tokenRotationFromJavaIsFollowedByTheClient() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null,
                options -> options.tokenOverlap(Duration.ZERO))) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            try (McpClient client = fixture.client(Server.CODE)) {
                String before = McpClient.readToken(fixture.servers.directory().resolve(Contract.TOKEN_FILE_NAME));
                fixture.servers.rotateToken();
                String after = McpClient.readToken(fixture.servers.directory().resolve(Contract.TOKEN_FILE_NAME));
                assertFalse(before.equals(after));
                // The old token is dead at once (no overlap): the client is rejected, re-reads
                // the token file and succeeds.
                assertFalse(client.run("echo", "{}").isError());
                assertEquals(1, runs.get());
            }
        }
    }
}
