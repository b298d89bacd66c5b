//! `ide-mcp bridge`, run as a separate process against a fake server: a Unix listener in the
//! test that speaks the framed TOON wire and checks tokens.

// Unix only: the fake server is a std Unix listener; on Windows the bridge is covered by the
// end-to-end tests against the real test server.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use ide_mcp_protocol::contract::{
    REQUEST_REJECTED, SOCKET_FILE_NAMES, TOKEN_FILE_NAME, TOKEN_META_KEY,
};
use ide_mcp_server::transport::MessageStream;
use ide_mcp_server::wire::Wire;
use serde_json::{json, Value};

/// How long any single step may take before the test fails instead of hanging.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// The server's side of the bridge's connection, over the servers' own transport.
struct FakeServer(MessageStream);

impl FakeServer {
    /// Reads the next frame and decodes its TOON payload; `None` when the bridge hangs up.
    fn read_value(&mut self) -> Option<Value> {
        self.0.receive().unwrap()
    }

    fn write_value(&mut self, message: &Value) {
        self.0.send(message).unwrap();
    }

    fn reply(&mut self, request: &Value, result: Value) {
        self.write_value(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }));
    }

    fn reject(&mut self, request: &Value) {
        self.write_value(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": { "code": -32600, "message": REQUEST_REJECTED },
        }));
    }
}

/// A running bridge, its runtime directory and the fake server it is connected to.
struct Harness {
    dir: tempfile::TempDir,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout_lines: Receiver<String>,
    stderr: Option<thread::JoinHandle<String>>,
    server: FakeServer,
}

impl Harness {
    fn start(token: &str) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        write_token(&dir, token);
        let socket = dir.path().join(SOCKET_FILE_NAMES[0]);
        let listener = UnixListener::bind(&socket).unwrap();
        let mut child = spawn_bridge(&socket);
        let stream = accept_within(&listener, STEP_TIMEOUT);
        stream.set_read_timeout(Some(STEP_TIMEOUT)).unwrap();
        let stdin = child.stdin.take();
        let stdout_lines = read_lines_in_background(child.stdout.take().unwrap());
        let stderr = Some(read_all_in_background(child.stderr.take().unwrap()));
        Harness {
            dir,
            child,
            stdin,
            stdout_lines,
            stderr,
            server: FakeServer(MessageStream::new(stream, Wire::Frames)),
        }
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line the bridge writes on standard output, parsed as JSON.
    fn next_output(&self) -> Value {
        let line = self.stdout_lines.recv_timeout(STEP_TIMEOUT).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("not JSON: {line:?}: {error}"))
    }

    fn rotate_token(&self, token: &str) {
        write_token(&self.dir, token);
    }

    /// Waits for the bridge to exit; returns its status, the rest of its standard output (every
    /// line checked to be JSON) and its standard error.
    fn finish(mut self) -> (ExitStatus, Vec<Value>, String) {
        let status = wait_within(&mut self.child, STEP_TIMEOUT);
        let rest = self
            .stdout_lines
            .iter()
            .map(|line| {
                serde_json::from_str(&line).unwrap_or_else(|error| {
                    panic!("standard output carried a non-JSON line {line:?}: {error}")
                })
            })
            .collect();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status, rest, stderr)
    }
}

fn spawn_bridge(socket: &std::path::Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ide-mcp"))
        .arg("bridge")
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn write_token(dir: &tempfile::TempDir, token: &str) {
    // The way the servers rotate it: a new file renamed over the old one.
    let next = dir.path().join("token.next");
    std::fs::write(&next, token).unwrap();
    std::fs::rename(&next, dir.path().join(TOKEN_FILE_NAME)).unwrap();
}

fn accept_within(listener: &UnixListener, timeout: Duration) -> UnixStream {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + timeout;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                return stream;
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(Instant::now() < deadline, "the bridge never connected");
                thread::sleep(Duration::from_millis(10));
            }
            Err(error) => panic!("accept failed: {error}"),
        }
    }
}

fn wait_within(child: &mut Child, timeout: Duration) -> ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            child.kill().unwrap();
            panic!("the bridge did not exit in time");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

fn read_lines_in_background(stdout: impl Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if sender.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    receiver
}

fn read_all_in_background(mut stream: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    })
}

fn token_of(message: &Value) -> Option<&str> {
    message["params"]["_meta"][TOKEN_META_KEY].as_str()
}

#[test]
fn requests_go_out_with_the_token_and_replies_come_back_as_json_lines() {
    let mut bridge = Harness::start("token-1");

    bridge.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    bridge.send_line(
        r#"{"jsonrpc":"2.0","id":"two","method":"ping","params":{"_meta":{"progressToken":9}}}"#,
    );
    let first = bridge.server.read_value().unwrap();
    let second = bridge.server.read_value().unwrap();
    bridge.server.reply(&first, json!({ "tools": [] }));
    bridge.server.reply(&second, json!({}));

    assert_eq!(first["method"], json!("tools/list"));
    assert_eq!(token_of(&first), Some("token-1"));
    assert_eq!(second["id"], json!("two"));
    assert_eq!(second["params"]["_meta"]["progressToken"], json!(9));
    assert_eq!(token_of(&second), Some("token-1"));
    assert_eq!(
        bridge.next_output(),
        json!({ "jsonrpc": "2.0", "id": 1, "result": { "tools": [] } })
    );
    assert_eq!(
        bridge.next_output(),
        json!({ "jsonrpc": "2.0", "id": "two", "result": {} })
    );
    bridge.close_stdin();
    let (status, rest, _) = bridge.finish();
    assert!(status.success());
    assert!(rest.is_empty());
}

