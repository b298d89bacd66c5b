//! `server/discover`: the modern era's handshake, stateless (every request names its version
//! in `_meta`, which the session checked).

use crate::mcp::ServerResult;

pub(super) fn answer() -> ServerResult {
    ServerResult::Discover
}
