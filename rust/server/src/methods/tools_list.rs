//! `tools/list`: the three meta-tools, always in the same order.

use crate::mcp::ServerResult;

pub(super) fn answer() -> ServerResult {
    ServerResult::ToolsList
}
