//! `ide-mcp testserver` and `ide-mcp bridge` as separate processes, end to end: an MCP
//! session over the bridge's stdio against the real servers, across token rotations.

#![allow(clippy::unwrap_used)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use ide_mcp_protocol::contract::TOKEN_FILE_NAME;
use ide_mcp_server::ServerName;
use serde_json::{json, Value};
use support::{start_server, BINARY};

/// A running test server; stopped by closing its stdin.
struct TestServer {
    child: Child,
    directory: PathBuf,
}

impl TestServer {
    fn start(base: &Path, extra: &[&str]) -> TestServer {
        let mut command = Command::new(BINARY);
        command
            .arg("testserver")
            .arg("--base")
            .arg(base)
            .args(extra);
        let (child, directory) = start_server(command);
        TestServer { child, directory }
    }

    fn stop(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success());
        assert!(
            !self.directory.exists(),
            "the runtime directory was left behind"
        );
    }
}

/// A bridge process speaking JSON lines.
struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Bridge {
    fn start(socket: &Path) -> Bridge {
        let mut child = Command::new(BINARY)
            .arg("bridge")
            .arg(socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Bridge {
            child,
            stdin,
            stdout,
        }
    }

    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut reply = String::new();
            assert!(
                self.stdout.read_line(&mut reply).unwrap() > 0,
                "bridge closed"
            );
            let reply: Value = serde_json::from_str(&reply).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success());
        let mut rest = String::new();
        assert_eq!(self.stdout.read_line(&mut rest).unwrap(), 0, "{rest}");
    }
}

#[test]
fn an_mcp_session_through_the_bridge_survives_token_rotation() {
    let base = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        base.path(),
        &["--rotation-ms", "700", "--overlap-ms", "100"],
    );
    let mut bridge = Bridge::start(&server.directory.join(ServerName::Code.socket_file_name()));

    let init = bridge.call(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "e2e", "version": "1" } }),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let tools = bridge.call(2, "tools/list", json!({}));
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 3);
    let domains = bridge.call(
        3,
        "tools/call",
        json!({ "name": "domains", "arguments": {} }),
    );
    assert!(domains["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("diagnostics"));

    // Several rotations pass, each overlap long over: the bridge must pick up the new token.
    let token_file = server.directory.join(TOKEN_FILE_NAME);
    let first = std::fs::read_to_string(&token_file).unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    assert_ne!(std::fs::read_to_string(&token_file).unwrap(), first);
    let echoed = bridge.call(
        4,
        "tools/call",
        json!({ "name": "run", "arguments": { "tool": "echo", "args": { "value": "after rotation" } } }),
    );
    assert_eq!(echoed["result"]["isError"], false, "{echoed}");
    assert!(echoed["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("after rotation"));

    bridge.finish();
    server.stop();
}

#[test]
fn the_shell_commands_talk_to_the_test_server() {
    let base = tempfile::tempdir().unwrap();
    let server = TestServer::start(base.path(), &[]);
    let socket = server.directory.join(ServerName::Ops.socket_file_name());
    let run = |args: &[&str]| Command::new(BINARY).args(args).output().unwrap();
    let socket_text = socket.to_str().unwrap();
    let domains = run(&["domains", socket_text]);
    assert!(domains.status.success());
    assert!(String::from_utf8_lossy(&domains.stdout).contains("diagnostics"));
    let tools = run(&["tools", socket_text, "diagnostics"]);
    assert!(String::from_utf8_lossy(&tools.stdout).contains("sleep"));
    let echoed = run(&["run", socket_text, "echo", r#"{"value": 42}"#]);
    assert!(echoed.status.success());
    assert!(String::from_utf8_lossy(&echoed.stdout).contains("42"));
    let failed = run(&["run", socket_text, "fail", r#"{"message": "boom"}"#]);
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("boom"));
    server.stop();
}

// Unix signals; Windows stops the test server through its console (Ctrl-C, closing).
#[cfg(unix)]
#[test]
fn the_test_server_stops_cleanly_on_sigterm() {
    let base = tempfile::tempdir().unwrap();
    let server = TestServer::start(base.path(), &["--ignore-stdin"]);
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(server.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let TestServer {
        mut child,
        directory,
    } = server;
    assert!(child.wait().unwrap().success());
    assert!(!directory.exists());
}

/// CPU time (user + system) of a process so far, in clock ticks.
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

// Linux only: it lowers RLIMIT_NOFILE with prlimit and reads /proc.
#[cfg(target_os = "linux")]
#[test]
fn out_of_descriptors_the_listener_backs_off_instead_of_spinning() {
    let base = tempfile::tempdir().unwrap();
    let mut command = Command::new("prlimit");
    command
        .arg("--nofile=40")
        .arg(BINARY)
        .arg("testserver")
        .arg("--base")
        .arg(base.path());
    let (mut child, directory) = start_server(command);
    let socket = directory.join(ServerName::Code.socket_file_name());
    // More connections than descriptors: the kernel queues them, accept fails with EMFILE.
    let flood: Vec<ide_mcp_server::transport::BlockingStream> = (0..60)
        .filter_map(|_| ide_mcp_server::transport::BlockingStream::connect(&socket).ok())
        .collect();
    assert!(flood.len() >= 40, "only {} connections queued", flood.len());
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu_ticks(child.id());
    std::thread::sleep(Duration::from_secs(1));
    let spent = cpu_ticks(child.id()) - before;
    // A spinning accept loop burns a whole core (about 100 ticks a second); backing off
    // costs next to nothing.
    assert!(
        spent < 25,
        "the server used {spent} ticks of CPU in one idle second"
    );
    drop(flood);
    // With descriptors free again, the server serves.
    let output = Command::new(BINARY)
        .args([
            "run",
            socket.to_str().unwrap(),
            "echo",
            r#"{"value": "recovered"}"#,
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}
