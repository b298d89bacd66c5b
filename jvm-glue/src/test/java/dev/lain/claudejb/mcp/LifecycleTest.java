package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntSupplier;
import org.junit.Test;

/** Start/stop repeats with no leak; logs reach Java. */
public class LifecycleTest {

    @Test
    public void hundredStartStopCyclesLeakNoThreadsAndNoFileDescriptors() throws Exception {
        // Warm up: the callback pool and notifier start once per process, by design.
        cycle();
        cycle();
        int javaThreads = settled(LifecycleTest::javaThreadCount);
        int osThreads = settled(LifecycleTest::osThreadCount);
        int fds = settled(LifecycleTest::fdCount);
        for (int i = 0; i < 100; i++) {
            cycle();
        }
        assertEquals("Java threads", javaThreads, settledAt(javaThreads, LifecycleTest::javaThreadCount));
        assertEquals("OS threads", osThreads, settledAt(osThreads, LifecycleTest::osThreadCount));
        assertEquals("file descriptors", fds, settledAt(fds, LifecycleTest::fdCount));
        assertEquals(0, Native.liveServerSetCount());
        assertEquals(0, Native.pendingCallCount());
    }

    private static void cycle() throws Exception {
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(TestDomains.files(fixture.temp));
            try (McpClient client = fixture.client(Server.CODE)) {
                assertTrue(client.run("read_file", "{\"path\":\"nothing\"}").isError());
            }
        }
    }

    @Test
    public void logRecordsReachTheJavaSink() throws Exception {
        List<String> records = new CopyOnWriteArrayList<>();
        IdeMcpServers.setLogSink((level, message) -> records.add(level + " " + message), LogSink.Level.INFO);
        try (Fixture fixture = new Fixture()) {
            long deadline = System.currentTimeMillis() + 5000;
            while (System.currentTimeMillis() < deadline
                    && records.stream().noneMatch(record -> record.contains(Contract.READY_LINE_PREFIX))) {
                Thread.sleep(20);
            }
            assertTrue(records.toString(), records.stream().anyMatch(
                    record -> record.startsWith("INFO ") && record.contains(fixture.servers.directory().toString())));
        } finally {
            IdeMcpServers.setLogSink(null, LogSink.Level.INFO);
        }
    }

    /**
     * The JDK's "process reaper" threads wait for the child processes of earlier tests and end
     * on their own once idle (a minute later, possibly in the middle of the cycles), so they are
     * not counted.
     */
    private static final String PROCESS_REAPER = "process reaper";

    private static int javaThreadCount() {
        int count = 0;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (!thread.getName().equals(PROCESS_REAPER)) {
                count++;
            }
        }
        return count;
    }

    private static int osThreadCount() {
        File[] tasks = new File("/proc/self/task").listFiles();
        if (tasks == null) {
            return -1;
        }
        int count = 0;
        for (File task : tasks) {
            try {
                String name = new String(Files.readAllBytes(new File(task, "comm").toPath()), StandardCharsets.UTF_8);
                if (!name.trim().equals(PROCESS_REAPER)) {
                    count++;
                }
            } catch (IOException ended) {
                // The thread ended while it was being counted.
            }
        }
        return count;
    }

    private static int fdCount() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    /** The value once it stopped changing (threads end a moment after their work). */
    private static int settled(IntSupplier value) throws InterruptedException {
        int last = value.getAsInt();
        for (int i = 0; i < 20; i++) {
            Thread.sleep(50);
            int now = value.getAsInt();
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }

    /** Waits up to 5 s for the value to come back to {@code expected}. */
    private static int settledAt(int expected, IntSupplier value) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 5000;
        int now = value.getAsInt();
        while (now != expected && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            now = value.getAsInt();
        }
        return now;
    }
}
