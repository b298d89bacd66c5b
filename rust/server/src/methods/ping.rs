//! `ping`: an empty result, at once, whatever else the connection is doing.

use crate::mcp::ServerResult;

pub(super) fn answer() -> ServerResult {
    ServerResult::Ping
}
