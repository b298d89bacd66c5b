//! What the load generator connects to, and the messages it sends there.

use std::path::PathBuf;

use ide_mcp_server::client::{attach_token, CLIENT_PROTOCOL_VERSION};
use serde_json::{json, Value};

use crate::wire::{Wire, FIRST_CALL_ID};

/// The value every benchmark call echoes.
pub const ECHO_VALUE: &str = "bench-echo";

/// How a target exposes the echo tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallShape {
    /// Our servers: `tools/call run {tool: echo, args: {value}}` after `initialize`.
    MetaRun,
    /// A server with a plain `echo` tool: `tools/call echo {value}` after `initialize`.
    DirectTool,
    /// A socket that sends every message back unchanged: the same request bytes as
    /// [`CallShape::MetaRun`], no handshake, and the reply is the request itself.
    RawEcho,
}

/// One socket to benchmark and how to talk to it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The Unix socket.
    pub socket: PathBuf,
    /// The wire spoken on it.
    pub wire: Wire,
    /// The token attached to every message; our servers require it, the others ignore it.
    pub token: Option<String>,
    /// How the echo tool is reached.
    pub shape: CallShape,
}

impl Endpoint {
    /// Whether the connection starts with `initialize` and `notifications/initialized`.
    pub fn needs_handshake(&self) -> bool {
        self.shape != CallShape::RawEcho
    }

    /// The `initialize` request, with id 1.
    pub fn initialize_request(&self) -> Value {
        self.with_token(json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": CLIENT_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": { "name": "ide-mcp-bench", "version": env!("CARGO_PKG_VERSION") },
            },
        }))
    }

    /// The `notifications/initialized` notification.
    pub fn initialized_notification(&self) -> Value {
        self.with_token(json!({
            "jsonrpc": "2.0",
            "method": "notifications/initialized",
            "params": {},
        }))
    }

    /// The echo call, with the placeholder id [`FIRST_CALL_ID`].
    pub fn echo_request(&self) -> Value {
        let params = match self.shape {
            CallShape::MetaRun | CallShape::RawEcho => json!({
                "name": "run",
                "arguments": { "tool": "echo", "args": { "value": ECHO_VALUE } },
            }),
            CallShape::DirectTool => json!({
                "name": "echo",
                "arguments": { "value": ECHO_VALUE },
            }),
        };
        self.with_token(json!({
            "jsonrpc": "2.0",
            "id": FIRST_CALL_ID,
            "method": "tools/call",
            "params": params,
        }))
    }

    fn with_token(&self, mut message: Value) -> Value {
        if let Some(token) = &self.token {
            attach_token(&mut message, token);
        }
        message
    }
}
