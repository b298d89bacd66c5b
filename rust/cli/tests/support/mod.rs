//! Helpers shared by the CLI's integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use ide_mcp_protocol::contract::READY_LINE_PREFIX;

/// The `ide-mcp` binary under test.
pub const BINARY: &str = env!("CARGO_BIN_EXE_ide-mcp");

/// Spawns `command` (an `ide-mcp testserver`, possibly behind a wrapper) with piped stdin and
/// stdout, and waits for its ready line; returns the child and the runtime directory the line
/// names. The child stops when its stdin closes.
pub fn start_server(mut command: Command) -> (Child, PathBuf) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let directory = line
        .trim()
        .strip_prefix(READY_LINE_PREFIX)
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .into();
    (child, directory)
}
