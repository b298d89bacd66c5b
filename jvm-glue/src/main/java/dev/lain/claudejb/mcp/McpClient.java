package dev.lain.claudejb.mcp;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The reference client: connects to one server socket, authenticates with the token file
 * beside it, and calls the meta-tools. Replies are matched by id, so several calls may be in
 * flight at once (see {@link #startRun}).
 *
 * <p>By default it speaks the servers' native wire: length-prefixed frames
 * ({@code <len>\n<payload>}) carrying TOON ({@link Wire#FRAMES}). {@link Wire#NDJSON} speaks
 * newline-delimited JSON instead (the servers pick the wire by the first byte, {@code '{'});
 * both carry exactly the same JSON-RPC messages. Reading and writing use the socket channel's
 * own {@code read} and {@code write} from separate threads (see {@link FrameChannel}).
 *
 * <p>A request answered with {@link Contract#REQUEST_REJECTED} (the token rotated past its overlap) is
 * sent once more with the token re-read from the file.
 */
public final class McpClient implements AutoCloseable {
    /** Same as {@link Contract#TOKEN_META_KEY}. */
    public static final String TOKEN_META_KEY = Contract.TOKEN_META_KEY;
    public static final String PROTOCOL_VERSION = "2025-11-25";

    /** How messages travel on the connection. */
    public enum Wire {
        /** Length-prefixed frames with TOON payloads: the servers' native wire. */
        FRAMES,
        /** Newline-delimited JSON-RPC, for stock bridges. */
        NDJSON
    }

    private final MessageChannel channel;
    private final Wire wire;
    private final Path tokenFile;
    private volatile String token;
    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<Long, CompletableFuture<Map<String, Object>>> replies = new ConcurrentHashMap<>();
    private final Map<Long, Map<String, Object>> sent = new ConcurrentHashMap<>();
    private final Set<Long> retried = ConcurrentHashMap.newKeySet();
    private final Thread reader;
    private volatile Duration timeout = Duration.ofSeconds(60);
    private volatile String clientName = "ide-mcp-java-client";
    private volatile IOException failure;

    /** The outcome of {@code run}: the result text and whether it is an error result. */
    public static final class ToolResult {
        private final boolean isError;
        private final String text;

        ToolResult(boolean isError, String text) {
            this.isError = isError;
            this.text = text;
        }

        public boolean isError() { return isError; }

        public String text() { return text; }

        @Override
        public String toString() {
            return (isError ? "error: " : "") + text;
        }
    }

    /** A {@code run} in flight. */
    public static final class PendingRun {
        private final long id;
        private final CompletableFuture<ToolResult> result;

        PendingRun(long id, CompletableFuture<ToolResult> result) {
            this.id = id;
            this.result = result;
        }

        /** The request id, for {@link McpClient#cancel(long)}. */
        public long id() { return id; }

        public CompletableFuture<ToolResult> result() { return result; }
    }

    /** The server answered with a JSON-RPC error. */
    public static final class RpcException extends McpException {
        private static final long serialVersionUID = 1L;
        private final long code;

        RpcException(long code, String message) {
            super("the server answered with error " + code + ": " + message);
            this.code = code;
        }

        public long code() { return code; }
    }

    private McpClient(MessageChannel channel, Wire wire, Path tokenFile) throws IOException {
        this.channel = channel;
        this.wire = wire;
        this.tokenFile = tokenFile;
        this.token = readToken(tokenFile);
        this.reader = new Thread(this::readReplies, "ide-mcp-client-reader");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /**
     * Connects to {@code socket} over frames, reading the token from the {@code token} file
     * beside it.
     */
    public static McpClient connect(Path socket) throws IOException {
        return connect(socket, Wire.FRAMES);
    }

    /** Connects to {@code socket} speaking {@code wire}. */
    public static McpClient connect(Path socket, Wire wire) throws IOException {
        Path tokenFile = socket.toAbsolutePath().getParent().resolve(Contract.TOKEN_FILE_NAME);
        MessageChannel channel = wire == Wire.FRAMES ? FrameChannel.connect(socket) : LineChannel.connect(socket);
        try {
            return new McpClient(channel, wire, tokenFile);
        } catch (IOException e) {
            channel.close();
            throw e;
        }
    }

    /** The wire this client speaks. */
    public Wire wire() {
        return wire;
    }

    private String encode(Map<String, Object> message) {
        return wire == Wire.FRAMES ? Toon.encode(message) : Json.write(message);
    }

    private Object decode(String payload) {
        return wire == Wire.FRAMES ? Toon.decode(payload) : Json.parse(payload);
    }

    /** How long each call waits for its reply (default 60 s). */
    public McpClient timeout(Duration timeout) {
        this.timeout = timeout;
        return this;
    }

    /**
     * The name this client gives in {@code initialize} (default {@code ide-mcp-java-client}):
     * what the Security Guard and the audit log see as the client's name.
     */
    public McpClient clientName(String name) {
        this.clientName = name;
        return this;
    }

    static String readToken(Path tokenFile) throws IOException {
        try {
            return new String(Files.readAllBytes(tokenFile), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new IOException("cannot read the token file " + tokenFile + ": " + e.getMessage(), e);
        }
    }

    /** Re-reads the token file (after a rotation). */
    public void reloadToken() throws IOException {
        token = readToken(tokenFile);
    }

    /** {@code initialize}, then {@code notifications/initialized}; returns the result. */
    public Map<String, Object> initialize() throws IOException {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("protocolVersion", PROTOCOL_VERSION);
        params.put("capabilities", new LinkedHashMap<>());
        Map<String, Object> clientInfo = new LinkedHashMap<>();
        clientInfo.put("name", clientName);
        clientInfo.put("version", "1");
        params.put("clientInfo", clientInfo);
        Map<String, Object> result = request("initialize", params);
        notify("notifications/initialized", new LinkedHashMap<>());
        return result;
    }

    /** The text of {@code domains()}. */
    public String domains() throws IOException {
        return call("domains", new LinkedHashMap<>()).text();
    }

    /** The text of {@code tools(domain)}. */
    public String tools(String domain) throws IOException {
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("domain", domain);
        return call("tools", arguments).text();
    }

    /** Runs {@code tool} with {@code argsJson} (a JSON object) and waits for the result. */
    public ToolResult run(String tool, String argsJson) throws IOException {
        return await(startRun(tool, argsJson).result());
    }

    /** Sends {@code run(tool, args)} and returns at once. */
    public PendingRun startRun(String tool, String argsJson) throws IOException {
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("tool", tool);
        arguments.put("args", Json.parse(argsJson));
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("name", "run");
        params.put("arguments", arguments);
        long id = nextId.getAndIncrement();
        CompletableFuture<Map<String, Object>> reply = send(id, "tools/call", params);
        return new PendingRun(id, reply.thenApply(McpClient::toolResult));
    }

    /** Cancels a call in flight ({@code notifications/cancelled}); no reply will come for it. */
    public void cancel(long id) throws IOException {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("requestId", id);
        params.put("reason", "cancelled by the client");
        CompletableFuture<Map<String, Object>> reply = replies.remove(id);
        sent.remove(id);
        notify("notifications/cancelled", params);
        if (reply != null) {
            reply.cancel(false);
        }
    }

    /** {@code ping}. */
    public void ping() throws IOException {
        request("ping", new LinkedHashMap<>());
    }

    private ToolResult call(String metaTool, Map<String, Object> arguments) throws IOException {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("name", metaTool);
        params.put("arguments", arguments);
        return toolResult(request("tools/call", params));
    }

    @SuppressWarnings("unchecked")
    private static ToolResult toolResult(Map<String, Object> result) {
        List<Object> content = (List<Object>) result.get("content");
        if (content == null || content.isEmpty()) {
            throw new McpException("a tool result without content: " + Json.write(result));
        }
        Object text = ((Map<String, Object>) content.get(0)).get("text");
        return new ToolResult(Boolean.TRUE.equals(result.get("isError")), String.valueOf(text));
    }

    /** Sends a request and waits for its result. */
    public Map<String, Object> request(String method, Map<String, Object> params) throws IOException {
        long id = nextId.getAndIncrement();
        return await(send(id, method, params));
    }

    /** Sends a notification. */
    public void notify(String method, Map<String, Object> params) throws IOException {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("jsonrpc", "2.0");
        message.put("method", method);
        message.put("params", params);
        channel.write(encode(withToken(message)));
    }

    private CompletableFuture<Map<String, Object>> send(long id, String method, Map<String, Object> params)
            throws IOException {
        if (failure != null) {
            throw new IOException("the connection is broken", failure);
        }
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("jsonrpc", "2.0");
        message.put("id", id);
        message.put("method", method);
        message.put("params", params);
        CompletableFuture<Map<String, Object>> reply = new CompletableFuture<>();
        replies.put(id, reply);
        sent.put(id, message);
        channel.write(encode(withToken(message)));
        return reply;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> withToken(Map<String, Object> message) {
        Map<String, Object> copy = new LinkedHashMap<>(message);
        Map<String, Object> params = new LinkedHashMap<>((Map<String, Object>) message.get("params"));
        Object existingMeta = params.get("_meta");
        Map<String, Object> meta = existingMeta instanceof Map
                ? new LinkedHashMap<>((Map<String, Object>) existingMeta) : new LinkedHashMap<>();
        meta.put(Contract.TOKEN_META_KEY, token);
        params.put("_meta", meta);
        copy.put("params", params);
        return copy;
    }

    private <T> T await(CompletableFuture<T> future) throws IOException {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException) {
                throw (IOException) cause;
            }
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new IOException(cause);
        } catch (TimeoutException e) {
            throw new IOException("no reply within " + timeout.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for a reply", e);
        }
    }

    @SuppressWarnings("unchecked")
    private void readReplies() {
        try {
            String payload;
            while ((payload = channel.read()) != null) {
                Object parsed = decode(payload);
                if (!(parsed instanceof Map)) {
                    continue;
                }
                Map<String, Object> message = (Map<String, Object>) parsed;
                Object id = message.get("id");
                if (!(id instanceof BigDecimal) || message.containsKey("method")) {
                    continue; // a notification (progress) or a server request: not awaited here
                }
                long key = ((BigDecimal) id).longValueExact();
                Map<String, Object> error = (Map<String, Object>) message.get("error");
                if (error != null && Contract.REQUEST_REJECTED.equals(error.get("message")) && retried.add(key)) {
                    Map<String, Object> original = sent.get(key);
                    if (original != null && reloadTokenQuietly()) {
                        channel.write(encode(withToken(original)));
                        continue;
                    }
                }
                CompletableFuture<Map<String, Object>> reply = replies.remove(key);
                sent.remove(key);
                retried.remove(key);
                if (reply == null) {
                    continue;
                }
                if (error != null) {
                    reply.completeExceptionally(new RpcException(
                            ((BigDecimal) error.get("code")).longValue(), String.valueOf(error.get("message"))));
                } else {
                    Object result = message.get("result");
                    reply.complete(result instanceof Map ? (Map<String, Object>) result : new LinkedHashMap<>());
                }
            }
            failAll(new IOException("the server closed the connection"));
        } catch (IOException | RuntimeException e) {
            failAll(e instanceof IOException ? (IOException) e : new IOException(e));
        }
    }

    /** Re-reads the token for a retry; when the file cannot be read, the rejection stands. */
    private boolean reloadTokenQuietly() {
        try {
            reloadToken();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private void failAll(IOException cause) {
        failure = cause;
        for (CompletableFuture<Map<String, Object>> reply : replies.values()) {
            reply.completeExceptionally(cause);
        }
        replies.clear();
    }

    @Override
    public void close() throws IOException {
        channel.close();
        try {
            reader.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
