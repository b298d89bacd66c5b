//! A peer of another uid is closed before a byte moves. The test process runs as root, so
//! a child process that drops to `nobody` plays the foreign peer.
// Unix only: it starts a process as another uid (setuid), which Windows has no equivalent of
// in a test.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

use ide_mcp_protocol::contract::{TOKEN_FILE_NAME, TOKEN_META_KEY};
use ide_mcp_server::ServerName;
use serde_json::json;
use support::TestServers;

const NOBODY: u32 = 65534;

#[test]
fn a_peer_of_another_uid_is_closed_before_any_byte() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root to start a process as another user");
        return;
    }
    let servers = TestServers::start();
    let socket = servers.socket(ServerName::Code);
    // Open the path to the other user, so that only the credential check stands in the way.
    let mut path = socket.parent().unwrap().to_path_buf();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    while path.starts_with(servers.base.path()) {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o711)).unwrap();
        if !path.pop() {
            break;
        }
    }
    let token = std::fs::read_to_string(socket.with_file_name(TOKEN_FILE_NAME)).unwrap();
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
payload = ("jsonrpc: \"2.0\"\nid: 1\nmethod: ping\nparams:\n  _meta:\n    \"" + sys.argv[3] + "\": " + sys.argv[2]).encode()
try:
    s.sendall(str(len(payload)).encode() + b"\n" + payload)
except OSError:
    pass
s.settimeout(10)
try:
    data = s.recv(65536)
except OSError:
    data = b""
print("received", len(data))
"#;
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&socket)
        .arg(&token)
        .arg(TOKEN_META_KEY)
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout.trim(), "received 0");

    // The same request from our own uid is answered.
    let mut client = servers.client();
    assert!(client
        .request("ping", json!({}))
        .unwrap()
        .get("result")
        .is_some());
    servers.stop();
}
