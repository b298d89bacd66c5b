package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.junit.Test;

/** Panics and exceptions at the boundary leave the JVM and the servers working. */
public class NativeFailureTest {

    @Test
    public void aPanicInsideANativeCallBecomesAnMcpExceptionAndTheJvmLivesOn() throws Exception {
        try (Fixture fixture = new Fixture()) {
            try {
                Native.TESTING_panicInNativeCall("deliberate \uD83D\uDE00");
                fail("expected an exception");
            } catch (McpException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("panic"));
                assertTrue(e.getMessage(), e.getMessage().contains("deliberate \uD83D\uDE00"));
            }
            // The library still works.
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            try (McpClient client = fixture.client(Server.CODE)) {
                assertTrue(client.domains().contains("files"));
            }
        }
    }

    @Test
    public void aRustHandlerThatPanicsIsAnErrorResult() throws Exception {
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            Native.TESTING_registerPanickingTool(handleOf(fixture.servers), "code", "crash", "boom");
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("boom", "{}");
                assertTrue(result.isError());
                assertTrue(result.text(), result.text().contains("crashed"));
                assertTrue(client.domains().contains("files"));
            }
        }
    }

    @Test
    public void aJavaExceptionInACallbackIsTakenAsAValueOnTheCallingThread() throws Exception {
        try (Fixture fixture = new Fixture()) {
            assertTrue("the callbacks are resolved by a start", fixture.servers.liveServers().isEmpty());
            String caught = Native.TESTING_callThrowingJava("thrown on purpose");
            assertEquals("java.lang.IllegalStateException: thrown on purpose", caught);
        }
    }

    @Test
    public void aJavaExceptionInACallbackIsTakenAsAValueOnACallbackThread() throws Exception {
        try (Fixture fixture = new Fixture()) {
            assertTrue("the callback threads start with a server set", fixture.servers.liveServers().isEmpty());
            String caught = Native.TESTING_callThrowingJavaOnCallbackThread("thrown on a callback thread");
            assertEquals("java.lang.IllegalStateException: thrown on a callback thread", caught);
        }
    }

    @Test
    public void aStaleHandleIsAnIllegalStateException() throws Exception {
        Fixture fixture = new Fixture();
        long handle = handleOf(fixture.servers);
        fixture.close();
        try {
            Native.rotateToken(handle);
            fail("expected an exception");
        } catch (IllegalStateException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(Long.toString(handle)));
        }
        try {
            Native.stop(handle);
            fail("a second stop must throw");
        } catch (IllegalStateException expected) {
            // A double free is an exception, not a crash.
        }
        try {
            fixture.servers.rotateToken();
            fail("expected an exception");
        } catch (IllegalStateException expected) {
            // The Java side knows it is stopped too.
        }
    }

    @Test
    public void badInputIsAnIllegalArgumentException() throws Exception {
        try (Fixture fixture = new Fixture()) {
            try {
                fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("bad").description("Bad schema")
                        .inputSchema("{not json").handler(context -> { }).build()));
                fail("expected an exception");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("bad"));
            }
            try {
                Native.start("{\"bases\":[\"/tmp\"],\"noSuchKnob\":1}", SecurityGuard.allowAll(), null);
                fail("expected an exception");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("noSuchKnob"));
            }
            try {
                Native.start("{\"bases\":[\"/tmp\"]}", null, null);
                fail("expected an exception");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("Security Guard"));
            }
        }
    }

    @Test
    public void anInvalidSchemaIsAServerError() throws Exception {
        try (Fixture fixture = new Fixture()) {
            try {
                fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("bad").description("Bad schema")
                        .inputSchema("{\"type\":\"no-such-type\"}").handler(context -> { }).build()));
                fail("expected an exception");
            } catch (McpException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("bad"));
            }
        }
    }

    static long handleOf(IdeMcpServers servers) throws Exception {
        java.lang.reflect.Field field = IdeMcpServers.class.getDeclaredField("handle");
        field.setAccessible(true);
        return field.getLong(servers);
    }
}
