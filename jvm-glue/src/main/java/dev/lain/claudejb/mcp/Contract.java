package dev.lain.claudejb.mcp;

import java.util.List;

/**
 * The constants every party to the wire agrees on, written once for Java. The Rust copy is
 * {@code rust/protocol/src/contract.rs} ({@code ide_mcp_protocol::contract}); {@code ContractTest}
 * compares the two through the native library, so a change on one side alone fails the tests.
 */
public final class Contract {
    private Contract() {
    }

    /** The first line a host prints once its sockets are up, followed by the runtime directory. */
    public static final String READY_LINE_PREFIX = "IDE MCP servers listening under ";

    /** Where every request and notification carries the token, in {@code _meta}. */
    public static final String TOKEN_META_KEY = "dev.lain.claudejb/token";

    /** The exact message of every authentication failure, whatever was wrong. */
    public static final String REQUEST_REJECTED = "request rejected";

    /** Where a modern request names its protocol version, in {@code _meta}. */
    public static final String PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

    /** The largest payload of a frame (or an NDJSON line) unless a lower limit is configured: 64 MiB. */
    public static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;

    /** How many calls one connection may have in flight. */
    public static final int QUEUE_DEPTH = 16;

    /** The directory under a base shared by all instances of this user: {@code <base>/claude-ide-mcp/<id>/}. */
    public static final String SHARED_DIR_NAME = "claude-ide-mcp";

    /** The token file clients read, beside the sockets. */
    public static final String TOKEN_FILE_NAME = "token";

    /** The socket file names, in the order of {@link Server} (code, run, vcs, ops). */
    public static final List<String> SOCKET_FILE_NAMES = List.of("code.sock", "run.sock", "vcs.sock", "ops.sock");

    /** The default time between token rotations: 30 minutes. */
    public static final long ROTATION_MILLIS = 30L * 60 * 1000;

    /** The default time the previous token stays valid after a rotation: 60 seconds. */
    public static final long DEFAULT_OVERLAP_MILLIS = 60L * 1000;

    /** The text of the split-mode notice. */
    public static final String SPLIT_MODE_MESSAGE = "The chat could not be shown, but the IDE MCP servers are up";
}
