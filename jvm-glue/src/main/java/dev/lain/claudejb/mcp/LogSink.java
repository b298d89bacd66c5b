package dev.lain.claudejb.mcp;

/**
 * Receives the native library's log records (for example to write them to idea.log). Called
 * on one dedicated thread, in order; a sink that falls behind loses records rather than
 * slowing the servers down (see {@link IdeMcpServers#droppedLogRecords()}).
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
}
