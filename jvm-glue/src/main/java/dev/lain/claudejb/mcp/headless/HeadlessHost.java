package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.ConfinedFiles;
import dev.lain.claudejb.mcp.Contract;
import dev.lain.claudejb.mcp.Json;
import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.IdeMcpServers;
import dev.lain.claudejb.mcp.LogSink;
import dev.lain.claudejb.mcp.McpException;
import dev.lain.claudejb.mcp.Server;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;

/**
 * A headless host: serves one project directory with no IDE (the Remote Development "no UI"
 * case), through the public API exactly as a plugin would.
 *
 * <ul>
 *   <li>{@code code}: {@code files} — read_file, list_directory, find_files, search_text;</li>
 *   <li>{@code vcs}: {@code git} — status, diff, log, blame (only in a git work tree);</li>
 *   <li>{@code run}: {@code tasks} — list_tasks, run_task (from {@code .ide-mcp/tasks.json};
 *       every run is asked on the terminal, and denied without one);</li>
 *   <li>{@code ops}: {@code status}.</li>
 * </ul>
 *
 * <pre>
 * java -cp ide-mcp.jar dev.lain.claudejb.mcp.headless.HeadlessHost [options] [project-dir]
 * </pre>
 *
 * It prints {@code IDE MCP servers listening under <dir>} as the first line on stdout, then the
 * ready {@code mcpServers} block, then what each agent needs ({@link #clientSetup}: Claude Code's
 * {@code claude mcp add} lines, Gemini CLI's settings block); logs go to stderr. It serves until Ctrl-C or SIGTERM, or,
 * with {@code --stop-on-stdin-eof}, until its standard input ends; then it stops and the
 * runtime directory is gone.
 */
public final class HeadlessHost implements AutoCloseable {
    /** The host name of this host's record in the per-user registry of live server sets. */
    static final String HOST_NAME = "ide-mcp headless";

    static final String USAGE = String.join("\n",
            "usage: java -cp <jar> dev.lain.claudejb.mcp.headless.HeadlessHost [options] [project-dir]",
            "",
            "Serves the project directory (default: the current directory) to MCP clients over the four",
            "IDE MCP servers (code: files; vcs: git; run: tasks; ops: status).",
            "",
            "options:",
            "  --base <dir>           where the runtime directory goes (<dir>/" + Contract.SHARED_DIR_NAME + "/<id>/);",
            "                         java.io.tmpdir is the fallback (default: java.io.tmpdir only)",
            "  --stop-on-stdin-eof    stop when standard input ends (for a parent process)",
            "  --ask-unexpected       ask on the terminal before an unexpected client may talk to the servers",
            "  --bridge <ide-mcp>     the native ide-mcp executable for the mcpServers block",
            "                         (default: $IDE_MCP_BIN, next to the jar, or target/release/ide-mcp above it;",
            "                         else the Java StdioBridge)",
            "  --git <git>            the git executable (default: git)",
            "  --diagnostics          also serve the diagnostics domain (echo, sleep, fail, big) on every server",
            "  --log-level <level>    error, warn, info (default), debug or trace",
            "  -h, --help             this text");

    private final Config config;
    private final Path project;
    private final IdeMcpServers servers;
    /**
     * One runner per server, so tools of one server that are stuck or slow (a search, a long
     * task) cannot keep another server's tools — the ops status above all — from running.
     */
    private final Map<Server, ToolRunner> runners = new EnumMap<>(Server.class);
    private final boolean gitRepository;
    private final List<Domain> domains = new ArrayList<>();
    private final Instant startedAt = Instant.now();
    private final HeadlessGuard guard;
    private final Path nativeBridge;
    private final CountDownLatch stopped = new CountDownLatch(1);
    /** The project's files, opened once: every file tool reads through it. */
    private ConfinedFiles files;
    private boolean closed;

    /** How to start a {@link HeadlessHost}. */
    public static final class Config {
        Path project = Paths.get("");
        final List<Path> bases = new ArrayList<>();
        Path bridge;
        String git = "git";
        Terminal terminal;
        boolean askUnexpected;
        boolean diagnostics;
        boolean stopOnStdinEof;
        Duration drainTimeout = Duration.ofSeconds(5);

        public Config project(Path project) {
            this.project = Objects.requireNonNull(project, "project");
            return this;
        }

        /** A candidate base directory for the runtime directory, in order of preference. */
        public Config base(Path base) {
            bases.add(Objects.requireNonNull(base, "base"));
            return this;
        }

        /** The native {@code ide-mcp} executable for the {@code mcpServers} block. */
        public Config bridge(Path bridge) {
            this.bridge = bridge;
            return this;
        }

