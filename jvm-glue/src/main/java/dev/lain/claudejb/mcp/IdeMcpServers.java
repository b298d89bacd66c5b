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
     * Sends the library's log records to {@code sink} (process-wide), up to {@code maxLevel},
     * instead of the default {@link LogSink#javaUtilLogging()}; {@code null} stops forwarding.
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

    /**
     * This set's record in the per-user registry of live server sets ({@code ide-mcp list},
     * {@code ide-mcp bridge --project DIR SERVER} find the set through it), or {@code null} when
     * the set is not registered: {@link Options.Builder#registerLiveSet(boolean)} turned it
     * off, or the registry directory was refused (the reason is logged). The record names the
     * project roots, the socket directory, the live servers, this process and the
     * {@linkplain Options.Builder#hostName host name}; never the token. It is removed by
     * {@link #close()}.
     */
    public Path registryRecord() {
        checkRunning();
        String record = Native.registryRecord(handle);
        return record == null ? null : Paths.get(record);
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
     * Declares a client process the host launched: it and its descendants are admitted without
     * being announced to {@link Host#unexpectedClient}.
     *
     * @throws IllegalArgumentException when {@code pid} is not a positive process id
     */
    public void declareLaunchedClient(long pid) {
        checkRunning();
        Native.declareLaunchedClient(handle, pid);
    }

    /** Withdraws a declaration (the client exited); later connections of it are unexpected again. */
    public void forgetLaunchedClient(long pid) {
        checkRunning();
        Native.forgetLaunchedClient(handle, pid);
    }

    /**
     * Grants one admission credit: the next unexpected client to connect within {@code validFor}
     * is admitted without a prompt (for a client launched where its pid cannot be known, such as
     * through a shell).
     */
    public void grantAdmissionCredit(Duration validFor) {
        checkRunning();
        Native.grantAdmissionCredit(handle, validFor.toMillis());
    }

    /**
     * The audit log: every verdict of the Security Guard checkpoint, oldest first, up to the
     * audit capacity. No token and no argument values are in it.
     */
    public List<AuditRecord> auditLog() {
        checkRunning();
        List<AuditRecord> records = new ArrayList<>();
        for (Object record : (List<?>) Json.parse(Native.auditLog(handle), DecodeBudget.UNLIMITED)) {
            records.add(AuditRecord.fromJson(record));
        }
        return Collections.unmodifiableList(records);
    }

    /**
     * The ready {@code {"mcpServers":{…}}} block (JSON) for the live servers, each started
     * through {@code launcher}: what a client needs to reach these servers over stdio.
     */
    public String mcpServersConfig(BridgeLauncher launcher) {
        checkRunning();
        return Native.mcpServersBlock(handle, launcher.toJson());
    }

    /**
     * Split mode: calls the host's {@link Host#splitModeNotice} (on a callback thread, so it may
     * run after this returns) with the notice text and the {@code mcpServers} block for
     * {@code launcher}, and returns that block. {@link SplitMode} calls this when every delivery
     * route has failed.
     */
    public String announceSplitMode(BridgeLauncher launcher) {
        checkRunning();
        return Native.announceSplitMode(handle, launcher.toJson());
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

        /**
         * Builds {@link Options}; only the guard and a base are required. Every other option is
         * sent only when it is set, under its key (the method's name, plus {@code Millis} for a
         * {@link Duration}); an unset one keeps the library's default. The defaults are written
         * once, in the Rust {@code ServerConfig::default()}, and listed in the table of defaults
         * of docs/SECURITY.md; {@code OptionsTest} checks that these methods and the Rust options
         * are the same set.
         */
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

            /** How long the guard may take before its silence is a denial. */
            public Builder guardTimeout(Duration timeout) {
                return millis("guardTimeoutMillis", timeout);
            }

            /** The deadline of tools that declare none. */
            public Builder defaultDeadline(Duration deadline) {
                return millis("defaultDeadlineMillis", deadline);
            }

            /** How long close() waits for calls in flight. */
            public Builder drainTimeout(Duration timeout) {
                return millis("drainTimeoutMillis", timeout);
            }

            /** How often a long call with a progress token gets a heartbeat. */
            public Builder progressHeartbeat(Duration interval) {
                return millis("progressHeartbeatMillis", interval);
            }

            /** How often the token rotates. */
            public Builder tokenRotation(Duration interval) {
                return millis("tokenRotationMillis", interval);
            }

            /** How long the previous token stays valid after a rotation. */
            public Builder tokenOverlap(Duration overlap) {
                return millis("tokenOverlapMillis", overlap);
            }

            /** Calls in flight per connection. */
            public Builder queueDepth(int depth) {
                knobs.put("queueDepth", depth);
                return this;
            }

            /** Handlers running at once per server. */
            public Builder maxRunningHandlers(int count) {
                knobs.put("maxRunningHandlers", count);
                return this;
            }

            /** The largest frame accepted or sent, at most {@link Contract#MAX_FRAME_BYTES}. */
            public Builder maxFrameBytes(int bytes) {
                knobs.put("maxFrameBytes", bytes);
                return this;
            }

            /**
             * The project's roots: arguments a tool marks as paths ({@code "x-ide-mcp-path": true}
             * in its schema) must resolve inside one of them, or the call needs
             * {@link Verdict#allowExplicitly()} (see {@link GuardRequest#concerns()}). They are
             * also the roots the set is registered under in the per-user registry of live server
             * sets: {@code ide-mcp bridge --project DIR SERVER} reaches the set whose root holds
             * {@code DIR}.
             */
            public Builder projectRoots(List<Path> roots) {
                List<Object> names = new ArrayList<>();
                for (Path root : roots) {
                    names.add(root.toString());
                }
                knobs.put("projectRoots", names);
                return this;
            }

            /** Same as {@link #projectRoots(List)}. */
            public Builder projectRoots(Path... roots) {
                return projectRoots(java.util.Arrays.asList(roots));
            }

            /** Authenticated connections open at once per server; one more waits until one closes. */
            public Builder maxConnectionsPerServer(int count) {
                knobs.put("maxConnectionsPerServer", count);
                return this;
            }

            /** Authenticated connections one process may have open on a server; one more is refused. */
            public Builder maxConnectionsPerPeer(int count) {
                knobs.put("maxConnectionsPerPeer", count);
                return this;
            }

            /**
             * Connections per server that have not presented a valid token yet; when there are
             * this many, a newcomer sheds the oldest of the process that holds the most.
             */
            public Builder maxUnauthenticatedConnections(int count) {
                knobs.put("maxUnauthenticatedConnections", count);
                return this;
            }

            /** The longest string in a message, in bytes. */
            public Builder maxStringBytes(int bytes) {
                knobs.put("maxStringBytes", bytes);
                return this;
            }

            /** The most elements in one array of a message. */
            public Builder maxArrayLength(int length) {
                knobs.put("maxArrayLength", length);
                return this;
            }

            /** The most keys in one object of a message. */
            public Builder maxObjectKeys(int keys) {
                knobs.put("maxObjectKeys", keys);
                return this;
            }

            /** The deepest nesting of arrays and objects in a message. */
            public Builder maxDepth(int depth) {
                knobs.put("maxDepth", depth);
                return this;
            }

            /** The largest {@code args} of a {@code run}, as compact JSON. */
            public Builder maxArgumentBytes(int bytes) {
                knobs.put("maxArgumentBytes", bytes);
                return this;
            }

            /** The largest result a handler may return, as compact JSON; larger is an error. */
            public Builder maxResultBytes(int bytes) {
                knobs.put("maxResultBytes", bytes);
                return this;
            }

            /** Bad messages one connection may send before it is closed. */
            public Builder maxBadMessages(int count) {
                knobs.put("maxBadMessages", count);
                return this;
            }

            /** How many audit records are kept, the oldest going first. */
            public Builder auditCapacity(int records) {
                knobs.put("auditCapacity", records);
                return this;
            }

            /** How long a person may take to answer a confirmation. */
            public Builder confirmationTimeout(Duration timeout) {
                return millis("confirmationTimeoutMillis", timeout);
            }

            /** How long an unexpected client waits for {@link Host#unexpectedClient}'s answer. */
            public Builder admissionTimeout(Duration timeout) {
                return millis("admissionTimeoutMillis", timeout);
            }

            /** How long a rejected client is refused again without a new prompt. */
            public Builder rejectionCooldown(Duration cooldown) {
                return millis("rejectionCooldownMillis", cooldown);
            }

            /** How long a new connection may take to send its first message. */
            public Builder firstMessageTimeout(Duration timeout) {
                return millis("firstMessageTimeoutMillis", timeout);
            }

            /** How long a frame header may take once its first byte arrived. */
            public Builder headerTimeout(Duration timeout) {
                return millis("headerTimeoutMillis", timeout);
            }

            /** How long a frame body (or a line) may take once its header arrived. */
            public Builder bodyTimeout(Duration timeout) {
                return millis("bodyTimeoutMillis", timeout);
            }

            /** How long a connection with no calls in flight may stay silent. */
            public Builder idleTimeout(Duration timeout) {
                return millis("idleTimeoutMillis", timeout);
            }

            /** How long one write to a client may take; one that stops reading is closed. */
            public Builder writeTimeout(Duration timeout) {
                return millis("writeTimeoutMillis", timeout);
            }

            /**
             * How long a connection looks at its socket for the next message of a client that
             * sends it right after each reply, before it waits (default 50 µs; at most 1 ms;
             * zero never looks). A look holds one thread at most this long after a reply, and
             * saves the wake-up of a sleeping thread for each call made back to back.
             */
            public Builder socketLook(Duration look) {
                // Anything past the limit is sent as just past it, so the library's refusal names
                // the limit rather than this conversion failing on a huge duration.
                long micros = look.compareTo(Duration.ofMillis(2)) > 0 ? 2_000 : look.toNanos() / 1_000;
                knobs.put("socketLookMicros", micros);
                return this;
            }

            /** The largest tool result text sent back; longer ones are cut. */
            public Builder outputBudgetBytes(int bytes) {
                knobs.put("outputBudgetBytes", bytes);
                return this;
            }

            /** Threads doing socket I/O. */
            public Builder workerThreads(int threads) {
                knobs.put("workerThreads", threads);
                return this;
            }

            /**
             * Whether the set writes a record in the per-user registry of live server sets
             * (default: on), so that {@code ide-mcp list} shows it and
             * {@code ide-mcp bridge --project DIR SERVER} finds it by its
             * {@linkplain #projectRoots(List) project roots}; see {@link IdeMcpServers#registryRecord()}.
             */
            public Builder registerLiveSet(boolean register) {
                knobs.put("registerLiveSet", register);
                return this;
            }

            /**
             * The IDE or host the registry record names (at most 256 bytes, no control
             * characters), e.g. {@code "IntelliJ IDEA 2026.1"}; default: the program's name.
             */
            public Builder hostName(String name) {
                knobs.put("hostName", Objects.requireNonNull(name, "name"));
                return this;
            }

            /** The keys of the options set so far, for {@code OptionsTest}. */
            Set<String> optionKeys() {
                return Collections.unmodifiableSet(knobs.keySet());
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
