//! The server benchmark: how our Unix-socket MCP servers compare with a raw socket
//! ping-pong of the same bytes and with rmcp, how many calls per second they sustain, and what
//! an idle connection costs. `src/main.rs` runs it and writes docs/BENCHMARKS.md; the pieces
//! are public so a test can drive them briefly.

pub mod connection;
pub mod counting_alloc;
pub mod endpoint;
pub mod load;
pub mod machine;
pub mod memory;
pub mod report;
pub mod run;
pub mod server_process;
pub mod targets;
pub mod wire;
