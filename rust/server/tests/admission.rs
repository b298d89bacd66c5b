//! Admission of unexpected clients over real sockets: launched processes and their children
//! go straight in; anyone else is announced and held until the host answers.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ide_mcp_protocol::contract::{TOKEN_FILE_NAME, TOKEN_META_KEY};
use ide_mcp_server::AnswerFuture;
use ide_mcp_server::{ClientProcess, Host};
use serde_json::json;
use support::{Setup, TestServers};
use tokio::sync::oneshot;

/// A host whose person answers when the test says so.
#[derive(Default)]
struct PromptingHost {
    prompts: AtomicUsize,
    shown: Mutex<Vec<ClientProcess>>,
    answers: Mutex<Vec<oneshot::Sender<bool>>>,
}

impl PromptingHost {
    fn answer_all(&self, allow: bool) {
        for sender in self.answers.lock().unwrap().drain(..) {
            let _ = sender.send(allow);
        }
    }

    /// Answers the oldest unanswered prompt.
    fn answer_next(&self, allow: bool) {
        let sender = self.answers.lock().unwrap().remove(0);
        let _ = sender.send(allow);
    }

    fn wait_for_prompts(&self, count: usize) {
        for _ in 0..500 {
            if self.prompts.load(Ordering::SeqCst) >= count {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!(
            "expected {count} prompts, saw {}",
            self.prompts.load(Ordering::SeqCst)
        );
    }
}

impl Host for PromptingHost {
    fn unexpected_client(&self, client: &ClientProcess) -> AnswerFuture {
        self.prompts.fetch_add(1, Ordering::SeqCst);
        self.shown.lock().unwrap().push(client.clone());
        let (sender, receiver) = oneshot::channel();
        self.answers.lock().unwrap().push(sender);
        Box::pin(async move { receiver.await.unwrap_or(false) })
    }
}

fn start(host: Arc<PromptingHost>, admission_timeout: Duration) -> TestServers {
    let mut setup = Setup::default();
    setup.host = Some(host);
    setup.config.admission_timeout = admission_timeout;
    TestServers::start_with(setup)
}

fn no_reply_within(client: &mut ide_mcp_server::client::Client, wait: Duration) {
    client.set_read_timeout(Some(wait)).unwrap();
    match client.read_message() {
        Err(ide_mcp_server::client::ClientError::Io(error))
            if matches!(
                error.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) => {}
        other => panic!("expected no reply yet, got {other:?}"),
    }
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
}

#[test]
fn an_unexpected_client_is_announced_and_held_until_allowed() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_secs(30));
    let mut client = servers.client();
    let id = client.send_request("ping", json!({})).unwrap();
    host.wait_for_prompts(1);
    let shown = host.shown.lock().unwrap()[0].clone();
    assert_eq!(shown.pid, std::process::id() as i32);
    assert!(shown.executable.is_some());
    assert!(!shown.command_line.is_empty());
    no_reply_within(&mut client, Duration::from_millis(300));
    host.answer_all(true);
    let reply = client.read_message().unwrap().unwrap();
    assert_eq!(reply["id"], id.to_value());
    // Once allowed, the same process's next connection is not announced again.
    let mut again = servers.client();
    again.request("ping", json!({})).unwrap();
    assert_eq!(host.prompts.load(Ordering::SeqCst), 1);
    servers.stop();
}

#[test]
fn a_rejected_client_is_closed_and_nothing_it_sent_runs() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_secs(30));
    let mut client = servers.client();
    client
        .send_request(
            "tools/call",
            support::run_params("fail", json!({ "message": "ran" })),
        )
        .unwrap();
    host.wait_for_prompts(1);
    host.answer_all(false);
    assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    assert!(servers.servers().audit_log().is_empty());
    servers.stop();
}

#[test]
fn a_client_with_no_answer_in_time_is_closed() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_millis(200));
    let mut client = servers.client();
    client.send_request("ping", json!({})).unwrap();
    assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    assert_eq!(host.prompts.load(Ordering::SeqCst), 1);
    servers.stop();
}

#[test]
fn a_client_that_vanishes_while_held_never_runs_anything() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_secs(30));
    let mut client = servers.client();
    client
        .send_request(
            "tools/call",
            support::run_params("echo", json!({ "value": 1 })),
        )
        .unwrap();
    host.wait_for_prompts(1);
    // The client leaves, and the answer follows at once: however the server interleaves the
    // two, the request must not run.
    drop(client);
    host.answer_all(true);
    std::thread::sleep(Duration::from_millis(200));
    assert!(servers.servers().audit_log().is_empty());
    servers.stop();
}

