//! Authentication: every failure looks the same, notifications fail silently, and the token
//! rotates with an overlap measured on the monotonic clock.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use std::time::Duration;

use ide_mcp_protocol::contract::{REQUEST_REJECTED, TOKEN_FILE_NAME};
use ide_mcp_server::mcp::TOKEN_META_KEY;
use serde_json::{json, Value};
use support::TestServers;

fn rejected(reply: &Value) -> bool {
    reply["error"]["code"] == json!(-32600) && reply["error"]["message"] == json!(REQUEST_REJECTED)
}

#[test]
fn every_kind_of_bad_token_gets_the_identical_rejection() {
    let servers = TestServers::start();
    let current =
        std::fs::read_to_string(servers.servers().directory().unwrap().join(TOKEN_FILE_NAME))
            .unwrap();
    let mut client = servers.client();
    let variants = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "ping", "params": {} }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "ping", "params": { "_meta": {} } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "ping", "params": { "_meta": { TOKEN_META_KEY: "" } } }),
        json!({ "jsonrpc": "2.0", "id": 5, "method": "ping", "params": { "_meta": { TOKEN_META_KEY: "wrong" } } }),
        json!({ "jsonrpc": "2.0", "id": 6, "method": "ping", "params": { "_meta": { TOKEN_META_KEY: &current[..current.len() - 1] } } }),
        json!({ "jsonrpc": "2.0", "id": 7, "method": "ping", "params": { "_meta": { TOKEN_META_KEY: format!("{current}x") } } }),
        json!({ "jsonrpc": "2.0", "id": 8, "method": "ping", "params": { "_meta": { TOKEN_META_KEY: 42 } } }),
        json!({ "jsonrpc": "2.0", "id": 9, "method": "ping", "params": { "token": current } }),
        json!({ "jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": { "name": "run", "arguments": { "tool": "echo", "args": { "value": 1 } } } }),
    ];
    let mut errors = Vec::new();
    for variant in &variants {
        client.send_value(variant).unwrap();
        let reply = client.read_message().unwrap().unwrap();
        assert_eq!(reply["id"], variant["id"]);
        assert!(rejected(&reply), "{reply}");
        errors.push(reply["error"].clone());
    }
    assert!(errors.windows(2).all(|pair| pair[0] == pair[1]));
    servers.stop();
}

#[test]
fn a_notification_with_a_bad_token_is_dropped_silently() {
    let servers = TestServers::start();
    let mut client = servers.client();
    client
        .send_value(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .unwrap();
    client
        .send_value(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1, "_meta": { TOKEN_META_KEY: "wrong" } } }))
        .unwrap();
    // The next message is the reply to the ping: nothing answered the notifications.
    let reply = client.request("ping", json!({})).unwrap();
    assert!(reply.get("result").is_some(), "{reply}");
    servers.stop();
}

#[test]
fn the_previous_token_works_during_the_overlap_and_never_after() {
    let servers = TestServers::start();
    let token_file = servers.servers().directory().unwrap().join(TOKEN_FILE_NAME);
    let first = std::fs::read_to_string(&token_file).unwrap();
    let mut client = servers.client();
    client.set_token(Some(first.clone()));

    servers.servers().rotate_token().unwrap();
    let second = std::fs::read_to_string(&token_file).unwrap();
    assert_ne!(first, second);
    assert!(!token_file.with_file_name("token.next").exists());

    // Within the overlap, the previous token is still accepted.
    servers.clock.advance(Duration::from_secs(59));
    let reply = client.request("ping", json!({})).unwrap();
    assert!(reply.get("result").is_some(), "{reply}");

    // After it, the previous token is rejected; the client re-reads the file and retries.
    servers.clock.advance(Duration::from_secs(2));
    let id = client.send_request("ping", json!({})).unwrap();
    let reply = client.read_message().unwrap().unwrap();
    assert_eq!(reply["id"], id.to_value());
    assert!(rejected(&reply), "{reply}");
    let retried = client.request("ping", json!({})).unwrap();
    assert!(retried.get("result").is_some(), "{retried}");

    // Two rotations later the first token is dead even inside a fresh overlap.
    servers.servers().rotate_token().unwrap();
    let mut old = servers.client();
    old.set_token(Some(first));
    let id = old.send_request("ping", json!({})).unwrap();
    let reply = old.read_message().unwrap().unwrap();
    assert_eq!(reply["id"], id.to_value());
    assert!(rejected(&reply));
    servers.stop();
}

#[test]
fn the_token_file_holds_a_43_character_base64url_token() {
    let servers = TestServers::start();
    let token =
        std::fs::read_to_string(servers.servers().directory().unwrap().join(TOKEN_FILE_NAME))
            .unwrap();
    assert_eq!(token.len(), 43);
    assert!(token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    servers.stop();
}
