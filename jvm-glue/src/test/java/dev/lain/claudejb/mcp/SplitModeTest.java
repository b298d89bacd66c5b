package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/** Split mode end to end, and the {@code mcpServers} block for both launchers. */
public class SplitModeTest {
    private static final String MESSAGE = Contract.SPLIT_MODE_MESSAGE;

    @Test
    public void whenEveryRouteFailedTheServersStartAndTheHostGetsAWorkingBlock() throws Exception {
        Path temp = Files.createTempDirectory("mcp-split");
        BlockingQueue<String[]> notices = new ArrayBlockingQueue<>(4);
        Host host = new Host() {
            @Override
            public void splitModeNotice(String message, String mcpServersJson) {
                notices.add(new String[] {message, mcpServersJson, Thread.currentThread().getName()});
            }
        };
        AtomicReference<IdeMcpServers> running = new AtomicReference<>();
        AtomicInteger starts = new AtomicInteger();
        Path pluginDir = temp.resolve("plugin");
        SplitMode split = new SplitMode(new PageDelivery().registerRoute("jcef").registerRoute("browser"), () -> {
            starts.incrementAndGet();
            return running.updateAndGet(current -> {
                if (current != null) {
                    return current;
                }
                IdeMcpServers servers = IdeMcpServers.start(IdeMcpServers.Options.builder()
                        .base(temp).guard(SecurityGuard.allowAll()).host(host).build());
                servers.declareLaunchedClient(ProcessHandle.current().pid());
                servers.registerDomain(TestDomains.files(temp));
                return servers;
            });
        }, BridgeLauncher.currentJava(pluginDir));
        try {
            assertEquals(MESSAGE, SplitMode.message());
            assertEquals(PageDelivery.State.WAITING, split.report("jcef", RouteOutcome.failed("JCEF is not supported")));
            assertEquals(0, starts.get());
            assertNull(running.get());
            assertEquals(PageDelivery.State.ENTER_SPLIT_MODE,
                    split.report("browser", RouteOutcome.failed("no display")));
            assertEquals(1, starts.get());

            String[] notice = notices.poll(10, TimeUnit.SECONDS);
            assertNotNull("the host got no split-mode notice", notice);
            assertEquals(MESSAGE, notice[0]);
            assertTrue(notice[2], notice[2].startsWith("ide-mcp-callback-"));
            Map<?, ?> servers = (Map<?, ?>) ((Map<?, ?>) Json.parse(notice[1])).get("mcpServers");
            assertEquals(1, servers.size());
            Map<?, ?> code = (Map<?, ?>) servers.get("code");
            assertEquals("stdio", code.get("type"));
            assertEquals(Path.of(System.getProperty("java.home"), "bin", "java").toString(), code.get("command"));
            List<?> args = (List<?>) code.get("args");
            assertEquals(List.of("-cp", pluginDir + "/lib/*", "dev.lain.claudejb.mcp.StdioBridge",
                    running.get().socketPath(Server.CODE).toString()), args);

            // The socket in the block answers.
            try (McpClient client = TestSupport.initializedClient(Path.of((String) args.get(3)))) {
                assertTrue(client.domains().contains("files"));
            }

            // Once only.
            assertEquals(PageDelivery.State.IN_SPLIT_MODE, split.report("browser", RouteOutcome.failed("still none")));
            assertNull(notices.poll(300, TimeUnit.MILLISECONDS));
            assertEquals(1, starts.get());
            Map<String, RouteOutcome> outcomes = split.delivery().outcomes();
            assertEquals("JCEF is not supported", outcomes.get("jcef").reason().orElse(""));
            assertEquals("still none", outcomes.get("browser").reason().orElse(""));
        } finally {
            split.delivery().close();
            if (running.get() != null) {
                running.get().close();
            }
            TestSupport.deleteRecursively(temp);
        }
    }

    @Test
    public void aDeliveredRouteMeansNoSplitModeAndNoServers() {
        AtomicInteger starts = new AtomicInteger();
        try (PageDelivery delivery = new PageDelivery()) {
            SplitMode split = new SplitMode(delivery.registerRoute("jcef").registerRoute("browser"), () -> {
                starts.incrementAndGet();
                return null;
            }, BridgeLauncher.nativeExecutable(Path.of("/usr/bin/ide-mcp")));
            assertEquals(PageDelivery.State.WAITING, split.report("jcef", RouteOutcome.failed("no JCEF")));
            assertEquals(PageDelivery.State.SHOWN, split.report("browser", RouteOutcome.delivered()));
            assertTrue(delivery.outcomes().get("browser").isDelivered());
        }
        assertEquals(0, starts.get());
    }

    @Test
    public void aClosedPageDeliveryIsAnIllegalStateAndLeavesNothingBehind() {
        int before = Native.livePageDeliveryCount();
        PageDelivery delivery = new PageDelivery();
        assertEquals(before + 1, Native.livePageDeliveryCount());
        delivery.close();
        delivery.close();
        assertEquals(before, Native.livePageDeliveryCount());
        try {
            delivery.report("jcef", RouteOutcome.delivered());
            org.junit.Assert.fail("a closed delivery took a report");
        } catch (IllegalStateException expected) {
            // closed
        }
    }

    @Test
    public void mcpServersConfigForBothLaunchers() throws Exception {
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            fixture.servers.registerDomain(Domain.builder("status", Server.OPS).description("IDE status")
                    .tool(Tool.builder("ping").description("Pong").readOnly()
                            .handler(context -> context.completeText("pong")).build())
                    .build());
            Path directory = fixture.servers.directory();
            String java = fixture.servers.mcpServersConfig(
                    BridgeLauncher.java(Path.of("/opt/ide/jbr"), Path.of("/opt/ide/plugins/claudejb")));
            assertEquals("{\"mcpServers\":{"
                    + "\"code\":{\"type\":\"stdio\",\"command\":\"/opt/ide/jbr/bin/java\",\"args\":[\"-cp\","
                    + "\"/opt/ide/plugins/claudejb/lib/*\",\"dev.lain.claudejb.mcp.StdioBridge\",\""
                    + directory.resolve(Server.CODE.socketFileName()) + "\"]},"
                    + "\"ops\":{\"type\":\"stdio\",\"command\":\"/opt/ide/jbr/bin/java\",\"args\":[\"-cp\","
                    + "\"/opt/ide/plugins/claudejb/lib/*\",\"dev.lain.claudejb.mcp.StdioBridge\",\""
                    + directory.resolve(Server.OPS.socketFileName()) + "\"]}}}", java);
            String nativeBlock = fixture.servers.mcpServersConfig(BridgeLauncher.nativeExecutable(Path.of("/usr/bin/ide-mcp")));
            assertEquals("{\"mcpServers\":{"
                    + "\"code\":{\"type\":\"stdio\",\"command\":\"/usr/bin/ide-mcp\",\"args\":[\"bridge\",\""
                    + directory.resolve(Server.CODE.socketFileName()) + "\"]},"
                    + "\"ops\":{\"type\":\"stdio\",\"command\":\"/usr/bin/ide-mcp\",\"args\":[\"bridge\",\""
                    + directory.resolve(Server.OPS.socketFileName()) + "\"]}}}", nativeBlock);
        }
    }
}
