package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.Test;

/**
 * The decode budget of the Java codecs: a message that would expand into a huge value is refused
 * while it is decoded, with the Rust decoders' words, before the value exists. The bytes the
 * decoding thread allocates are measured ({@code com.sun.management.ThreadMXBean}): they bound
 * the heap the decode ever held, whatever the collector did meanwhile.
 */
public class DecodeBudgetTest {
    /** The bound a refused decode is held to: what it allocated, garbage included. */
    private static long allocationBound(int inputChars) {
        return 3 * DecodeBudget.defaultFor(inputChars) + 4L * inputChars;
    }

    private static com.sun.management.ThreadMXBean threads() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue("this JVM measures the bytes a thread allocates", threads.isThreadAllocatedMemorySupported());
        threads.setThreadAllocatedMemoryEnabled(true);
        return threads;
    }

    /** Runs {@code decode}, which must be refused by the budget, and returns the bytes it allocated. */
    private static long refusedAllocating(String what, int inputChars, Supplier<Object> decode) {
        com.sun.management.ThreadMXBean threads = threads();
        long thread = Thread.currentThread().getId();
        long started = System.nanoTime();
        long before = threads.getThreadAllocatedBytes(thread);
        try {
            decode.get();
            fail(what + " was decoded");
        } catch (IllegalArgumentException expected) {
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            String budget = "would take more than " + DecodeBudget.defaultFor(inputChars) + " bytes to decode";
            assertTrue(expected.getMessage(), expected.getMessage().contains(budget));
            assertTrue(expected.getMessage(), expected.getMessage().contains("send less"));
            assertTrue(what + ": " + allocated + " bytes allocated for " + inputChars + " chars",
                    allocated <= allocationBound(inputChars));
            assertTrue(what + " took " + millis + " ms", millis < 5_000);
            System.out.println(what + ": " + inputChars + " chars, refused after " + allocated
                    + " bytes allocated, " + millis + " ms");
            return allocated;
        }
        throw new AssertionError("unreachable");
    }

    /** {@code items[rows]{<key>}:} and {@code rows} one-cell rows. */
    private static String longKeyTable(int keyChars, int rows) {
        StringBuilder text = new StringBuilder(keyChars + 4 * rows + 32);
        text.append("items[").append(rows).append("]{");
        for (int i = 0; i < keyChars; i++) {
            text.append('k');
        }
        text.append("}:\n");
        for (int i = 0; i < rows; i++) {
            text.append("  1\n");
        }
        return text.toString();
    }

    /** {@code prefix} then {@code 1,1,1,…} up to {@code chars}, then {@code suffix}. */
    private static String dense(String prefix, int chars, String suffix) {
        StringBuilder text = new StringBuilder(chars + prefix.length() + suffix.length());
        text.append(prefix).append('1');
        while (text.length() < prefix.length() + chars) {
            text.append(",1");
        }
        return text.append(suffix).toString();
    }

    @Test
    @SuppressWarnings("unchecked")
    public void rowsShareTheirTableKeySoALongKeyDoesNotMultiply() {
        // The document that would copy a 1 MiB key into each of 2,000 rows in a decoder that
        // copies keys: here every row holds the header's one String, and the value stays small.
        String text = longKeyTable(1024 * 1024, 2000);
        com.sun.management.ThreadMXBean threads = threads();
        long thread = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(thread);
        Map<String, Object> value = (Map<String, Object>) Toon.decode(text);
        long allocated = threads.getThreadAllocatedBytes(thread) - before;
        List<Map<String, Object>> rows = (List<Map<String, Object>>) value.get("items");
        assertEquals(2000, rows.size());
        String key = rows.get(0).keySet().iterator().next();
        assertEquals(1024 * 1024, key.length());
        for (Map<String, Object> row : rows) {
            assertSame(key, row.keySet().iterator().next());
        }
        assertTrue(allocated + " bytes allocated", allocated <= allocationBound(text.length()));
    }

    @Test
    public void aTableOfMoreRowsThanTheBudgetHoldsIsRefusedWhileItIsRead() {
        // Each four-char row is a list slot, a map, an entry and a number: ~48 bytes per char.
        String text = longKeyTable(1024 * 1024, 250_000);
        refusedAllocating("a long-key table of 250,000 rows", text.length(), () -> Toon.decode(text));
    }

    @Test
    public void aDenseToonArrayIsRefusedWhileItIsRead() {
        String text = dense("a[1000000]: ", 2_000_000, "");
        refusedAllocating("a dense TOON array", text.length(), () -> Toon.decode(text));
    }

    @Test
    public void aDenseJsonArrayIsRefusedWhileItIsRead() {
        String text = dense("{\"a\":[", 2_000_000, "]}");
        refusedAllocating("a dense JSON array", text.length(), () -> Json.parse(text));
    }

    @Test
    public void manyBlankLinesAreCharged() {
        // Strict mode remembers where blank lines are; a document of nothing else is charged too.
        StringBuilder text = new StringBuilder("a: 1\n");
        for (int i = 0; i < 100_000; i++) {
            text.append('\n');
        }
        try {
            Toon.decode(text.toString(), 2, true, 64 * 1024);
            fail("accepted");
        } catch (Toon.DecodeException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("would take more than 65536 bytes"));
        }
        assertEquals(Map.of("a", new java.math.BigDecimal("1")), Toon.decode(text.toString()));
    }

    @Test
    public void theBudgetCanBeSetOrTurnedOff() {
        String text = "a: hello\nb[3]: 1,2,3";
        try {
            Toon.decode(text, 2, true, 64);
            fail("accepted within 64 bytes");
        } catch (Toon.DecodeException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("would take more than 64 bytes to decode"));
            assertEquals(1, expected.line);
        }
        Object value = Toon.decode(text, 2, true, DecodeBudget.UNLIMITED);
        assertEquals(Json.parse("{\"a\":\"hello\",\"b\":[1,2,3]}"), value);
        try {
            Json.parse("{\"a\":\"hello\"}", 16);
            fail("accepted within 16 bytes");
        } catch (Json.ParseException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().startsWith(
                    "the message would take more than 16 bytes to decode (1\u00d7 its size); send less at offset "));
        }
        assertEquals(value, Json.parse(Json.write(value), DecodeBudget.UNLIMITED));
    }

    @Test
    public void aTableStopsAtTheFirstRowPastTheBudget() {
        // A budget that holds the table with three rows: the same table with four is refused at
        // its fourth row, whose charge comes before the row is built.
        String three = "t[3]{a,b}:\n  1,2\n  3,4\n  5,6";
        String four = "t[4]{a,b}:\n  1,2\n  3,4\n  5,6\n  7,8";
        long needed = minimalBudget(three);
        try {
            Toon.decode(four, 2, true, needed);
            fail("four rows decoded within what three take");
        } catch (Toon.DecodeException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("bytes to decode"));
            assertEquals(expected.getMessage(), 5, expected.line);
        }
    }

    /** The smallest budget that decodes {@code text}: what the decoder charges for it. */
    private static long minimalBudget(String text) {
        long low = 0;
        long high = DecodeBudget.defaultFor(text.length());
        Toon.decode(text, 2, true, high);
        while (low < high) {
            long middle = (low + high) / 2;
            try {
                Toon.decode(text, 2, true, middle);
                high = middle;
            } catch (Toon.DecodeException tooSmall) {
                low = middle + 1;
            }
        }
        return low;
    }

    /** A {@code tools/call} with a table of arguments and a long text, as a client sends it. */
    private static Map<String, Object> ordinaryMessage(int rows) {
        List<Object> table = new ArrayList<>();
        for (int i = 0; i < rows; i++) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", new java.math.BigDecimal(i));
            row.put("name", "file" + i + ".rs");
            row.put("line", new java.math.BigDecimal(i * 3));
            row.put("ok", Boolean.TRUE);
            table.add(row);
        }
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("rows", table);
        arguments.put("text", "x".repeat(100_000));
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("name", "edit");
        params.put("arguments", arguments);
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("jsonrpc", "2.0");
        message.put("id", new java.math.BigDecimal(7));
        message.put("method", "tools/call");
        message.put("params", params);
        return message;
    }

    @Test
    public void ordinaryMessagesDecodeWithinTheBudget() {
        Map<String, Object> message = ordinaryMessage(2000);
        assertEquals(message, Toon.decode(Toon.encode(message)));
        assertEquals(message, Json.parse(Json.write(message)));
    }

    @Test
    public void theCountStaysCloseToWhatTheValueTakes() {
        // The charges are the JDK's object sizes: the count of an ordinary table is within a
        // small factor of the heap the value really holds.
        Map<String, Object> message = ordinaryMessage(5000);
        String text = Toon.encode(message);
        long charged = minimalBudget(text);
        long retained = retainedBy(() -> Toon.decode(text));
        System.out.println("a table of 5,000 rows: " + text.length() + " chars, " + charged
                + " bytes charged, about " + retained + " retained");
        assertTrue(charged + " charged", charged < DecodeBudget.defaultFor(text.length()));
        // The heap measure is coarse (a collection may leave garbage behind): only a gross
        // under-count fails.
        assertTrue(charged + " charged, " + retained + " retained", retained <= 3 * charged);
    }

    /** About what the value {@code decode} returns holds on the heap. */
    private static long retainedBy(Supplier<Object> decode) {
        long before = usedAfterCollecting();
        Object value = decode.get();
        long after = usedAfterCollecting();
        assertNotNull(value);
        return after - before;
    }

    private static long usedAfterCollecting() {
        Runtime runtime = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return runtime.totalMemory() - runtime.freeMemory();
    }

    // ----- a client reading such a reply -----

    /**
     * Serves one connection on a thread of its own (joined by the test, so no thread outlives
     * it): reads the first request, answers {@code reply}, and holds the connection open until
     * the client closes it, so the client's failure is the decode's.
     */
    private static Thread serveOnce(ServerSocketChannel server, byte[] reply) {
        Thread thread = new Thread(() -> {
            try (SocketChannel connection = server.accept()) {
                if (connection.read(ByteBuffer.allocate(64 * 1024)) <= 0) {
                    return;
                }
                ByteBuffer answer = ByteBuffer.wrap(reply);
                while (answer.hasRemaining()) {
                    connection.write(answer);
                }
                connection.read(ByteBuffer.allocate(1));
            } catch (IOException ignored) {
                // The client closed the connection.
            }
        }, "decode-budget-server");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void aClientGetsAnIoException(McpClient.Wire wire, byte[] reply) throws Exception {
        Path directory = Files.createTempDirectory("decode-budget");
        Path socket = directory.resolve("s.sock");
        Files.write(directory.resolve(Contract.TOKEN_FILE_NAME), "token".getBytes(StandardCharsets.UTF_8));
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            Thread served = serveOnce(server, reply);
            try (McpClient client = McpClient.connect(socket, wire).timeout(Duration.ofSeconds(30))) {
                client.ping();
                fail("a ping was answered");
            } catch (IOException expected) {
                StringBuilder messages = new StringBuilder();
                for (Throwable cause = expected; cause != null; cause = cause.getCause()) {
                    messages.append(cause).append('\n');
                }
                assertTrue(messages.toString(), messages.toString().contains("bytes to decode"));
                assertTrue(messages.toString(), !messages.toString().contains("OutOfMemoryError"));
            }
            served.join(TimeUnit.SECONDS.toMillis(10));
            assertTrue("the server thread ended", !served.isAlive());
        } finally {
            TestSupport.deleteRecursively(directory);
        }
    }

    @Test
    public void aClientReadingAHugeFrameGetsAnIoException() throws Exception {
        String payload = dense("jsonrpc: \"2.0\"\nid: 1\nresult:\n  a[2000000]: ", 4_000_000, "");
        byte[] body = payload.getBytes(StandardCharsets.UTF_8);
        byte[] header = FrameChannel.header(body.length);
        byte[] frame = new byte[header.length + body.length];
        System.arraycopy(header, 0, frame, 0, header.length);
        System.arraycopy(body, 0, frame, header.length, body.length);
        aClientGetsAnIoException(McpClient.Wire.FRAMES, frame);
    }

    @Test
    public void aClientReadingAHugeLineGetsAnIoException() throws Exception {
        String line = dense("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":[", 4_000_000, "]}}\n");
        aClientGetsAnIoException(McpClient.Wire.NDJSON, line.getBytes(StandardCharsets.UTF_8));
    }
}
