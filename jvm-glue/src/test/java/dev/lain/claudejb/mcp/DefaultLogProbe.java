package dev.lain.claudejb.mcp;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * A child JVM's entry point for {@link DefaultLogSinkTest}: a fresh JVM that sets no log sink,
 * listens on the {@code java.util.logging} logger, starts the servers, and prints the record
 * that announced them (or {@code none}).
 */
public final class DefaultLogProbe {
    private DefaultLogProbe() {
    }

    public static void main(String[] args) throws Exception {
        BlockingQueue<LogRecord> records = new LinkedBlockingQueue<>();
        Logger.getLogger(LogSink.LOGGER_NAME).addHandler(new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
        Path base = Files.createTempDirectory("log-probe");
        try (IdeMcpServers servers = IdeMcpServers.start(IdeMcpServers.Options.builder().base(base).guard(SecurityGuard.allowAll()).build())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline) {
                LogRecord record = records.poll(100, TimeUnit.MILLISECONDS);
                if (record != null && record.getMessage().contains(Contract.READY_LINE_PREFIX)) {
                    System.out.println(record.getLoggerName() + " " + record.getLevel() + " " + record.getMessage());
                    return;
                }
            }
            System.out.println("none");
        } finally {
            TestSupport.deleteRecursively(base);
        }
    }
}
