package dev.lain.claudejb.mcp;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/** A running server set in a fresh temp directory, closed with the fixture. */
final class Fixture implements AutoCloseable {
    final Path temp;
    final IdeMcpServers servers;

    Fixture(SecurityGuard guard, Host host, Consumer<IdeMcpServers.Options.Builder> options) throws Exception {
        temp = Files.createTempDirectory("mcp-test");
        IdeMcpServers.Options.Builder builder = IdeMcpServers.Options.builder().base(temp).guard(guard).host(host);
        options.accept(builder);
        try {
            servers = IdeMcpServers.start(builder.build());
        } catch (RuntimeException e) {
            TestSupport.deleteRecursively(temp);
            throw e;
        }
    }

    Fixture() throws Exception {
        this(SecurityGuard.allowAll(), null, options -> { });
    }

    McpClient client(Server server) throws Exception {
        return TestSupport.initializedClient(servers.socketPath(server));
    }

    @Override
    public void close() throws java.io.IOException {
        servers.close();
        TestSupport.deleteRecursively(temp);
    }

    /** A domain on CODE named {@code test} with one tool. */
    static Domain oneTool(Tool tool) {
        return Domain.builder("test", Server.CODE).description("Tools for tests").tool(tool).build();
    }
}
