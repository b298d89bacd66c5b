package dev.lain.claudejb.mcp;

import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One project's MCP servers: a runtime directory {@code <base>/claude-ide-mcp/<id>/} with a
 * socket per server that has domains ({@code code.sock}, {@code run.sock}, {@code vcs.sock},
 * {@code ops.sock}) and the {@code token} file clients authenticate with.
 *
 * <pre>{@code
 * IdeMcpServers servers = IdeMcpServers.start(IdeMcpServers.Options.builder()
 *         .defaultBases(ideTempDir)
 *         .guard(myGuard)
 *         .host(myHost)
 *         .build());
 * servers.registerDomain(Domain.builder("files", Server.CODE)
 *         .description("Read the project's files")
 *         .tool(Tool.builder("read_file").description("Reads a file").readOnly()
 *                 .inputSchema("{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}")
 *                 .handler(ctx -> ctx.completeText(read(ctx.stringArgument("path"))))
 *                 .build())
 *         .build());
 * ...
 * servers.close(); // when the project closes
 * }</pre>
 *
 * <p>Every method returns quickly except {@link #close()}, which drains calls in flight for up
 * to the drain timeout. Methods after {@code close()} throw {@link IllegalStateException}.
 */
public final class IdeMcpServers implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private final long handle;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean stopped;

    private IdeMcpServers(long handle) {
        this.handle = handle;
        // A backstop only: a server set that is never closed is stopped when it is collected.
        this.cleanable = CLEANER.register(this, new StopAction(handle));
    }

    private static final class StopAction implements Runnable {
        private final long handle;

        StopAction(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            try {
                Native.stop(handle);
            } catch (IllegalStateException alreadyStopped) {
                // Stopped explicitly first; nothing to do.
            }
        }
    }

    /**
     * Creates the runtime directory and the token and starts listening on every server that
     * has a domain (none yet, unless domains are registered next).
     *
     * @throws McpException when no base directory works (the message names each one tried)
     * @throws IllegalArgumentException when an option is invalid
     */
    public static IdeMcpServers start(Options options) {
        Objects.requireNonNull(options, "options");
        return new IdeMcpServers(Native.start(options.toJson(), options.guard, options.host));
    }

    /**
     * Sends the library's log records to {@code sink} (process-wide), up to {@code maxLevel};
     * {@code null} stops forwarding.
     */
    public static void setLogSink(LogSink sink, LogSink.Level maxLevel) {
        Native.setLogSink(sink, sink == null ? 0 : maxLevel.number());
    }

    /** Log records dropped because the sink could not keep up. */
    public static long droppedLogRecords() {
        return Native.droppedLogRecords();
    }

    /**
     * Registers (or replaces) a domain; its server's socket appears if it had none. Returns
     * the tools ({@code domain/name}) now withheld because their names collide; the host is
     * told too.
     */
    public List<String> registerDomain(Domain domain) {
        checkRunning();
        String withheld = Native.registerDomain(handle, domain.toJson(), domain.handlers());
        List<String> tools = new ArrayList<>();
        for (Object tool : (List<?>) Json.parse(withheld)) {
            tools.add((String) tool);
        }
        return Collections.unmodifiableList(tools);
    }

    /** Removes a domain; the socket goes when it was its server's last one. Returns whether it existed. */
    public boolean removeDomain(Server server, String name) {
        checkRunning();
        return Native.removeDomain(handle, server.wireName(), name);
    }

    /** Rotates the token now; the previous one stays valid for the overlap. */
    public void rotateToken() {
        checkRunning();
        Native.rotateToken(handle);
    }

    /** The runtime directory. */
    public Path directory() {
        checkRunning();
        return Paths.get(Native.directory(handle));
    }

    /** Where {@code server}'s socket is (or would be, while it has no domain). */
    public Path socketPath(Server server) {
        checkRunning();
        return Paths.get(Native.socketPath(handle, server.wireName()));
    }

    /** The servers that have a socket now. */
    public Set<Server> liveServers() {
        checkRunning();
        Set<Server> live = EnumSet.noneOf(Server.class);
        for (String name : Native.liveServers(handle)) {
            live.add(Server.fromWireName(name));
        }
        return live;
    }

    /**
     * Stops in order: stop accepting, cancel every call (handlers see {@link ToolCallContext#isCancelled()}),
     * drain, shut down, remove the directory. Idempotent.
     */
    @Override
    public void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        cleanable.clean();
    }

    /** Same as {@link #close()}. */
    public void stop() {
        close();
    }

    public boolean isStopped() {
        return stopped;
    }

    private void checkRunning() {
        if (stopped) {
            throw new IllegalStateException("these IDE MCP servers are stopped");
        }
    }

    /** How to start a server set. */
    public static final class Options {
        private final List<Path> bases;
        private final SecurityGuard guard;
        private final Host host;
        private final Map<String, Object> knobs;

        private Options(Builder builder) {
            if (builder.bases.isEmpty()) {
                throw new IllegalArgumentException("no base directory: call defaultBases(ideTempDir) or base(path)");
            }
            this.bases = new ArrayList<>(builder.bases);
            this.guard = Objects.requireNonNull(builder.guard,
                    "a SecurityGuard is required: nothing may run without a verdict (SecurityGuard.allowAll() only in tests)");
            this.host = builder.host;
            this.knobs = new LinkedHashMap<>(builder.knobs);
        }

        public static Builder builder() {
            return new Builder();
        }

        String toJson() {
            Map<String, Object> object = new LinkedHashMap<>();
            List<Object> baseNames = new ArrayList<>();
            for (Path base : bases) {
                baseNames.add(base.toString());
            }
            object.put("bases", baseNames);
            object.put("hostCanConfirm", host != null && host.canConfirm());
            object.putAll(knobs);
            return Json.write(object);
        }

        /** Builds {@link Options}; only the guard and a base are required. */
        public static final class Builder {
            private final List<Path> bases = new ArrayList<>();
            private SecurityGuard guard;
            private Host host;
            private final Map<String, Object> knobs = new LinkedHashMap<>();

            private Builder() {
            }

            /**
             * The usual candidates: the IDE's temp dir, then {@code java.io.tmpdir} (used when
             * the first would make a socket path too long).
             */
            public Builder defaultBases(Path ideTempDir) {
                if (ideTempDir != null) {
                    bases.add(ideTempDir);
                }
                bases.add(Paths.get(System.getProperty("java.io.tmpdir")));
                return this;
            }

            /** Adds a candidate base directory, in order of preference. */
            public Builder base(Path base) {
                bases.add(Objects.requireNonNull(base, "base"));
                return this;
            }

            /** Judges every call (required). */
            public Builder guard(SecurityGuard guard) {
                this.guard = guard;
                return this;
            }

            /** The host callbacks; default: no UI. */
            public Builder host(Host host) {
                this.host = host;
                return this;
            }

            /** How long the guard may take before its silence is a denial (default 30 s). */
            public Builder guardTimeout(Duration timeout) {
                return millis("guardTimeoutMillis", timeout);
            }

            /** The deadline of tools that declare none (default 120 s). */
            public Builder defaultDeadline(Duration deadline) {
                return millis("defaultDeadlineMillis", deadline);
            }

            /** How long close() waits for calls in flight (default 5 s). */
            public Builder drainTimeout(Duration timeout) {
                return millis("drainTimeoutMillis", timeout);
            }

            /** How often a long call with a progress token gets a heartbeat (default 1 s). */
            public Builder progressHeartbeat(Duration interval) {
                return millis("progressHeartbeatMillis", interval);
            }

            /** How often the token rotates (default 30 min). */
            public Builder tokenRotation(Duration interval) {
                return millis("tokenRotationMillis", interval);
            }

            /** How long the previous token stays valid after a rotation (default 60 s). */
            public Builder tokenOverlap(Duration overlap) {
                return millis("tokenOverlapMillis", overlap);
            }

            /** Calls in flight per connection (default 16). */
            public Builder queueDepth(int depth) {
                knobs.put("queueDepth", depth);
                return this;
            }

            /** Handlers running at once per server (default 64). */
            public Builder maxRunningHandlers(int count) {
                knobs.put("maxRunningHandlers", count);
                return this;
            }

            /** The largest frame accepted or sent (default and maximum 64 MiB). */
            public Builder maxFrameBytes(int bytes) {
                knobs.put("maxFrameBytes", bytes);
                return this;
            }

            /** The largest tool result text sent back; longer ones are cut (default 256 KiB). */
            public Builder outputBudgetBytes(int bytes) {
                knobs.put("outputBudgetBytes", bytes);
                return this;
            }

            /** Threads doing socket I/O (default 2). */
            public Builder workerThreads(int threads) {
                knobs.put("workerThreads", threads);
                return this;
            }

            private Builder millis(String key, Duration duration) {
                knobs.put(key, duration.toMillis());
                return this;
            }

            public Options build() {
                return new Options(this);
            }
        }
    }
}
