//! The contract constants clients, bridges and hosts rely on, each written once for Rust.
//!
//! The Java side has its own single copy (`dev.lain.claudejb.mcp.Contract`), and a test
//! checks that the two agree. Anything a client must match byte for byte belongs here.

/// The line (followed by the runtime directory) a host logs or prints once the servers are up.
pub const READY_LINE_PREFIX: &str = "IDE MCP servers listening under ";

/// Where every request and notification carries the token: `params._meta[TOKEN_META_KEY]`.
pub const TOKEN_META_KEY: &str = "dev.lain.claudejb/token";

/// The exact message of every authentication failure, whatever was wrong.
pub const REQUEST_REJECTED: &str = "request rejected";

/// Where a modern-era request names its protocol version in `_meta`.
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The largest payload a frame may carry unless a lower limit is configured: 64 MiB.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// How many calls one connection may have in flight by default (`QUEUE_DEPTH`).
pub const QUEUE_DEPTH: usize = 16;

/// The name of the directory under each base shared by all instances of one user.
pub const SHARED_DIR_NAME: &str = "claude-ide-mcp";

/// The name of the token file beside the sockets.
pub const TOKEN_FILE_NAME: &str = "token";

/// The socket file names, one per server, in the order `code`, `run`, `vcs`, `ops`.
pub const SOCKET_FILE_NAMES: [&str; 4] = ["code.sock", "run.sock", "vcs.sock", "ops.sock"];

/// Default time between token rotations: 30 minutes.
pub const ROTATION_MILLIS: u64 = 30 * 60 * 1000;

/// Default time the previous token stays valid after a rotation: 60 seconds.
pub const DEFAULT_OVERLAP_MILLIS: u64 = 60 * 1000;

/// The notice a host shows in split mode, with the `mcpServers` block to copy.
pub const SPLIT_MODE_MESSAGE: &str = "The chat could not be shown, but the IDE MCP servers are up";