#[test]
fn notifications_pass_through_in_both_directions() {
    let mut bridge = Harness::start("token-1");

    bridge.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let notification = bridge.server.read_value().unwrap();
    bridge.server.write_value(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": { "progressToken": 1, "progress": 0.5 },
    }));

    assert_eq!(notification.get("id"), None);
    assert_eq!(token_of(&notification), Some("token-1"));
    assert_eq!(
        bridge.next_output()["method"],
        json!("notifications/progress")
    );
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_bridge_goes_on() {
    let mut bridge = Harness::start("token-1");

    bridge.send_line("{not json");
    bridge.send_line(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#);
    bridge.send_line(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    let first_error = bridge.next_output();
    let duplicate_error = bridge.next_output();
    let request = bridge.server.read_value().unwrap();
    bridge.server.reply(&request, json!({}));

    for error in [&first_error, &duplicate_error] {
        assert_eq!(error["jsonrpc"], json!("2.0"));
        assert_eq!(error["id"], Value::Null);
        assert_eq!(error["error"]["code"], json!(-32700));
    }
    assert_eq!(request["id"], json!(3));
    assert_eq!(bridge.next_output()["id"], json!(3));
}

#[test]
fn a_changed_token_file_is_read_before_the_next_request() {
    let mut bridge = Harness::start("token-1");
    bridge.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let first = bridge.server.read_value().unwrap();
    bridge.server.reply(&first, json!({}));
    bridge.next_output();

    bridge.rotate_token("token-2");
    bridge.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    let second = bridge.server.read_value().unwrap();

    assert_eq!(token_of(&first), Some("token-1"));
    assert_eq!(token_of(&second), Some("token-2"));
}

#[test]
fn a_request_rejected_after_a_rotation_is_resent_with_the_new_token() {
    let mut bridge = Harness::start("token-1");

    bridge.send_line(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"domains","arguments":{}}}"#);
    let first_attempt = bridge.server.read_value().unwrap();
    // The token rotates while the request is on its way; the server no longer takes the old one.
    bridge.rotate_token("token-2");
    bridge.server.reject(&first_attempt);
    let second_attempt = bridge.server.read_value().unwrap();
    bridge
        .server
        .reply(&second_attempt, json!({ "content": [] }));

    assert_eq!(token_of(&first_attempt), Some("token-1"));
    assert_eq!(token_of(&second_attempt), Some("token-2"));
    assert_eq!(second_attempt["id"], json!(5));
    assert_eq!(second_attempt["params"]["name"], json!("domains"));
    assert_eq!(
        bridge.next_output(),
        json!({ "jsonrpc": "2.0", "id": 5, "result": { "content": [] } })
    );
    bridge.close_stdin();
    let (status, rest, _) = bridge.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "the rejection was passed on too: {rest:?}");
}

#[test]
fn a_rejection_with_an_unchanged_token_is_passed_on() {
    let mut bridge = Harness::start("token-1");

    bridge.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let request = bridge.server.read_value().unwrap();
    bridge.server.reject(&request);

    let reply = bridge.next_output();
    assert_eq!(reply["error"]["message"], json!(REQUEST_REJECTED));
    bridge.close_stdin();
    assert!(bridge.finish().0.success());
}

#[test]
fn end_of_input_with_nothing_in_flight_exits_zero_at_once() {
    let mut bridge = Harness::start("token-1");
    let started = Instant::now();

    bridge.close_stdin();
    let (status, rest, stderr) = bridge.finish();

    assert!(status.success(), "{stderr}");
    assert!(rest.is_empty());
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn end_of_input_waits_for_the_replies_in_flight() {
    let mut bridge = Harness::start("token-1");

    bridge.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#);
    bridge.close_stdin();
    let request = bridge.server.read_value().unwrap();
    thread::sleep(Duration::from_millis(300));
    bridge.server.reply(&request, json!({ "late": true }));

    let (status, rest, stderr) = bridge.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(
        rest,
        vec![json!({ "jsonrpc": "2.0", "id": 1, "result": { "late": true } })]
    );
}

#[test]
fn a_missing_socket_is_an_error_naming_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let socket: PathBuf = dir.path().join(SOCKET_FILE_NAMES[0]);

    let output = Command::new(env!("CARGO_BIN_EXE_ide-mcp"))
        .arg("bridge")
        .arg(&socket)
        .stdin(Stdio::null())
        .output()
        .unwrap();

    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains(&socket.display().to_string()), "{stderr}");
}

#[test]
fn the_server_closing_the_connection_is_an_error() {
    let mut bridge = Harness::start("token-1");

    bridge.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    bridge.server.read_value().unwrap();
    bridge
        .server
        .0
        .socket()
        .shutdown(std::net::Shutdown::Both)
        .unwrap();

    let (status, rest, stderr) = bridge.finish();
    assert!(!status.success());
    assert!(rest.is_empty());
    assert!(stderr.contains("lost the connection"), "{stderr}");
}
