//! The ide-mcp servers, with no JNI: the runtime directory and token, four Unix-socket MCP
//! servers per project, the meta-tools, the call queue and the Security Guard checkpoint.
//!
//! Architecture invariants:
//! - Nothing here knows about the JVM; the JNI crate implements [`handler::ToolHandler`],
//!   [`guard::SecurityGuard`] and [`host::Host`] on top.
//! - No lock is held across an `.await`, and none across a call into a handler, the guard or
//!   the host.
//! - Every byte from a socket is untrusted: a bad message gets an error reply and the
//!   connection goes on; a bad stream closes that connection only.

mod admission;
pub mod audit;
mod call;
pub mod client;
pub mod clock;
pub mod config;
mod connection;
pub mod diagnostics;
pub mod guard;
pub mod handler;
pub mod host;
pub mod limits;
mod listener;
pub mod mcp;
pub mod mcp_config;
pub mod meta_tools;
mod methods;
pub mod page_delivery;
pub mod peer_credentials;
pub mod policy;
pub mod process_info;
pub mod registry;
pub mod runtime_dir;
pub mod server_name;
pub mod servers;
mod session;
mod shared;
pub mod token_ring;
pub mod tool;
pub mod transport;
pub mod wire;

pub use audit::{AuditRecord, AuditVerdict};
pub use config::{ServerConfig, QUEUE_DEPTH};
pub use guard::{AllowAll, GuardRequest, SecurityGuard, Verdict};
pub use handler::{ProgressSink, ToolCall, ToolError, ToolHandler};
pub use host::{HeadlessHost, Host};
pub use process_info::ClientProcess;
pub use server_name::ServerName;
pub use servers::{IdeMcpServers, ServersBuilder, ServersError};
pub use tool::{DomainSpec, ToolAnnotations, ToolSpec};
