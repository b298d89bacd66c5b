//! The ide-mcp wire, with no I/O: length-prefixed frames, newline-delimited JSON,
//! the TOON codec and the JSON-RPC 2.0 model.
//!
//! Architecture invariant: this crate never touches a socket, a file, a clock or a thread.
//! Everything here is a pure function of bytes in and bytes (or values) out, so the same
//! code serves the server, the bridge, the CLI, the fuzzers and the benchmarks.

pub mod budget;
pub mod contract;
pub mod frame;
pub mod json;
pub mod jsonrpc;
pub mod ndjson;
pub mod toon;
