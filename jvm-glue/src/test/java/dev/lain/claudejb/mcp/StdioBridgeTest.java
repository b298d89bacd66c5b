package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** The stdio bridge as a child JVM, driven through its stdin and stdout. */
public class StdioBridgeTest {
    private static Process startBridge(String socket) throws Exception {
        return new ProcessBuilder(TestSupport.javaCommand(TestSupport.mainClasspath(), List.of(),
                        StdioBridge.class.getName(), socket))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"stdio-test\",\"version\":\"1\"}}}";

    @SuppressWarnings("unchecked")
    private static Map<String, Object> reply(BufferedReader stdout) throws Exception {
        String line = stdout.readLine();
        assertTrue("the bridge answered", line != null);
        return (Map<String, Object>) Json.parse(line);
    }

    @SuppressWarnings("unchecked")
    private static Object errorCode(Map<String, Object> reply) {
        return ((Map<String, Object>) reply.get("error")).get("code");
    }

    @Test
    @SuppressWarnings("unchecked")
    public void aRequestCancelledAfterARotationIsNeverSentAgain() throws Exception {
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.BlockingQueue<AdmissionAnswer> admissions = new java.util.concurrent.ArrayBlockingQueue<>(4);
        // The bridge is held at admission until everything below is in its hands, so it reads the
        // cancellation before the rejection of the request it cancels can come back.
        Host holding = new Host() {
            @Override
            public void unexpectedClient(UnexpectedClient client, AdmissionAnswer answer) {
                admissions.add(answer);
            }
        };
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), holding,
                options -> options.tokenOverlap(Duration.ZERO))) {
            fixture.servers.registerDomain(Fixture.oneTool(TestDomains.echo(runs)));
            Process bridge = startBridge(fixture.servers.socketPath(Server.CODE).toString());
            try {
                BufferedReader stdout = new BufferedReader(new InputStreamReader(bridge.getInputStream(), StandardCharsets.UTF_8));
                OutputStream stdin = bridge.getOutputStream();
                AdmissionAnswer admission = admissions.poll(20, TimeUnit.SECONDS);
                assertTrue("the bridge was announced", admission != null);
                send(stdin, INITIALIZE);
                send(stdin, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
                send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":{\"name\":\"run\","
                        + "\"arguments\":{\"tool\":\"echo\",\"args\":{}}}}");
                send(stdin, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"c1\"}}");
                // The bridge answers a line that is not JSON itself, after the lines before it.
                send(stdin, "a line that is not json");
                assertEquals(new java.math.BigDecimal(-32700), errorCode(reply(stdout)));
                fixture.servers.rotateToken(); // no overlap: everything the bridge sent is rejected
                CompletableFuture.runAsync(() -> assertTrue(admission.allow())).get(5, TimeUnit.SECONDS);

                assertTrue("initialize is sent again with the new token", reply(stdout).containsKey("result"));
                send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{}}");
                stdin.close(); // the bridge waits for the replies still due, then exits
                List<String> rest = new ArrayList<>();
                String line;
                while ((line = stdout.readLine()) != null) {
                    rest.add(line);
                }
                assertTrue(bridge.waitFor(30, TimeUnit.SECONDS));
                assertEquals(rest.toString(), 1, rest.size());
                assertEquals(new java.math.BigDecimal(2), ((Map<String, Object>) Json.parse(rest.get(0))).get("id"));
                assertEquals("the cancelled request ran", 0, runs.get());
            } finally {
                bridge.destroyForcibly();
            }
        }
    }

    @Test
    public void aLineOverTheCeilingGetsAnErrorWithItsIdAndTheNextLineIsServed() throws Exception {
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null, options -> { })) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            java.nio.file.Path errors = fixture.temp.resolve("bridge.err");
            // A heap far below the 300 MB line: holding it whole would be an OutOfMemoryError.
            Process bridge = new ProcessBuilder(TestSupport.javaCommand(TestSupport.mainClasspath(), List.of("-Xmx192m"),
                            StdioBridge.class.getName(), fixture.servers.socketPath(Server.CODE).toString()))
                    .redirectError(errors.toFile())
                    .start();
            try {
                BufferedReader stdout = new BufferedReader(new InputStreamReader(bridge.getInputStream(), StandardCharsets.UTF_8));
                OutputStream stdin = new java.io.BufferedOutputStream(bridge.getOutputStream(), 1 << 16);
                send(stdin, INITIALIZE);
                assertTrue(reply(stdout).containsKey("result"));
                long huge = 300L * 1024 * 1024;
                stdin.write("{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"ping\",\"params\":{\"pad\":\""
                        .getBytes(StandardCharsets.UTF_8));
                byte[] pad = new byte[1 << 20];
                java.util.Arrays.fill(pad, (byte) 'x');
                try {
                    for (long written = 0; written < huge; written += pad.length) {
                        stdin.write(pad);
                    }
                } catch (java.io.IOException e) {
                    throw new AssertionError("the bridge stopped reading: "
                            + new String(java.nio.file.Files.readAllBytes(errors), StandardCharsets.UTF_8), e);
                }
                send(stdin, "\"}}");
                stdin.flush();
                String refusedLine = stdout.readLine();
                assertTrue("no reply; stderr: " + new String(java.nio.file.Files.readAllBytes(errors), StandardCharsets.UTF_8),
                        refusedLine != null);
                @SuppressWarnings("unchecked")
                Map<String, Object> refused = (Map<String, Object>) Json.parse(refusedLine);
                assertEquals(refused.toString(), "big", refused.get("id"));
                assertEquals(new java.math.BigDecimal(StdioBridge.LINE_TOO_LONG), errorCode(refused));
                assertTrue(refused.toString(), refused.toString().contains("longer than"));

                // Without an id in its first bytes: a message on stderr, no reply.
                byte[] noId = new byte[Contract.MAX_FRAME_BYTES + 10];
                java.util.Arrays.fill(noId, (byte) '[');
                stdin.write(noId);
                send(stdin, "");
                send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{}}");
                Map<String, Object> pong = reply(stdout);
                assertEquals("the next line is served", new java.math.BigDecimal(5), pong.get("id"));
                assertTrue(pong.toString(), pong.containsKey("result"));
                stdin.close();
                assertTrue(bridge.waitFor(15, TimeUnit.SECONDS));
                assertEquals(0, bridge.exitValue());
                String stderr = new String(java.nio.file.Files.readAllBytes(errors), StandardCharsets.UTF_8);
                assertTrue(stderr, stderr.contains("a line with no id"));
                assertTrue(stderr, !stderr.contains("OutOfMemoryError"));
            } finally {
                bridge.destroyForcibly();
            }
        }
    }

    @Test
    public void theIdOfALongLineIsReadFromItsFirstBytesOrNotAtAll() {
        byte[] start = "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"x\":{\"a\":[1,{\"id\":9}],\"s\":\"\\\"id\\\"\"},\"id\":42,\"params\":{\"p\":\"xxx"
                .getBytes(StandardCharsets.UTF_8);
        assertEquals("42", LeadingId.find(start));
        assertEquals("\"a b\"", LeadingId.find("{ \"id\" : \"a b\", \"params\": {".getBytes(StandardCharsets.UTF_8)));
        assertEquals(null, LeadingId.find("{\"params\":{\"p\":\"xxxxxxxxx".getBytes(StandardCharsets.UTF_8)));
        assertEquals("cut inside the id", null, LeadingId.find("{\"id\":12".getBytes(StandardCharsets.UTF_8)));
        assertEquals(null, LeadingId.find("{\"id\":true,".getBytes(StandardCharsets.UTF_8)));
        assertEquals(null, LeadingId.find("[[[[[[".getBytes(StandardCharsets.UTF_8)));
    }

    private static void send(OutputStream stdin, String line) throws Exception {
        stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    @SuppressWarnings("unchecked")
    @Test
    public void requestsCrossTheBridgeEvenAfterTheReaderBlockedAndTheTokenRotated() throws Exception {
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null,
                options -> options.tokenOverlap(Duration.ZERO))) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            Process bridge = startBridge(fixture.servers.socketPath(Server.CODE).toString());
            BufferedReader stdout = new BufferedReader(new InputStreamReader(bridge.getInputStream(), StandardCharsets.UTF_8));
            OutputStream stdin = bridge.getOutputStream();
            // The bridge's reply thread is blocked reading the socket by now; on JDK 17 a write
            // through a stream sharing that channel's lock would hang here forever.
            Thread.sleep(500);
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                    + "\"capabilities\":{},\"clientInfo\":{\"name\":\"stdio-test\",\"version\":\"1\"}}}");
            Map<String, Object> initialized = (Map<String, Object>) Json.parse(stdout.readLine());
            assertEquals(java.math.BigDecimal.ONE, initialized.get("id"));
            assertTrue(initialized.toString(), initialized.containsKey("result"));

            send(stdin, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            fixture.servers.rotateToken(); // no overlap: the bridge's token is dead now
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/call\",\"params\":{\"name\":\"domains\",\"arguments\":{}}}");
            Map<String, Object> domains = (Map<String, Object>) Json.parse(stdout.readLine());
            assertEquals("two", domains.get("id"));
            assertTrue(domains.toString(), domains.containsKey("result"));
            assertTrue(domains.toString(), domains.toString().contains("files"));

            send(stdin, "this is not json");
            Map<String, Object> parseError = (Map<String, Object>) Json.parse(stdout.readLine());
            assertEquals(new java.math.BigDecimal(-32700), ((Map<String, Object>) parseError.get("error")).get("code"));

            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{}}");
            stdin.close();
            List<String> rest = new ArrayList<>();
            String line;
            while ((line = stdout.readLine()) != null) {
                rest.add(line);
            }
            assertTrue("the bridge exits on stdin EOF", bridge.waitFor(15, TimeUnit.SECONDS));
            assertEquals(0, bridge.exitValue());
            assertEquals(rest.toString(), 1, rest.size());
            Map<String, Object> pong = (Map<String, Object>) Json.parse(rest.get(0));
            assertEquals(new java.math.BigDecimal(3), pong.get("id"));
            String token = McpClient.readToken(fixture.servers.directory().resolve(Contract.TOKEN_FILE_NAME));
            assertTrue("the token never reaches stdout", !rest.get(0).contains(token));
        }
    }

    /** The bridge started as `StdioBridge --project DIR SERVER`, with the library the tests load. */
    private static Process startBridgeForProject(Path directory, String server) throws Exception {
        return startBridgeForProject(directory, server, System.getProperty(NativeLoader.LIBRARY_PROPERTY));
    }

    private static Process startBridgeForProject(Path directory, String server, String library) throws Exception {
        return new ProcessBuilder(TestSupport.javaCommand(TestSupport.mainClasspath(),
                        List.of("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + library),
                        StdioBridge.class.getName(), "--project", directory.toString(), server))
                .start();
    }

    @Test
    public void withProjectAndNoNativeLibraryTheBridgeSaysSoInOneLine() throws Exception {
        Path project = Files.createTempDirectory("mcp-bridge-no-library").toRealPath();
        try {
            Process bridge = startBridgeForProject(project, "code", project.resolve("missing.so").toString());
            bridge.getOutputStream().close();
            String stderr = new String(bridge.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue("the bridge gives up", bridge.waitFor(15, TimeUnit.SECONDS));
            assertEquals(stderr, 1, bridge.exitValue());
            assertTrue(stderr, stderr.startsWith("ide-mcp bridge: --project needs the native library"));
            assertTrue(stderr, stderr.contains("missing.so"));
            assertEquals("one line, no stack trace: " + stderr, 1, stderr.strip().lines().count());
            assertEquals("nothing on stdout", -1, bridge.getInputStream().read());
        } finally {
            TestSupport.deleteRecursively(project);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    public void withProjectTheBridgeFindsTheSetThatServesTheDirectoryAndOtherwiseSaysWhy() throws Exception {
        Path project = Files.createTempDirectory("mcp-bridge-project").toRealPath();
        Path elsewhere = Files.createTempDirectory("mcp-bridge-elsewhere").toRealPath();
        try (Fixture fixture = new Fixture(SecurityGuard.allowAll(), null, options -> options.projectRoots(project))) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            // A directory inside the project: the set registered under its root serves it.
            Process bridge = startBridgeForProject(Files.createDirectories(project.resolve("src/main")), "code");
            BufferedReader stdout = new BufferedReader(new InputStreamReader(bridge.getInputStream(), StandardCharsets.UTF_8));
            OutputStream stdin = bridge.getOutputStream();
            send(stdin, INITIALIZE);
            Map<String, Object> initialized = reply(stdout);
            assertTrue(initialized.toString(), initialized.containsKey("result"));
            send(stdin, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            send(stdin, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"domains\",\"arguments\":{}}}");
            Map<String, Object> domains = reply(stdout);
            assertTrue(domains.toString(), domains.toString().contains("files"));
            stdin.close();
            assertTrue("the bridge exits on stdin EOF", bridge.waitFor(15, TimeUnit.SECONDS));
            assertEquals(0, bridge.exitValue());

            // A server the set does not run, and a directory no set serves: exit 2, the reason on stderr.
            for (String[] lookup : new String[][] {{project.toString(), "ops"}, {elsewhere.toString(), "code"}}) {
                Process refused = startBridgeForProject(Paths.get(lookup[0]), lookup[1]);
                refused.getOutputStream().close();
                String stderr = new String(refused.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue("the bridge gives up", refused.waitFor(15, TimeUnit.SECONDS));
                assertEquals(stderr, 2, refused.exitValue());
                assertTrue(stderr, stderr.contains(lookup[1].equals("ops") ? "has no `ops` server" : "no live IDE MCP server set serves"));
                assertEquals("nothing on stdout", -1, refused.getInputStream().read());
            }
        } finally {
            TestSupport.deleteRecursively(project);
            TestSupport.deleteRecursively(elsewhere);
        }
    }
}
