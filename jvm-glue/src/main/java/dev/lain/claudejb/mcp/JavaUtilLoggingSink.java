package dev.lain.claudejb.mcp;

import java.util.logging.Logger;

/**
 * The default {@link LogSink}: the library's records as {@code java.util.logging} records of
 * the logger {@value LogSink#LOGGER_NAME}, at the matching level (ERROR is SEVERE, WARN is
 * WARNING, INFO is INFO, DEBUG is FINE, TRACE is FINEST).
 */
final class JavaUtilLoggingSink implements LogSink {
    static final JavaUtilLoggingSink INSTANCE = new JavaUtilLoggingSink();

    private final Logger logger = Logger.getLogger(LOGGER_NAME);

    private JavaUtilLoggingSink() {
    }

    @Override
    public void log(Level level, String message) {
        logger.log(julLevel(level), message);
    }

    /** The most detailed of the library's levels that the logger would record now. */
    Level threshold() {
        Level threshold = Level.ERROR;
        for (Level level : Level.values()) {
            if (logger.isLoggable(julLevel(level))) {
                threshold = level;
            }
        }
        return threshold;
    }

    static java.util.logging.Level julLevel(Level level) {
        switch (level) {
            case ERROR:
                return java.util.logging.Level.SEVERE;
            case WARN:
                return java.util.logging.Level.WARNING;
            case INFO:
                return java.util.logging.Level.INFO;
            case DEBUG:
                return java.util.logging.Level.FINE;
            default:
                return java.util.logging.Level.FINEST;
        }
    }
}
