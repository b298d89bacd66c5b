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

/// Every constant above as one JSON object keyed by its name, for the Java side's check that
/// its copy (`dev.lain.claudejb.mcp.Contract`) agrees.
pub fn as_json() -> serde_json::Value {
    serde_json::json!({
        "READY_LINE_PREFIX": READY_LINE_PREFIX,
        "TOKEN_META_KEY": TOKEN_META_KEY,
        "REQUEST_REJECTED": REQUEST_REJECTED,
        "PROTOCOL_VERSION_META_KEY": PROTOCOL_VERSION_META_KEY,
        "MAX_FRAME_BYTES": MAX_FRAME_BYTES,
        "QUEUE_DEPTH": QUEUE_DEPTH,
        "SHARED_DIR_NAME": SHARED_DIR_NAME,
        "TOKEN_FILE_NAME": TOKEN_FILE_NAME,
        "SOCKET_FILE_NAMES": SOCKET_FILE_NAMES,
        "ROTATION_MILLIS": ROTATION_MILLIS,
        "DEFAULT_OVERLAP_MILLIS": DEFAULT_OVERLAP_MILLIS,
        "SPLIT_MODE_MESSAGE": SPLIT_MODE_MESSAGE,
    })
}

#[cfg(test)]
mod tests {
    /// A constant added above but not to [`as_json`](super::as_json) would escape the Java check.
    #[test]
    fn as_json_has_every_constant() {
        let declared: Vec<&str> = include_str!("contract.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("pub const "))
            .filter_map(|rest| rest.split(':').next())
            .collect();
        let json = super::as_json();
        let mut listed: Vec<&str> = json
            .as_object()
            .map(|object| object.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut declared_sorted = declared.clone();
        declared_sorted.sort_unstable();
        listed.sort_unstable();
        assert_eq!(
            declared_sorted, listed,
            "contract::as_json must list every constant"
        );
    }
}