        public Config git(String executable) {
            this.git = Objects.requireNonNull(executable, "executable");
            return this;
        }

        public Config askUnexpectedClients(boolean ask) {
            this.askUnexpected = ask;
            return this;
        }

        public Config diagnostics(boolean serve) {
            this.diagnostics = serve;
            return this;
        }

        Config terminal(Terminal terminal) {
            this.terminal = terminal;
            return this;
        }
    }

    private HeadlessHost(Config config) throws IOException {
        this.config = config;
        ProjectPaths paths = new ProjectPaths(config.project.toAbsolutePath());
        this.project = paths.root();
        Git git = Git.of(project, config.git);
        this.gitRepository = git != null;
        TaskCatalog tasks = new TaskCatalog(paths);
        TaskSnapshots taskSnapshots = new TaskSnapshots();
        this.guard = new HeadlessGuard(tasks, taskSnapshots);
        for (Server server : Server.values()) {
            runners.put(server, new ToolRunner(server.wireName(), Math.max(4, Runtime.getRuntime().availableProcessors())));
        }
        this.nativeBridge = McpServersConfig.findNativeBridge(config.bridge);

        IdeMcpServers.Options.Builder options = IdeMcpServers.Options.builder()
                .guard(guard)
                .host(new HeadlessHostCallbacks(config.terminal, config.askUnexpected))
                .drainTimeout(config.drainTimeout);
        for (Path base : config.bases) {
            options.base(base);
        }
        options.defaultBases(null); // java.io.tmpdir, the fallback
        // The library's baseline policy resolves every path argument (marked "x-ide-mcp-path")
        // against the project and denies what leads outside it or to a credential file.
        // The project is also the root the set is registered under in the per-user registry of
        // live server sets, which the printed `ide-mcp bridge --project <project> <server>` uses.
        options.projectRoots(project);
        options.hostName(HOST_NAME);
        IdeMcpServers started;
        try {
            started = IdeMcpServers.start(options.build());
        } catch (RuntimeException e) {
            closeRunners();
            throw e;
        }
        this.servers = started;
        try {
            this.files = ConfinedFiles.open(project);
            domains.add(FilesDomain.domain(files, runner(Server.CODE)));
            if (git != null) {
                domains.add(GitDomain.domain(git, paths, runner(Server.VCS)));
            } else {
                HostLog.info(project + " is not a git work tree (or git is missing): the vcs server has no domain");
            }
            domains.add(TasksDomain.domain(tasks, taskSnapshots, runner(Server.RUN)));
            domains.add(StatusDomain.domain(this, runner(Server.OPS)));
            if (config.diagnostics) {
                for (Server server : Server.values()) {
                    domains.add(DiagnosticsDomain.domain(server, runner(server)));
                }
            }
            for (Domain domain : domains) {
                List<String> withheld = servers.registerDomain(domain);
                if (!withheld.isEmpty()) {
                    HostLog.warn("withheld (colliding names): " + withheld);
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Starts serving {@code config.project}. */
    public static HeadlessHost start(Config config) throws IOException {
        return new HeadlessHost(config);
    }

    public static Config config() {
        return new Config();
    }

    /** The project directory (canonical). */
    public Path project() {
        return project;
    }

    public IdeMcpServers servers() {
        return servers;
    }

    /** The runtime directory with the sockets and the token. */
    public Path directory() {
        return servers.directory();
    }

    public boolean isGitRepository() {
        return gitRepository;
    }

    List<Domain> domains() {
        return Collections.unmodifiableList(domains);
    }

    /** The runner of {@code server}'s tools (tests add tools to it to hold its threads). */
    ToolRunner runner(Server server) {
        return runners.get(server);
    }

    Instant startedAt() {
        return startedAt;
    }

    /** The ready {@code mcpServers} block (JSON text, indented) for every live server. */
    public String mcpServersJson() {
        return Json.writePretty(mcpServers());
    }

    /** The {@code mcpServers} block as a value. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> mcpServers() {
        return (Map<String, Object>) Json.parse(McpServersConfig.block(servers, nativeBridge));
    }

    /**
     * What each agent needs to reach the servers, printed after the block: {@code claude mcp add}
     * lines for Claude Code and a settings block for Gemini CLI (see {@link McpServersConfig#clientSetup}).
     */
    public String clientSetup() {
        return McpServersConfig.clientSetup(mcpServers(), project);
    }

    /** The status the {@code status} tool answers, for tests and diagnostics. */
    Map<String, Object> status() {
        return StatusDomain.status(this);
    }

    /** Stops the servers (calls in flight are cancelled, their processes killed) and removes the directory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (servers != null) {
                servers.close();
            }
        } finally {
            closeRunners();
            if (files != null) {
                files.close();
            }
            if (config.terminal != null) {
                config.terminal.close();
            }
            stopped.countDown();
        }
    }

    private void closeRunners() {
        for (ToolRunner runner : runners.values()) {
            runner.close();
        }
        guard.close();
    }

    /** Waits until {@link #close()} has run. */
    public void awaitStop() throws InterruptedException {
        stopped.await();
    }

    public static void main(String[] args) {
        // stdout carries the ready line, the mcpServers block and the setup for each agent only;
        // anything else printed by mistake goes to stderr.
        PrintStream stdout = System.out;
        System.setOut(System.err);
        Config config;
        try {
            config = parseArguments(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ide-mcp headless: " + TerminalText.visible(e.getMessage()));
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (config == null) {
            stdout.println(USAGE);
            System.exit(0);
            return;
        }
        IdeMcpServers.setLogSink(HostLog.SINK, HostLog.threshold());
        boolean interactive = System.console() != null;
        if (interactive || config.stopOnStdinEof) {
            config.terminal(Terminal.system(Duration.ofSeconds(110)));
        }
        HeadlessHost host;
        try {
            host = start(config);
        } catch (IOException | McpException | IllegalArgumentException e) {
            System.err.println(TerminalText.visible("ide-mcp headless: cannot serve " + config.project.toAbsolutePath()
                    + ": " + e.getMessage()));
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(host::close, "headless-shutdown"));
        stdout.println(Contract.READY_LINE_PREFIX + host.directory());
        stdout.println(host.mcpServersJson());
        stdout.print(TerminalText.visibleLines(host.clientSetup())); // for a person to read and paste
        stdout.flush();
        HostLog.info("serving " + host.project() + " (" + String.join(", ", liveNames(host)) + ")"
                + (config.stopOnStdinEof ? "; stops when stdin ends" : "; stop with Ctrl-C"));
        if (config.terminal != null && !config.terminal.interactive()) {
            HostLog.info("no terminal: tools that need a person's approval (run_task) are denied");
        }
        if (config.stopOnStdinEof) {
            config.terminal.onEof().thenRun(() -> {
                HostLog.info("stdin ended: stopping");
                host.close();
            });
        }
        try {
            host.awaitStop();
        } catch (InterruptedException e) {
            host.close();
        }
        HostLog.info("stopped; " + host.project() + " is no longer served");
        System.exit(0);
    }

    private static List<String> liveNames(HeadlessHost host) {
        List<String> names = new ArrayList<>();
        for (Server server : host.servers.liveServers()) {
            names.add(server.socketFileName());
        }
        return names;
    }

    /** The configuration from the command line; null for --help. */
    static Config parseArguments(String[] args) {
        Config config = new Config();
        String project = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "-h":
                case "--help":
                    return null;
                case "--base":
                    config.base(Paths.get(value(args, ++i, arg)));
                    break;
                case "--stop-on-stdin-eof":
                    config.stopOnStdinEof = true;
                    break;
                case "--ask-unexpected":
                    config.askUnexpected = true;
                    break;
                case "--bridge":
                    config.bridge(Paths.get(value(args, ++i, arg)));
                    break;
                case "--git":
                    config.git(value(args, ++i, arg));
                    break;
                case "--diagnostics":
                    config.diagnostics = true;
                    break;
                case "--log-level":
                    HostLog.setThreshold(level(value(args, ++i, arg)));
                    break;
                default:
                    if (arg.startsWith("-") && !arg.equals("-")) {
                        throw new IllegalArgumentException("unknown option " + arg);
                    }
                    if (project != null) {
                        throw new IllegalArgumentException("one project directory only (got " + project + " and " + arg + ")");
                    }
                    project = arg;
            }
        }
        if (project != null) {
            Path path = Paths.get(project);
            if (!Files.isDirectory(path)) {
                throw new IllegalArgumentException(project + " is not a directory");
            }
            config.project(path);
        }
        if (config.bridge != null && !Files.isExecutable(config.bridge)) {
            throw new IllegalArgumentException("--bridge " + config.bridge + " is not an executable");
        }
        return config;
    }

    private static String value(String[] args, int index, String option) {
        if (index >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[index];
    }

    private static LogSink.Level level(String name) {
        try {
            return LogSink.Level.valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--log-level must be error, warn, info, debug or trace, not " + name);
        }
    }
}
