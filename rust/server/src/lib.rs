//! The ide-mcp servers, with no JNI: the runtime directory and token, four Unix-socket (AF_UNIX) MCP
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
mod audit;
mod call;
pub mod client;
mod clock;
pub mod config;
mod connection;
pub mod diagnostics;
mod guard;
mod handler;
mod host;
mod joint;
mod limits;
mod listener;
pub mod live_sets;
pub mod mcp;
pub mod mcp_config;
mod meta_tools;
mod methods;
mod outgoing;
pub mod page_delivery;
mod platform;
mod policy;
mod process_info;
mod registry;
pub mod runtime_dir;
mod server_name;
mod servers;
mod session;
mod shared;
mod token_ring;
mod tool;
pub mod transport;
pub mod wire;

pub use audit::{AuditRecord, AuditVerdict};
pub use clock::{Clock, ManualClock, SystemMonotonicClock};
pub use config::{ServerConfig, QUEUE_DEPTH};
pub use guard::{
    AllowAll, ClientIdentity, GuardRequest, JointFuture, JointOutcome, SecurityGuard, Verdict,
    VerdictFuture,
};
pub use handler::{HandlerFuture, ProgressReport, ProgressSink, ToolCall, ToolError, ToolHandler};
pub use host::{AnswerFuture, HeadlessHost, Host};
pub use joint::{JointCall, RunGate};
pub use limits::DecodeLimits;
pub use policy::PATH_KEYWORD;
pub use process_info::ClientProcess;
pub use registry::ToolCollision;
pub use server_name::{ServerName, UnknownServerName};
pub use servers::{IdeMcpServers, ServersBuilder, ServersError};
pub use token_ring::{TokenRingConfig, TOKEN_BYTES, TOKEN_LEN};
pub use tool::{DomainSpec, ToolAnnotations, ToolSpec};

/// The bytes of one slot of a connection's outgoing queue (one message), for the benchmark's
/// memory report to name the queue's block by its size.
#[doc(hidden)]
pub const OUTGOING_SLOT_BYTES: usize = std::mem::size_of::<outgoing::Outgoing>();
