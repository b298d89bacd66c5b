package dev.lain.claudejb.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * For MCP clients that only speak stdio:
 * {@code java -cp <plugin dir>/lib/* dev.lain.claudejb.mcp.StdioBridge <dir>/code.sock}.
 *
 * <p>Reads JSON-RPC messages, one per line, on stdin; adds the current token from the
 * {@code token} file beside the socket; forwards them to the socket; writes every reply as one
 * line on stdout, and nothing else there. A request answered with {@link Contract#REQUEST_REJECTED}
 * is sent once more after re-reading the token file (it rotates) — unless the client cancelled
 * it meanwhile: a cancelled request is never sent again, and its rejection is not passed on. A
 * cancellation itself goes out with a freshly read token. A line that is not JSON gets a parse
 * error reply; a line longer than the frame ceiling ({@link Contract#MAX_FRAME_BYTES}) is
 * dropped as it arrives, never held whole, and gets an error reply with its id when the id can
 * be read from the line's first bytes (else a message on stderr); the next line is served as
 * usual. On stdin's end, it waits briefly for the replies still due, then exits. Diagnostics go
 * to stderr. Pure JDK (17+), no dependencies.
 */
public final class StdioBridge {
    private static final long REPLY_GRACE_MILLIS = 10_000;
    /** Messages from stdin waiting for the socket; more make the reading of stdin wait. */
    private static final int MAX_QUEUED_MESSAGES = 256;
    /** The error code of a line over the ceiling: an invalid request. */
    static final int LINE_TOO_LONG = -32600;

    private final LineChannel channel;
    private final Path tokenFile;
    private final OutputStream stdout;
    private final int maxLineBytes;
    private volatile String token;
    /**
     * Guards the three maps below and the order of what is queued for the socket: a retry and a
     * cancellation of the same request are decided, and queued, one after the other.
     */
    private final Object lock = new Object();
    /** Requests sent and not yet answered, by the JSON text of their id, for the one retry. */
    private final Map<String, Map<String, Object>> inFlight = new HashMap<>();
    private final Set<String> retried = new HashSet<>();
    /** Requests the client cancelled whose reply may still come: a rejection of one is dropped. */
    private final Set<String> cancelled = new HashSet<>();
    /** What goes to the socket, in order, written by one thread (so no reader ever waits on a write). */
    private final BlockingQueue<Outgoing> toServer = new LinkedBlockingQueue<>();
    private final Semaphore room = new Semaphore(MAX_QUEUED_MESSAGES);
    private volatile boolean serverClosed;

    /** One message for the socket; {@code fromStdin} ones hold a place in {@link #room}. */
    private static final class Outgoing {
        static final Outgoing END = new Outgoing(null, false);
        final String line;
        final boolean fromStdin;

        Outgoing(String line, boolean fromStdin) {
            this.line = line;
            this.fromStdin = fromStdin;
        }
    }

    StdioBridge(LineChannel channel, Path tokenFile, OutputStream stdout) throws IOException {
        this(channel, tokenFile, stdout, Contract.MAX_FRAME_BYTES);
    }

    StdioBridge(LineChannel channel, Path tokenFile, OutputStream stdout, int maxLineBytes) throws IOException {
        this.channel = channel;
        this.tokenFile = tokenFile;
        this.stdout = stdout;
        this.maxLineBytes = maxLineBytes;
        this.token = McpClient.readToken(tokenFile);
    }

    public static void main(String[] args) {
        boolean byProject = args.length == 3 && "--project".equals(args[0]);
        if (args.length != 1 && !byProject) {
            System.err.println("usage: java dev.lain.claudejb.mcp.StdioBridge <path to a .sock file>");
            System.err.println("       java dev.lain.claudejb.mcp.StdioBridge --project <directory> <server>");
            System.exit(2);
        }
        // Everything on stdout is protocol: make sure nothing else can end up there.
        PrintStream protocolOut = System.out;
        System.setOut(System.err);
        Path socket;
        Path tokenFile;
        if (byProject) {
            // The live set that serves the directory now, from the per-user registry: the same
            // lookup as the native `ide-mcp bridge --project`, so the entry survives restarts.
            String[] endpoint;
            try {
                endpoint = Native.liveSetEndpoint(args[1], args[2]);
            } catch (McpException | IllegalArgumentException e) {
                System.err.println("ide-mcp bridge: " + e.getMessage());
                System.exit(2);
                return;
            } catch (LinkageError e) {
                // Only this mode needs the native library; without it there is nothing to
                // look up, which one line says better than a stack trace.
                System.err.println("ide-mcp bridge: --project needs the native library, which could not be loaded: "
                        + e.getMessage());
                System.exit(1);
                return;
            }
            socket = Paths.get(endpoint[0]);
            tokenFile = Paths.get(endpoint[1]);
        } else {
            socket = Paths.get(args[0]).toAbsolutePath();
            tokenFile = socket.getParent().resolve(Contract.TOKEN_FILE_NAME);
        }
        try (LineChannel channel = LineChannel.connect(socket)) {
            StdioBridge bridge = new StdioBridge(channel, tokenFile, protocolOut);
            bridge.run(System.in);
        } catch (IOException e) {
            System.err.println("ide-mcp bridge: " + e.getMessage());
            System.exit(1);
        }
        System.exit(0);
    }

    void run(InputStream stdin) throws IOException {
        Thread replies = new Thread(this::forwardReplies, "ide-mcp-bridge-replies");
        replies.setDaemon(true);
        replies.start();
        Thread sender = new Thread(this::sendToServer, "ide-mcp-bridge-sender");
        sender.setDaemon(true);
        sender.start();
        BoundedLineReader lines = new BoundedLineReader(stdin, maxLineBytes);
        BoundedLineReader.Line line;
        while ((line = lines.next()) != null && !serverClosed) {
            if (line.tooLong()) {
                refuseTooLong(line);
            } else if (!line.text.trim().isEmpty()) {
                forwardRequest(line.text);
            }
        }
        awaitOutstandingReplies(replies, sender);
    }

    private void awaitOutstandingReplies(Thread replies, Thread sender) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REPLY_GRACE_MILLIS);
        while (outstanding() && !serverClosed && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        toServer.add(Outgoing.END);
        try {
            sender.join(1000);
            replies.join(1000);
        } catch (InterruptedException ignored) {
            // Exiting anyway.
        }
    }

    private boolean outstanding() {
        synchronized (lock) {
            return !inFlight.isEmpty();
        }
    }

    /** The one writer of the socket; after {@link Outgoing#END} it ends the sending direction. */
    private void sendToServer() {
        try {
            while (true) {
                Outgoing next = toServer.take();
                if (next == Outgoing.END) {
                    channel.shutdownOutput();
                    return;
                }
                try {
                    channel.writeLine(next.line);
                } finally {
                    if (next.fromStdin) {
                        room.release();
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("ide-mcp bridge: " + e.getMessage());
            serverClosed = true;
            room.release(MAX_QUEUED_MESSAGES); // stdin's reader must not wait for a writer that is gone
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A line over the ceiling: an error for its id when its first bytes name one, else a word on stderr. */
    private void refuseTooLong(BoundedLineReader.Line line) throws IOException {
        String id = LeadingId.find(line.prefix);
        String message = "the line is " + line.length + " bytes, longer than the bridge's limit of " + maxLineBytes
                + " bytes (the frame ceiling); it was dropped";
        if (id == null) {
            System.err.println("ide-mcp bridge: a line with no id in its first " + BoundedLineReader.PREFIX_BYTES
                    + " bytes: " + message);
            return;
        }
        writeStdout(errorReply(Json.parse(id), LINE_TOO_LONG, message));
    }

    @SuppressWarnings("unchecked")
    private void forwardRequest(String line) throws IOException {
        Object parsed;
        try {
            parsed = Json.parse(line);
        } catch (IllegalArgumentException e) {
            writeStdout(errorReply(null, -32700, "Parse error: " + e.getMessage()));
            return;
        }
        try {
            room.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
        if (!(parsed instanceof Map)) {
            // A batch or a scalar: the servers answer it; nothing to attach a token to.
            toServer.add(new Outgoing(Json.write(parsed), true));
            return;
        }
        Map<String, Object> message = (Map<String, Object>) parsed;
        synchronized (lock) {
            if (message.containsKey("id") && message.containsKey("method")) {
                inFlight.put(Json.write(message.get("id")), message);
            } else if ("notifications/cancelled".equals(message.get("method"))) {
                Object params = message.get("params");
                Object requestId = params instanceof Map ? ((Map<String, Object>) params).get("requestId") : null;
                String key = Json.write(requestId);
                if (inFlight.remove(key) != null) {
                    retried.remove(key);
                    cancelled.add(key);
                }
                // Whatever token the request went with, the cancellation goes with the current one.
                token = McpClient.readToken(tokenFile);
            }
            toServer.add(new Outgoing(Json.write(withToken(message)), true));
        }
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> withToken(Map<String, Object> message) {
        Object params = message.get("params");
        if (params != null && !(params instanceof Map)) {
            return message; // positional params have no _meta; the server will say what is wrong
        }
        Map<String, Object> copy = new LinkedHashMap<>(message);
        Map<String, Object> newParams = params == null ? new LinkedHashMap<>() : new LinkedHashMap<>((Map<String, Object>) params);
        Object meta = newParams.get("_meta");
        Map<String, Object> newMeta = meta instanceof Map ? new LinkedHashMap<>((Map<String, Object>) meta) : new LinkedHashMap<>();
        newMeta.put(Contract.TOKEN_META_KEY, token);
        newParams.put("_meta", newMeta);
        copy.put("params", newParams);
        return copy;
    }

    @SuppressWarnings("unchecked")
    private void forwardReplies() {
        try {
            String line;
            while ((line = channel.readLine()) != null) {
                Object parsed;
                try {
                    parsed = Json.parse(line);
                } catch (IllegalArgumentException e) {
                    writeStdout(line);
                    continue;
                }
                if (parsed instanceof Map && !((Map<String, Object>) parsed).containsKey("method")
                        && !passOn((Map<String, Object>) parsed)) {
                    continue;
                }
                writeStdout(line);
            }
        } catch (IOException e) {
            System.err.println("ide-mcp bridge: " + e.getMessage());
        } finally {
            serverClosed = true;
        }
    }

    /**
     * Settles a reply against the requests in flight: false when it is not for the client — a
     * rejection answered by sending the request again with the new token, or the rejection of a
     * request the client cancelled.
     */
    @SuppressWarnings("unchecked")
    private boolean passOn(Map<String, Object> reply) throws IOException {
        String id = Json.write(reply.get("id"));
        Object error = reply.get("error");
        boolean rejected = error instanceof Map
                && Contract.REQUEST_REJECTED.equals(((Map<String, Object>) error).get("message"));
        synchronized (lock) {
            if (rejected && cancelled.remove(id)) {
                return false; // cancelled: it never ran, and it is not sent again
            }
            cancelled.remove(id);
            Map<String, Object> request = inFlight.get(id);
            if (rejected && request != null && retried.add(id)) {
                token = McpClient.readToken(tokenFile);
                toServer.add(new Outgoing(Json.write(withToken(request)), false));
                return false;
            }
            inFlight.remove(id);
            retried.remove(id);
        }
        return true;
    }

    private static String errorReply(Object id, long code, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("jsonrpc", "2.0");
        reply.put("id", id);
        reply.put("error", error);
        return Json.write(reply);
    }

    private void writeStdout(String line) throws IOException {
        byte[] bytes = (line + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (stdout) {
            stdout.write(bytes);
            stdout.flush();
        }
    }
}