#[test]
fn a_client_reconnecting_in_a_loop_gets_one_prompt() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_secs(30));
    let mut held = Vec::new();
    for _ in 0..10 {
        let mut client = servers.client();
        client.send_request("ping", json!({})).unwrap();
        held.push(client);
    }
    host.wait_for_prompts(1);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(host.prompts.load(Ordering::SeqCst), 1);
    host.answer_all(false);
    for mut client in held {
        assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    }
    // Rejected: reconnecting is refused without asking again.
    for _ in 0..10 {
        let mut client = servers.client();
        let _ = client.send_request("ping", json!({}));
        assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    }
    assert_eq!(host.prompts.load(Ordering::SeqCst), 1);
    servers.stop();
}

#[test]
fn a_launched_client_is_admitted_without_a_prompt() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_secs(30));
    servers
        .servers()
        .declare_launched_client(std::process::id() as i32)
        .unwrap();
    let mut client = servers.client();
    client.request("ping", json!({})).unwrap();
    assert_eq!(host.prompts.load(Ordering::SeqCst), 0);
    servers.stop();
}

#[test]
fn a_child_of_a_launched_client_is_admitted_and_a_stranger_is_not() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_millis(500));
    let socket = servers.socket(ide_mcp_server::ServerName::Code);
    let token = std::fs::read_to_string(socket.with_file_name(TOKEN_FILE_NAME)).unwrap();
    let run_child = || outcome_of(spawn_pinging_child(&socket, &token));
    // A stranger (no one vouches for it): announced, never answered, closed.
    assert_eq!(run_child(), "closed");
    assert_eq!(host.prompts.load(Ordering::SeqCst), 1);
    // Our children count once we are declared.
    servers
        .servers()
        .declare_launched_client(std::process::id() as i32)
        .unwrap();
    assert_eq!(run_child(), "answered");
    assert_eq!(host.prompts.load(Ordering::SeqCst), 1);
    servers.stop();
}

#[test]
fn an_admission_credit_admits_one_unexpected_client() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_secs(30));
    servers
        .servers()
        .grant_admission_credit(Duration::from_secs(120))
        .unwrap();
    let mut client = servers.client();
    client.request("ping", json!({})).unwrap();
    assert_eq!(host.prompts.load(Ordering::SeqCst), 0);
    servers.stop();
}

#[test]
fn an_expired_credit_admits_nobody() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_millis(300));
    servers
        .servers()
        .grant_admission_credit(Duration::from_millis(1))
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let mut client = servers.client();
    client.send_request("ping", json!({})).unwrap();
    host.wait_for_prompts(1);
    servers.stop();
}

/// A child process that connects, sends one authenticated `ping`, and prints `answered` or
/// `closed`; every child runs the very same command line.
fn spawn_pinging_child(socket: &std::path::Path, token: &str) -> std::process::Child {
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
line = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"%s":"%s"}}}\n' % (sys.argv[3], sys.argv[2])
s.settimeout(20)
data = b""
try:
    # A rejected client may be closed before it even sends.
    s.sendall(line.encode())
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except OSError:
    pass
print("answered" if b'"result"' in data else "closed")
"#;
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(socket)
        .arg(token)
        .arg(TOKEN_META_KEY)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn outcome_of(child: std::process::Child) -> String {
    let output = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn a_second_process_at_a_pending_prompt_gets_its_own_prompt_and_no_one_elses_yes() {
    let host = Arc::new(PromptingHost::default());
    let servers = start(host.clone(), Duration::from_secs(30));
    let socket = servers.socket(ide_mcp_server::ServerName::Code);
    let token = std::fs::read_to_string(socket.with_file_name(TOKEN_FILE_NAME)).unwrap();
    let first = spawn_pinging_child(&socket, &token);
    host.wait_for_prompts(1);
    // Same executable, same command line, another process: shown on its own.
    let second = spawn_pinging_child(&socket, &token);
    host.wait_for_prompts(2);
    let shown: Vec<i32> = host.shown.lock().unwrap().iter().map(|c| c.pid).collect();
    assert_eq!(shown, [first.id() as i32, second.id() as i32]);
    host.answer_next(true);
    host.answer_next(false);
    assert_eq!(outcome_of(first), "answered");
    assert_eq!(outcome_of(second), "closed");
    servers.stop();
}
