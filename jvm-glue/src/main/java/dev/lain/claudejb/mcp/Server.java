package dev.lain.claudejb.mcp;

/**
 * The four servers of a project; each has its own socket, {@code <dir>/<name>.sock}
 * ({@link Contract#SOCKET_FILE_NAMES}, in this order).
 */
public enum Server {
    /** Code insight: files, search, navigation. */
    CODE,
    /** Running things: tasks, tests, run configurations. */
    RUN,
    /** Version control. */
    VCS,
    /** The IDE itself: status, settings, diagnostics. */
    OPS;

    /** The name on the wire and in the socket file name: {@code code}, {@code run}, … */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The socket's file name in the runtime directory: {@code code.sock}, {@code run.sock}, … */
    public String socketFileName() {
        return Contract.SOCKET_FILE_NAMES.get(ordinal());
    }

    static Server fromWireName(String name) {
        return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }
}
