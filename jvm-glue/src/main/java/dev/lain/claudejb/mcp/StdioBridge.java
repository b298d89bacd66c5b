package dev.lain.claudejb.mcp;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * For MCP clients that only speak stdio:
 * {@code java -cp <plugin dir>/lib/* dev.lain.claudejb.mcp.StdioBridge <dir>/code.sock}.
 *
 * <p>Reads JSON-RPC messages, one per line, on stdin; adds the current token from the
 * {@code token} file beside the socket; forwards them to the socket; writes every reply as one
 * line on stdout, and nothing else there. A request answered with {@link Contract#REQUEST_REJECTED}
 * is sent once more after re-reading the token file (it rotates). A line that is not JSON gets
 * a parse error reply. On stdin's end, it waits briefly for the replies still due, then exits.
 * Diagnostics go to stderr. Pure JDK (17+), no dependencies.
 */
public final class StdioBridge {
    private static final long REPLY_GRACE_MILLIS = 10_000;

    private final LineChannel channel;
    private final Path tokenFile;
    private final OutputStream stdout;
    private volatile String token;
    /** Requests sent and not yet answered, by the JSON text of their id, for the one retry. */
    private final Map<String, Map<String, Object>> inFlight = new ConcurrentHashMap<>();
    private final Map<String, Boolean> retried = new ConcurrentHashMap<>();
    private volatile boolean serverClosed;

    StdioBridge(LineChannel channel, Path tokenFile, OutputStream stdout) throws IOException {
        this.channel = channel;
        this.tokenFile = tokenFile;
        this.stdout = stdout;
        this.token = McpClient.readToken(tokenFile);
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: java dev.lain.claudejb.mcp.StdioBridge <path to a .sock file>");
            System.exit(2);
        }
        // Everything on stdout is protocol: make sure nothing else can end up there.
        PrintStream protocolOut = System.out;
        System.setOut(System.err);
        Path socket = Paths.get(args[0]).toAbsolutePath();
        try (LineChannel channel = LineChannel.connect(socket)) {
            StdioBridge bridge = new StdioBridge(channel, socket.getParent().resolve(Contract.TOKEN_FILE_NAME), protocolOut);
            bridge.run(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
        } catch (IOException e) {
            System.err.println("ide-mcp bridge: " + e.getMessage());
            System.exit(1);
        }
        System.exit(0);
    }

    void run(BufferedReader stdin) throws IOException {
        Thread replies = new Thread(this::forwardReplies, "ide-mcp-bridge-replies");
        replies.setDaemon(true);
        replies.start();
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.trim().isEmpty()) {
                continue;
            }
            forwardRequest(line);
            if (serverClosed) {
                break;
            }
        }
        awaitOutstandingReplies(replies);
    }

    private void awaitOutstandingReplies(Thread replies) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REPLY_GRACE_MILLIS);
        while (!inFlight.isEmpty() && !serverClosed && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        try {
            channel.shutdownOutput();
            replies.join(1000);
        } catch (IOException | InterruptedException ignored) {
            // Exiting anyway.
        }
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
        if (!(parsed instanceof Map)) {
            // A batch or a scalar: the servers answer it; nothing to attach a token to.
            channel.writeLine(Json.write(parsed));
            return;
        }
        Map<String, Object> message = (Map<String, Object>) parsed;
        if (message.containsKey("id") && message.containsKey("method")) {
            inFlight.put(Json.write(message.get("id")), message);
        }
        channel.writeLine(Json.write(withToken(message)));
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
                if (parsed instanceof Map && !((Map<String, Object>) parsed).containsKey("method")) {
                    Map<String, Object> reply = (Map<String, Object>) parsed;
                    String id = Json.write(reply.get("id"));
                    Object error = reply.get("error");
                    if (error instanceof Map
                            && Contract.REQUEST_REJECTED.equals(((Map<String, Object>) error).get("message"))
                            && inFlight.containsKey(id) && retried.putIfAbsent(id, Boolean.TRUE) == null) {
                        token = McpClient.readToken(tokenFile);
                        channel.writeLine(Json.write(withToken(inFlight.get(id))));
                        continue;
                    }
                    inFlight.remove(id);
                    retried.remove(id);
                }
                writeStdout(line);
            }
        } catch (IOException e) {
            System.err.println("ide-mcp bridge: " + e.getMessage());
        } finally {
            serverClosed = true;
        }
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
