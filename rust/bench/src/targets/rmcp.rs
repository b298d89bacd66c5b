//! The same echo tool served by rmcp, the official Rust MCP SDK, the way its documentation
//! shows: a `#[tool]` method in a `#[tool_router]`, served per connection over a Tokio
//! `UnixStream` with rmcp's newline-delimited JSON transport, on a two-worker runtime like ours.

use std::io;
use std::path::Path;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::runtime::Runtime;

use crate::endpoint::{CallShape, Endpoint};
use crate::wire::Wire;

/// The arguments of `echo`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// Any JSON value.
    pub value: Value,
}

/// An MCP server with one tool, `echo`.
#[derive(Debug, Clone)]
pub struct RmcpEcho {
    tool_router: ToolRouter<Self>,
}

impl Default for RmcpEcho {
    fn default() -> Self {
        RmcpEcho {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl RmcpEcho {
    /// Answers with the value it was given.
    #[tool(description = "Answers with the value it was given")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> CallToolResult {
        // The same answer our echo gives, as JSON text instead of TOON.
        CallToolResult::success(vec![ContentBlock::text(
            json!({ "value": args.value }).to_string(),
        )])
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpEcho {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Binds `socket` and serves rmcp connections on a new two-worker runtime, like ours; dropping
/// the runtime stops them.
pub fn start(socket: &Path) -> io::Result<Runtime> {
    super::serve_on_tokio(socket, "rmcp-bench", |stream| async move {
        if let Ok(running) = RmcpEcho::default().serve(stream).await {
            let _ = running.waiting().await;
        }
    })
}

/// An endpoint of the rmcp socket (NDJSON is the only wire it speaks). Pass our servers' token
/// so requests carry the same `_meta` bytes ours do; rmcp ignores it.
pub fn endpoint(socket: &Path, token: Option<String>) -> Endpoint {
    Endpoint {
        socket: socket.to_path_buf(),
        wire: Wire::Lines,
        token,
        shape: CallShape::DirectTool,
    }
}
