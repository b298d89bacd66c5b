package dev.lain.claudejb.mcp;

/**
 * The servers could not do what was asked: the runtime directory could not be created, a
 * socket could not be bound, a domain was rejected, or the native library hit an internal
 * error. The message says what failed and, where it can, what to try.
 */
@CalledFromNative
public class McpException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public McpException(String message) {
        super(message);
    }

    public McpException(String message, Throwable cause) {
        super(message, cause);
    }
}
