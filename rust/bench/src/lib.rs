//! The server benchmark: how our Unix-socket MCP servers compare with a raw socket
//! ping-pong of the same bytes and with rmcp, what a Java handler behind JNI adds, how many
//! calls per second they sustain, what an idle connection and an idle server set cost, how
//! many instructions a call takes, what hostile input costs the server and the decoders, how
//! the native `search_text` compares with `rg` and the Java search it replaced; and the TOON
//! codec section made from criterion's results. `src/main.rs` runs it and writes
//! docs/BENCHMARKS.md; the pieces are public so a test can drive them briefly.

pub mod codec_turns;
pub mod connection;
pub mod counting_alloc;
pub mod endpoint;
pub mod handoff;
pub mod hostile;
pub mod idle;
pub mod instructions;
pub mod load;
pub mod machine;
pub mod memory;
pub mod one_cpu;
pub mod report;
pub mod run;
pub mod search;
pub mod server_process;
pub mod targets;
pub mod toon_report;
pub mod wire;
