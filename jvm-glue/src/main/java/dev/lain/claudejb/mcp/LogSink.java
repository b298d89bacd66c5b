package dev.lain.claudejb.mcp;

/**
 * Receives the native library's log records (for example to write them to idea.log). Called
 * on one dedicated thread, in order; a sink that falls behind loses records rather than
 * slowing the servers down (see {@link IdeMcpServers#droppedLogRecords()}).
 *
 * <p>Until {@link IdeMcpServers#setLogSink} replaces it, the records go to
 * {@link #javaUtilLogging()}: the {@code java.util.logging} logger {@value #LOGGER_NAME}, which
 * an IDE routes into its own log.
 */
@FunctionalInterface
public interface LogSink {
    /** Severity, most severe first. */
    enum Level {
        ERROR, WARN, INFO, DEBUG, TRACE;

        static Level fromNumber(int number) {
            Level[] levels = values();
            return levels[Math.max(1, Math.min(number, levels.length)) - 1];
        }

        int number() {
            return ordinal() + 1;
        }
    }

    /** One formatted record. Must not throw; if it does, the record is lost. */
    void log(Level level, String message);

    /** The {@code java.util.logging} logger the default sink writes to. */
    String LOGGER_NAME = "dev.lain.claudejb.mcp";

    /** A sink that writes each record to the {@code java.util.logging} logger {@value #LOGGER_NAME}. */
    static LogSink javaUtilLogging() {
        return JavaUtilLoggingSink.INSTANCE;
    }
}
