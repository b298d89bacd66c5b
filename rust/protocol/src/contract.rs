//! The constants every party to the wire agrees on: the servers, the bridge, the CLI, the
//! benchmarks and the Java side (`dev.lain.claudejb.mcp.Contract`, checked against these by
//! `ContractTest`). Each is written here once for Rust; the old homes re-export them.

/// The first line a host prints once its sockets are up, followed by the runtime directory.
pub const READY_LINE_PREFIX: &str = "IDE MCP servers listening under ";

/// Where every request and notification carries the token (in `_meta`).
pub const TOKEN_META_KEY: &str = "dev.lain.claudejb/token";

/// The exact message of every authentication failure, whatever was wrong.
pub const REQUEST_REJECTED: &str = "request rejected";

/// Where a modern request names its protocol version (in `_meta`).
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The largest payload a frame (or an NDJSON line) may carry unless a lower limit is
/// configured: 64 MiB.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// How many calls one connection may have in flight.
pub const QUEUE_DEPTH: usize = 16;

/// Name of the directory under `<base>` shared by all instances of this user.
pub const SHARED_DIR_NAME: &str = "claude-ide-mcp";

/// Name of the token file clients read, beside the sockets.
pub const TOKEN_FILE_NAME: &str = "token";

/// File names of the server sockets, in the order of `ServerName` (code, run, vcs, ops).
pub const SOCKET_FILE_NAMES: [&str; 4] = ["code.sock", "run.sock", "vcs.sock", "ops.sock"];

/// Default time between token rotations: 30 minutes.
pub const ROTATION_MILLIS: u64 = 30 * 60 * 1000;

/// Default time the previous token stays valid after a rotation: 60 seconds.
pub const DEFAULT_OVERLAP_MILLIS: u64 = 60 * 1000;

/// The text of the split-mode notice.
pub const SPLIT_MODE_MESSAGE: &str = "The chat could not be shown, but the IDE MCP servers are up";
