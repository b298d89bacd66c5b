package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/** The audit log read from Java, and the baseline path policy with {@code allowExplicitly}. */
public class AuditAndPolicyTest {
    private static final String SECRET = "s3cr3t-argument-value";

    private static Domain twoTools(AtomicInteger runs) {
        ToolHandler echo = TestDomains.echoing(runs);
        String schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}";
        return Domain.builder("test", Server.CODE).description("Tools for tests")
                .tool(Tool.builder("echo").description("Echoes").readOnly().inputSchema(schema).handler(echo).build())
                .tool(Tool.builder("wipe").description("Never allowed").inputSchema(schema).handler(echo).build())
                .build();
    }

    @Test
    public void theAuditLogHasEveryVerdictAndNoArgumentValues() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        SecurityGuard guard = request -> "wipe".equals(request.tool())
                ? Verdict.deny("wiping is not allowed here") : Verdict.allow();
        Instant before = Instant.now().minusSeconds(1);
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(twoTools(runs));
            try (McpClient client = fixture.client(Server.CODE)) {
                assertFalse(client.run("echo", "{\"text\":\"" + SECRET + "\"}").isError());
                assertTrue(client.run("wipe", "{\"text\":\"" + SECRET + "\"}").isError());
            }
            List<AuditRecord> log = fixture.servers.auditLog();
            assertEquals(log.toString(), 2, log.size());
            AuditRecord allowed = log.get(0);
            AuditRecord denied = log.get(1);
            assertEquals("echo", allowed.tool());
            assertEquals(AuditRecord.Decision.ALLOWED, allowed.verdict());
            assertEquals("wipe", denied.tool());
            assertEquals(AuditRecord.Decision.DENIED, denied.verdict());
            // The guard's own words go to the model; the record holds none of them.
            assertEquals("denied by the Security Guard", denied.reason());
            for (AuditRecord record : log) {
                assertEquals(Server.CODE, record.server());
                assertEquals("test", record.domain());
                assertEquals(List.of("text"), record.argumentNames());
                assertEquals(ProcessHandle.current().pid(), record.clientPid().getAsInt());
                assertEquals("ide-mcp-java-client", record.clientName().orElse(""));
                assertEquals(allowed.connectionId(), record.connectionId());
                assertFalse(record.duration().isNegative());
                assertTrue(record.duration().compareTo(Duration.ofSeconds(10)) < 0);
                assertFalse(record.time().isBefore(before));
                assertFalse("an argument value leaked into the audit log: " + record, record.toString().contains(SECRET));
                assertFalse(record.reason().contains(SECRET));
            }
            assertFalse(Native.auditLog(handleOf(fixture)).contains(SECRET));
            assertEquals(1, runs.get());
        }
    }

    /** The raw JSON too: nothing but the documented fields. */
    private static long handleOf(Fixture fixture) throws Exception {
        java.lang.reflect.Field handle = IdeMcpServers.class.getDeclaredField("handle");
        handle.setAccessible(true);
        return handle.getLong(fixture.servers);
    }

    private static Tool readFile(AtomicInteger runs, BlockingQueue<String> seen) {
        return Tool.builder("read_file").description("Reads a file").readOnly()
                .inputSchema("{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"x-ide-mcp-path\":true}},"
                        + "\"required\":[\"path\"]}")
                .handler(context -> {
                    runs.incrementAndGet();
                    String path = context.stringArgument("path");
                    seen.add(path);
                    context.completeText(new String(Files.readAllBytes(Path.of(path)), StandardCharsets.UTF_8));
                }).build();
    }

    @Test
    public void pathsOutsideTheProjectRootsRunOnlyWhenExplicitlyAllowed() throws Exception {
        Path temp = Files.createTempDirectory("mcp-policy");
        try {
            Path project = Files.createDirectories(temp.resolve("proj"));
            Path sibling = Files.createDirectories(temp.resolve("proj-evil"));
            Files.write(project.resolve("inside.txt"), "inside".getBytes(StandardCharsets.UTF_8));
            Files.write(sibling.resolve("outside.txt"), "outside".getBytes(StandardCharsets.UTF_8));
            String outside = sibling.resolve("outside.txt").toString();

            BlockingQueue<GuardRequest> judged = new ArrayBlockingQueue<>(8);
            BlockingQueue<String> seen = new ArrayBlockingQueue<>(8);
            AtomicInteger runs = new AtomicInteger();
            // A plain allow first; then a guard that allows explicitly when the policy objects.
            boolean[] explicit = {false};
            SecurityGuard guard = request -> {
                judged.add(request);
                return explicit[0] && !request.concerns().isEmpty() ? Verdict.allowExplicitly() : Verdict.allow();
            };
            try (Fixture fixture = new Fixture(guard, null, options -> options.projectRoots(project))) {
                fixture.servers.registerDomain(Fixture.oneTool(readFile(runs, seen)));
                try (McpClient client = fixture.client(Server.CODE)) {
                    McpClient.ToolResult inside = client.run("read_file", "{\"path\":\"inside.txt\"}");
                    assertFalse(inside.text(), inside.isError());
                    assertEquals("inside", inside.text());
                    GuardRequest request = judged.poll(5, TimeUnit.SECONDS);
                    assertTrue(request.concerns().toString(), request.concerns().isEmpty());
                    // The guard and the handler both see the canonical path.
                    String canonical = project.toRealPath().resolve("inside.txt").toString();
                    assertEquals(canonical, request.arguments().get("path"));
                    assertEquals(canonical, seen.poll(5, TimeUnit.SECONDS));

                    McpClient.ToolResult denied = client.run("read_file", "{\"path\":\"" + outside + "\"}");
                    assertTrue(denied.isError());
                    assertTrue(denied.text(), denied.text().contains("outside the project"));
                    request = judged.poll(5, TimeUnit.SECONDS);
                    assertEquals(1, request.concerns().size());
                    assertTrue(request.concerns().get(0), request.concerns().get(0).contains("outside the project"));
                    assertEquals(1, runs.get());

                    explicit[0] = true;
                    McpClient.ToolResult allowed = client.run("read_file", "{\"path\":\"" + outside + "\"}");
                    assertFalse(allowed.text(), allowed.isError());
                    assertEquals("outside", allowed.text());
                    assertEquals(2, runs.get());
                }
                List<AuditRecord> log = fixture.servers.auditLog();
                assertEquals(3, log.size());
                assertEquals(AuditRecord.Decision.DENIED, log.get(1).verdict());
                assertEquals(AuditRecord.Decision.ALLOWED, log.get(2).verdict());
            }
        } finally {
            TestSupport.deleteRecursively(temp);
        }
    }

    @Test
    public void everyKnobIsAcceptedAndBadOnesAreRefused() throws Exception {
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null, options -> options
                .maxConnectionsPerServer(8).maxConnectionsPerPeer(4).maxUnauthenticatedConnections(4).maxStringBytes(1 << 20).maxArrayLength(1000).maxObjectKeys(1000)
                .maxDepth(32).maxArgumentBytes(1 << 16).maxResultBytes(1 << 20).maxBadMessages(4)
                .auditCapacity(10).confirmationTimeout(Duration.ofSeconds(5)).admissionTimeout(Duration.ofSeconds(5))
                .rejectionCooldown(Duration.ofSeconds(1)).firstMessageTimeout(Duration.ofSeconds(5))
                .headerTimeout(Duration.ofSeconds(5)).bodyTimeout(Duration.ofSeconds(5))
                .idleTimeout(Duration.ofMinutes(5)).writeTimeout(Duration.ofSeconds(5))
                .maxFrameBytes(Contract.MAX_FRAME_BYTES))) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            try (McpClient client = fixture.client(Server.CODE)) {
                client.ping();
            }
        }
        for (java.util.function.Consumer<IdeMcpServers.Options.Builder> bad : List.<java.util.function.Consumer<IdeMcpServers.Options.Builder>>of(
                options -> options.maxFrameBytes(Contract.MAX_FRAME_BYTES + 1),
                options -> options.idleTimeout(Duration.ZERO),
                options -> options.maxDepth(0))) {
            try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null, bad)) {
                org.junit.Assert.fail("a bad option was accepted: " + fixture.servers.directory());
            } catch (IllegalArgumentException expected) {
                // refused by name
            }
        }
    }
}
