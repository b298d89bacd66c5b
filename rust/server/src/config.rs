//! Tunables of a server set, each with the contract's default.

use std::time::Duration;

use ide_mcp_protocol::frame::MAX_FRAME_BYTES;

use crate::token_ring::TokenRingConfig;

/// How many calls one connection may have in flight (the contract's `QUEUE_DEPTH`).
pub const QUEUE_DEPTH: usize = 16;

/// Every knob of a running server set. `ServerConfig::default()` is the contract.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Calls in flight per connection; one more is answered at once with an error.
    pub queue_depth: usize,
    /// Handlers running at once per server, across all its connections.
    pub max_running_handlers: usize,
    /// The largest frame (or NDJSON line) accepted or sent, at most 64 MiB.
    pub max_frame_bytes: usize,
    /// The deadline of a tool that does not declare its own.
    pub default_deadline: Duration,
    /// How long the guard may take before its silence counts as a denial.
    pub guard_timeout: Duration,
    /// The largest tool result text sent back; a longer one is cut and says so.
    pub output_budget_bytes: usize,
    /// How often a long call with a progress token gets a heartbeat notification.
    pub progress_heartbeat: Duration,
    /// How often the token rotates, and how long the previous one stays valid.
    pub tokens: TokenRingConfig,
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
            max_frame_bytes: MAX_FRAME_BYTES,
            default_deadline: Duration::from_secs(120),
            guard_timeout: Duration::from_secs(30),
            output_budget_bytes: 256 * 1024,
            progress_heartbeat: Duration::from_secs(1),
            tokens: TokenRingConfig::default(),
            drain_timeout: Duration::from_secs(5),
            worker_threads: 2,
        }
    }
}
