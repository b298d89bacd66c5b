package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.LogSink;
import java.io.PrintStream;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * The headless host's log: one line per record on stderr (stdout carries only the ready line
 * and the {@code mcpServers} block). Also the library's {@link LogSink}.
 */
final class HostLog implements LogSink {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static volatile PrintStream out = System.err;
    private static volatile Level threshold = Level.INFO;

    static final HostLog SINK = new HostLog();

    private HostLog() {
    }

    static void setThreshold(Level level) {
        threshold = level;
    }

    static Level threshold() {
        return threshold;
    }

    @Override
    public void log(Level level, String message) {
        write(level, "ide-mcp", message);
    }

    static void info(String message) {
        write(Level.INFO, "headless", message);
    }

    static void warn(String message) {
        write(Level.WARN, "headless", message);
    }

    static void error(String message, Throwable error) {
        write(Level.ERROR, "headless", error == null ? message : message + ": " + error);
    }

    private static void write(Level level, String source, String message) {
        if (level.compareTo(threshold) > 0) {
            return;
        }
        String time = LocalTime.now().truncatedTo(ChronoUnit.MILLIS).format(TIME);
        // A message carries names clients and repositories chose; stderr is often the terminal.
        out.println(time + " " + level + " " + source + ": " + TerminalText.visible(message));
    }
}
