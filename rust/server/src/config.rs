//! Tunables of a server set, each with a safe default; `ServerConfig::default()` is the
//! contract.

use std::path::PathBuf;
use std::time::Duration;

use ide_mcp_protocol::frame::MAX_FRAME_BYTES;

use crate::limits::DecodeLimits;
use crate::token_ring::TokenRingConfig;

pub use ide_mcp_protocol::contract::QUEUE_DEPTH;

/// Every knob of a running server set.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Calls in flight per connection; one more is answered at once with an error.
    pub queue_depth: usize,
    /// Handlers running at once per server, across all its connections.
    pub max_running_handlers: usize,
    /// Connections open at once per server; further clients wait in the kernel's backlog.
    pub max_connections_per_server: usize,
    /// The largest frame (or NDJSON line) accepted or sent, at most 64 MiB.
    pub max_frame_bytes: usize,
    /// Limits on the decoded shape of every message.
    pub decode_limits: DecodeLimits,
    /// The largest `args` of a `run`, measured as compact JSON.
    pub max_argument_bytes: usize,
    /// The largest result a handler may return, measured as compact JSON; a larger one is an
    /// error result (unlike the output budget, which cuts).
    pub max_result_bytes: usize,
    /// The largest tool result text sent back; a longer one is cut and says so first. The
    /// default keeps a result inline in Claude Code (see docs/MCP_CLIENT.md).
    pub output_budget_bytes: usize,
    /// The deadline of a tool that does not declare its own.
    pub default_deadline: Duration,
    /// How long the guard may take before its silence counts as a denial.
    pub guard_timeout: Duration,
    /// How long a person may take to answer a confirmation before it counts as a denial.
    pub confirmation_timeout: Duration,
    /// How long an unexpected client waits for the host's answer before it is closed.
    pub admission_timeout: Duration,
    /// How long a client the host rejected is refused again without a new prompt.
    pub rejection_cooldown: Duration,
    /// How long a new connection may take to send its first complete message.
    pub first_message_timeout: Duration,
    /// How long a frame header may take to arrive once its first byte has.
    pub header_timeout: Duration,
    /// How long a frame body (or a line) may take to arrive once its header has.
    pub body_timeout: Duration,
    /// How long a connection with no calls in flight may stay silent.
    pub idle_timeout: Duration,
    /// How long one write to a client may take; a client that stops reading is closed.
    pub write_timeout: Duration,
    /// Bad messages (undecodable, invalid, unauthenticated) one connection may send before
    /// it is closed.
    pub max_bad_messages: u32,
    /// How often a long call with a progress token gets a heartbeat notification.
    pub progress_heartbeat: Duration,
    /// How often the token rotates, and how long the previous one stays valid.
    pub tokens: TokenRingConfig,
    /// The project's roots: arguments a tool marks as paths must resolve inside one of them.
    pub project_roots: Vec<PathBuf>,
    /// How many audit records are kept (the oldest go first).
    pub audit_capacity: usize,
    /// How long stop waits for running calls and connections to finish.
    pub drain_timeout: Duration,
    /// Worker threads of the runtime that does all socket I/O.
    pub worker_threads: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            queue_depth: QUEUE_DEPTH,
            max_running_handlers: 64,
            max_connections_per_server: 64,
            max_frame_bytes: MAX_FRAME_BYTES,
            decode_limits: DecodeLimits::default(),
            max_argument_bytes: 1024 * 1024,
            max_result_bytes: 32 * 1024 * 1024,
            output_budget_bytes: 32 * 1024,
            default_deadline: Duration::from_secs(120),
            guard_timeout: Duration::from_secs(30),
            confirmation_timeout: Duration::from_secs(120),
            admission_timeout: Duration::from_secs(120),
            rejection_cooldown: Duration::from_secs(30),
            first_message_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(3600),
            write_timeout: Duration::from_secs(30),
            max_bad_messages: 32,
            progress_heartbeat: Duration::from_secs(1),
            tokens: TokenRingConfig::default(),
            project_roots: Vec::new(),
            audit_capacity: 1000,
            drain_timeout: Duration::from_secs(5),
            worker_threads: 2,
        }
    }
}
