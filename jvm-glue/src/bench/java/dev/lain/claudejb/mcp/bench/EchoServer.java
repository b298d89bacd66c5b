package dev.lain.claudejb.mcp.bench;

import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.Contract;
import dev.lain.claudejb.mcp.IdeMcpServers;
import dev.lain.claudejb.mcp.LogSink;
import dev.lain.claudejb.mcp.SecurityGuard;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The server benchmark's Java target ({@code ide-mcp-bench}, "ide-mcp, Java handler (JNI)"):
 * the servers started through the JVM API with a {@code diagnostics} domain on {@code code}
 * whose {@code echo {value}} tool is a Java handler that answers {@code {"value": <value>}} at
 * once through {@link dev.lain.claudejb.mcp.ToolCallContext#complete}.
 *
 * <pre>{@code java -cp jvm-glue-bench.jar dev.lain.claudejb.mcp.bench.EchoServer --base DIR}</pre>
 *
 * <p>It lives in the {@code bench} source set, outside the jar a plugin ships: Gradle's
 * {@code benchJar} builds {@code jvm-glue-bench.jar}, whose manifest puts {@code jvm-glue.jar}
 * (the API and the native library) beside it on the class path.
 *
 * <p>Prints {@code IDE MCP servers listening under <runtime directory>} once the socket is up,
 * then serves until its standard input closes (the benchmark closes it to stop the process);
 * lines read meanwhile are ignored.
 *
 * <p>The guard is {@link SecurityGuard#allowAll()}, as in the Rust-handler target, but here it
 * is Java, as a plugin's is: every call goes into the JVM once, judged and handled in one job
 * of a callback thread.
 */
public final class EchoServer {
    /** Only {@code value}, required: a valid arguments object is exactly {@code {"value": …}}. */
    static final String ECHO_SCHEMA = "{\"type\":\"object\",\"properties\":{\"value\":{\"description\":\"Any JSON value\"}},"
            + "\"required\":[\"value\"],\"additionalProperties\":false}";

    private EchoServer() {
    }

    public static void main(String[] args) throws IOException {
        Path base = null;
        for (int i = 0; i < args.length; i++) {
            if ("--base".equals(args[i]) && i + 1 < args.length) {
                base = Paths.get(args[++i]);
            } else {
                System.err.println("usage: EchoServer --base DIR");
                System.exit(2);
            }
        }
        if (base == null) {
            System.err.println("usage: EchoServer --base DIR");
            System.exit(2);
        }

        // Warnings only, as the Rust-handler target, which installs no log subscriber at all:
        // the audit record of every call at INFO, formatted and printed by java.util.logging's
        // console handler, costs more CPU than the call itself, and is the log's cost, not the
        // JVM hop's.
        IdeMcpServers.setLogSink(LogSink.javaUtilLogging(), LogSink.Level.WARN);
        IdeMcpServers servers = IdeMcpServers.start(IdeMcpServers.Options.builder()
                .base(base)
                .guard(SecurityGuard.allowAll())
                .build());
        try {
            servers.registerDomain(diagnostics());
            System.out.println(Contract.READY_LINE_PREFIX + servers.directory());
            System.out.flush();
            drain(System.in);
        } finally {
            servers.close();
        }
    }

    /** {@code diagnostics/echo} on {@code code}, the same contract as the Rust echo. */
    static Domain diagnostics() {
        return Domain.builder("diagnostics", Server.CODE)
                .description("Tools for checking the connection: echo")
                .tool(Tool.builder("echo")
                        .description("Answers with the value it was given")
                        .readOnly()
                        .inputSchema(ECHO_SCHEMA)
                        // The library validated the arguments against ECHO_SCHEMA, so the
                        // arguments object is {"value": <value>} and nothing else: it is the answer.
                        .handler(context -> context.complete(context.argumentsJson()))
                        .build())
                .build();
    }

    private static void drain(InputStream in) throws IOException {
        byte[] buffer = new byte[4096];
        while (in.read(buffer) >= 0) {
            // Ignored; end of input stops the servers.
        }
    }
}
