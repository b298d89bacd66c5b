package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
}
