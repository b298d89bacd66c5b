#![allow(clippy::unwrap_used)]

use crate::platform::{BlockingListener as UnixListener, BlockingStream as UnixStream};
use std::io::{BufRead, BufReader, Read, Write};
use std::thread;

use bytes::BytesMut;
use ide_mcp_protocol::frame::{encode_frame, MAX_FRAME_BYTES};
use ide_mcp_protocol::toon::{decode_bytes, encode, DecodeOptions, EncodeOptions};
use serde_json::{json, Value};

use super::*;
use crate::transport::MessageStream;

/// The server's side of a test connection over the framed TOON wire: the same transport.
struct FramedPeer(MessageStream);

impl FramedPeer {
    fn new(stream: UnixStream) -> FramedPeer {
        FramedPeer(MessageStream::new(stream, Wire::Frames))
    }

    /// Reads the next frame and decodes its TOON payload; `None` at end of stream.
    fn read_value(&mut self) -> Option<Value> {
        self.0.receive().unwrap()
    }

    fn write_value(&mut self, message: &Value) {
        self.0.send(message).unwrap();
    }

    /// The socket, for bytes the transport would never write.
    fn socket(&self) -> &UnixStream {
        self.0.socket()
    }
}

fn framed(message: &Value) -> Vec<u8> {
    let payload = encode(message, &EncodeOptions::default());
    let mut frame = BytesMut::new();
    encode_frame(payload.as_bytes(), MAX_FRAME_BYTES, &mut frame).unwrap();
    frame.to_vec()
}

fn token_of(message: &Value) -> Option<&str> {
    message
        .get("params")?
        .get("_meta")?
        .get(TOKEN_META_KEY)?
        .as_str()
}

fn framed_pair() -> (Client, FramedPeer) {
    let (client_side, server_side) = UnixStream::pair().unwrap();
    let mut client = Client::from_stream(client_side, Wire::Frames);
    client.set_token(Some("secret-token".to_owned()));
    (client, FramedPeer::new(server_side))
}

#[test]
fn framed_requests_carry_the_token_and_increasing_integer_ids() {
    let (mut client, mut peer) = framed_pair();

    let first = client.send_request("ping", json!({})).unwrap();
    let second = client
        .send_request("tools/list", json!({ "cursor": "x" }))
        .unwrap();

    assert_eq!(first, Id::Int(1));
    assert_eq!(second, Id::Int(2));
    let first_sent = peer.read_value().unwrap();
    let second_sent = peer.read_value().unwrap();
    assert_eq!(first_sent["id"], json!(1));
    assert_eq!(first_sent["jsonrpc"], json!("2.0"));
    assert_eq!(first_sent["method"], json!("ping"));
    assert_eq!(token_of(&first_sent), Some("secret-token"));
    assert_eq!(second_sent["id"], json!(2));
    assert_eq!(second_sent["params"]["cursor"], json!("x"));
    assert_eq!(token_of(&second_sent), Some("secret-token"));
}

#[test]
fn a_framed_message_is_a_decimal_length_line_then_a_toon_payload() {
    let (mut client, peer) = framed_pair();

    client
        .send_value(&json!({ "jsonrpc": "2.0", "method": "ping", "id": 7 }))
        .unwrap();
    drop(client);

    let mut raw = Vec::new();
    peer.socket().read_to_end(&mut raw).unwrap();
    let newline = raw.iter().position(|byte| *byte == b'\n').unwrap();
    let declared: usize = std::str::from_utf8(&raw[..newline])
        .unwrap()
        .parse()
        .unwrap();
    let payload = &raw[newline + 1..];
    assert_eq!(declared, payload.len());
    let decoded = decode_bytes(payload, &DecodeOptions::default()).unwrap();
    assert_eq!(
        decoded,
        json!({ "jsonrpc": "2.0", "method": "ping", "id": 7 })
    );
}

#[test]
fn notifications_carry_the_token_and_no_id() {
    let (mut client, mut peer) = framed_pair();

    client
        .send_notification("notifications/initialized", Value::Null)
        .unwrap();

    let sent = peer.read_value().unwrap();
    assert_eq!(sent.get("id"), None);
    assert_eq!(sent["method"], json!("notifications/initialized"));
    assert_eq!(token_of(&sent), Some("secret-token"));
}

#[test]
fn a_client_without_a_token_sends_no_meta() {
    let (mut client, mut peer) = framed_pair();
    client.set_token(None);

    client.send_request("ping", Value::Null).unwrap();

    let sent = peer.read_value().unwrap();
    assert_eq!(sent.get("params"), None);
}

#[test]
fn lines_wire_sends_one_compact_json_object_per_line() {
    let (client_side, server_side) = UnixStream::pair().unwrap();
    let mut client = Client::from_stream(client_side, Wire::Lines);
    client.set_token(Some("line-token".to_owned()));

    client
        .send_request("tools/call", json!({ "name": "domains", "arguments": {} }))
        .unwrap();
    client.send_request("ping", json!({})).unwrap();

    let mut reader = BufReader::new(server_side.try_clone().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.ends_with('\n'));
    assert!(!first.trim_end_matches('\n').contains('\n'));
    assert!(!first.contains(": "), "not compact: {first}");
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["id"], json!(1));
    assert_eq!(first["params"]["name"], json!("domains"));
    assert_eq!(token_of(&first), Some("line-token"));

    let mut second = String::new();
    reader.read_line(&mut second).unwrap();
    let second: Value = serde_json::from_str(&second).unwrap();
    assert_eq!(second["id"], json!(2));
}

#[test]
fn lines_wire_reads_replies_and_skips_blank_lines() {
    let (client_side, mut server_side) = UnixStream::pair().unwrap();
    let mut client = Client::from_stream(client_side, Wire::Lines);

    server_side
        .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
        .unwrap();
    drop(server_side);

    assert_eq!(
        client.read_message().unwrap(),
        Some(json!({ "jsonrpc": "2.0", "id": 1, "result": {} }))
    );
    assert_eq!(client.read_message().unwrap(), None);
}

#[test]
fn request_sets_notifications_aside_until_its_reply_arrives() {
    let (mut client, mut peer) = framed_pair();
    let server = thread::spawn(move || {
        let request = peer.read_value().unwrap();
        peer.write_value(&json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": { "progressToken": "p", "progress": 1 },
        }));
        peer.write_value(&json!({ "jsonrpc": "2.0", "method": "notifications/message" }));
        peer.write_value(
            &json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "ok": true } }),
        );
    });

    let reply = client.request("ping", json!({})).unwrap();
    server.join().unwrap();

    assert_eq!(reply["result"], json!({ "ok": true }));
    let notifications = client.take_notifications();
    assert_eq!(notifications.len(), 2);
    assert_eq!(notifications[0]["method"], json!("notifications/progress"));
    assert_eq!(notifications[1]["method"], json!("notifications/message"));
    assert!(client.take_notifications().is_empty());
}

#[test]
fn a_reply_to_another_request_waits_for_read_message() {
    let (mut client, mut peer) = framed_pair();
    let earlier = client.send_request("ping", json!({})).unwrap();
    let server = thread::spawn(move || {
        let first = peer.read_value().unwrap();
        let second = peer.read_value().unwrap();
        peer.write_value(&json!({ "jsonrpc": "2.0", "id": first["id"], "result": { "n": 1 } }));
        peer.write_value(&json!({ "jsonrpc": "2.0", "id": second["id"], "result": { "n": 2 } }));
        peer
    });

    let reply = client.request("ping", json!({})).unwrap();
    let _peer = server.join().unwrap();

    assert_eq!(reply["result"]["n"], json!(2));
    let set_aside = client.read_message().unwrap().unwrap();
    assert_eq!(Id::from_value(&set_aside["id"]), Some(earlier));
    assert_eq!(set_aside["result"]["n"], json!(1));
}

#[test]
fn a_reply_split_across_many_writes_is_reassembled() {
    let (mut client, peer) = framed_pair();
    let reply = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": { "content": [{ "type": "text", "text": "a fairly long text ".repeat(40) }] },
    });
    let bytes = framed(&reply);
    let mut server_side = peer.0.into_socket();
    let server = thread::spawn(move || {
        for byte in bytes {
            server_side.write_all(&[byte]).unwrap();
            server_side.flush().unwrap();
        }
    });

    let received = client.read_message().unwrap();
    server.join().unwrap();

    assert_eq!(received, Some(reply));
}

#[test]
fn a_hand_written_toon_frame_decodes() {
    let (mut client, peer) = framed_pair();
    let payload = "jsonrpc: \"2.0\"\nid: 3\nresult:\n  ok: true";
    peer.socket()
        .write_all(format!("{}\n{}", payload.len(), payload).as_bytes())
        .unwrap();

    assert_eq!(
        client.read_message().unwrap(),
        Some(json!({ "jsonrpc": "2.0", "id": 3, "result": { "ok": true } }))
    );
}

#[test]
fn a_clean_end_of_stream_reads_as_none() {
    let (mut client, peer) = framed_pair();
    drop(peer);

    assert_eq!(client.read_message().unwrap(), None);
}

#[test]
fn an_end_of_stream_inside_a_frame_is_a_broken_stream() {
    let (mut client, peer) = framed_pair();
    peer.socket().write_all(b"100\nid: 1").unwrap();
    drop(peer);

    assert!(matches!(client.read_message(), Err(ClientError::Stream(_))));
}

#[test]
fn a_bad_frame_header_is_a_broken_stream() {
    let (mut client, peer) = framed_pair();
    peer.socket().write_all(b"-5\nhello").unwrap();

    assert!(matches!(client.read_message(), Err(ClientError::Stream(_))));
}

#[test]
fn request_fails_as_closed_when_the_server_hangs_up_first() {
    let (mut client, mut peer) = framed_pair();
    let server = thread::spawn(move || {
        peer.read_value().unwrap();
    });

    let outcome = client.request("ping", json!({}));
    server.join().unwrap();

    assert!(matches!(outcome, Err(ClientError::Closed)));
}

#[test]
fn call_tool_returns_the_text_and_the_error_flag() {
    let (mut client, mut peer) = framed_pair();
    let server = thread::spawn(move || {
        let call = peer.read_value().unwrap();
        assert_eq!(call["method"], json!("tools/call"));
        assert_eq!(call["params"]["name"], json!("run"));
        assert_eq!(call["params"]["arguments"]["tool"], json!("find_file"));
        assert_eq!(call["params"]["arguments"]["args"]["name"], json!("Main"));
        peer.write_value(&json!({
            "jsonrpc": "2.0",
            "id": call["id"],
            "result": { "content": [{ "type": "text", "text": "no such tool" }], "isError": true },
        }));
    });

    let outcome = client.run("find_file", json!({ "name": "Main" })).unwrap();
    server.join().unwrap();

    assert_eq!(
        outcome,
        ToolOutcome {
            is_error: true,
            text: "no such tool".to_owned()
        }
    );
}

#[test]
fn call_tool_turns_a_json_rpc_error_into_an_rpc_error() {
    let (mut client, mut peer) = framed_pair();
    let server = thread::spawn(move || {
        let call = peer.read_value().unwrap();
        peer.write_value(&json!({
            "jsonrpc": "2.0",
            "id": call["id"],
            "error": { "code": -32602, "message": "unknown tool", "data": { "tool": "x" } },
        }));
    });

    let outcome = client.call_tool("x", json!({}));
    server.join().unwrap();

    match outcome {
        Err(ClientError::Rpc {
            code,
            message,
            data,
        }) => {
            assert_eq!(code, -32602);
            assert_eq!(message, "unknown tool");
            assert_eq!(data, Some(json!({ "tool": "x" })));
        }
        other => panic!("expected an RPC error, got {other:?}"),
    }
}

#[test]
fn initialize_sends_the_handshake_then_initialized() {
    let (mut client, mut peer) = framed_pair();
    let server = thread::spawn(move || {
        let initialize = peer.read_value().unwrap();
        assert_eq!(initialize["method"], json!("initialize"));
        assert_eq!(
            initialize["params"]["protocolVersion"],
            json!(CLIENT_PROTOCOL_VERSION)
        );
        assert_eq!(initialize["params"]["clientInfo"]["name"], json!("ide-mcp"));
        peer.write_value(&json!({
            "jsonrpc": "2.0",
            "id": initialize["id"],
            "result": { "protocolVersion": CLIENT_PROTOCOL_VERSION, "serverInfo": { "name": "code" } },
        }));
        peer.read_value().unwrap()
    });

    let result = client.initialize().unwrap();
    let initialized = server.join().unwrap();

    assert_eq!(result["serverInfo"]["name"], json!("code"));
    assert_eq!(initialized["method"], json!("notifications/initialized"));
    assert_eq!(initialized.get("id"), None);
    assert_eq!(token_of(&initialized), Some("secret-token"));
}

/// A runtime directory in a temp dir: a `token` file and a listening socket beside it.
struct FakeRuntimeDir {
    dir: tempfile::TempDir,
    listener: UnixListener,
}

impl FakeRuntimeDir {
    fn new(token: &str) -> FakeRuntimeDir {
        let dir = tempfile::tempdir().unwrap();
        let listener = UnixListener::bind(dir.path().join("code.sock")).unwrap();
        let runtime = FakeRuntimeDir { dir, listener };
        runtime.write_token(token);
        runtime
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("code.sock")
    }

    fn write_token(&self, token: &str) {
        // Rotated the way the servers do it: a new file renamed over the old one.
        let next = self.dir.path().join("token.next");
        std::fs::write(&next, format!("{token}\n")).unwrap();
        std::fs::rename(&next, self.dir.path().join(TOKEN_FILE_NAME)).unwrap();
    }
}

/// Plays a server that accepts only `accepted_token`, answering `count` requests; returns the
/// requests it saw.
fn serve_accepting(
    listener: UnixListener,
    accepted_token: &'static str,
    count: usize,
) -> thread::JoinHandle<Vec<Value>> {
    thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut peer = FramedPeer::new(stream);
        let mut seen = Vec::new();
        for _ in 0..count {
            let Some(request) = peer.read_value() else {
                break;
            };
            let reply = if token_of(&request) == Some(accepted_token) {
                json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "accepted": true } })
            } else {
                json!({
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "error": { "code": -32600, "message": "request rejected" },
                })
            };
            peer.write_value(&reply);
            seen.push(request);
        }
        seen
    })
}

#[test]
fn connect_reads_the_token_file_beside_the_socket() {
    let runtime = FakeRuntimeDir::new("current-token");
    let socket = runtime.socket();
    let server = serve_accepting(runtime.listener.try_clone().unwrap(), "current-token", 1);

    let mut client = Client::connect(&socket).unwrap();
    let reply = client.request("ping", json!({})).unwrap();

    assert_eq!(reply["result"]["accepted"], json!(true));
    assert_eq!(server.join().unwrap().len(), 1);
}

#[test]
fn a_rejected_request_is_resent_once_with_the_rotated_token() {
    let runtime = FakeRuntimeDir::new("old-token");
    let socket = runtime.socket();
    let server = serve_accepting(runtime.listener.try_clone().unwrap(), "new-token", 2);
    let mut client = Client::connect(&socket).unwrap();

    runtime.write_token("new-token");
    let reply = client.request("ping", json!({})).unwrap();

    assert_eq!(reply["result"]["accepted"], json!(true));
    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(token_of(&seen[0]), Some("old-token"));
    assert_eq!(token_of(&seen[1]), Some("new-token"));
    assert_eq!(seen[0]["id"], json!(1));
    assert_eq!(seen[1]["id"], json!(2));
}

#[test]
fn a_rejection_with_an_unchanged_token_is_returned_without_a_retry() {
    let runtime = FakeRuntimeDir::new("stale-token");
    let socket = runtime.socket();
    let server = serve_accepting(runtime.listener.try_clone().unwrap(), "other-token", 2);
    let mut client = Client::connect(&socket).unwrap();

    let reply = client.request("ping", json!({})).unwrap();
    client.shutdown_write().unwrap();

    assert!(is_rejection(&reply));
    assert_eq!(server.join().unwrap().len(), 1);
}

#[test]
fn connecting_to_a_missing_socket_names_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("code.sock");

    let error = Client::connect(&socket).unwrap_err();

    assert!(matches!(error, ClientError::Connect { .. }));
    assert!(error.to_string().contains("code.sock"));
}

#[test]
fn a_read_timeout_leaves_a_partial_message_to_resume() {
    let (mut client, peer) = framed_pair();
    client
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let bytes = framed(&json!({ "jsonrpc": "2.0", "id": 1, "result": {} }));
    let (head, tail) = bytes.split_at(bytes.len() / 2);
    peer.socket().write_all(head).unwrap();

    assert!(matches!(client.read_message(), Err(ClientError::Io(_))));
    peer.socket().write_all(tail).unwrap();
    assert_eq!(
        client.read_message().unwrap(),
        Some(json!({ "jsonrpc": "2.0", "id": 1, "result": {} }))
    );
}

#[test]
fn attach_token_creates_params_and_meta_and_keeps_other_meta() {
    let mut bare = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" });
    let mut with_null = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping", "params": null });
    let mut with_meta = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "domains", "_meta": { "progressToken": 5 } },
    });

    attach_token(&mut bare, "t");
    attach_token(&mut with_null, "t");
    attach_token(&mut with_meta, "t");

    assert_eq!(bare["params"], json!({ "_meta": { TOKEN_META_KEY: "t" } }));
    assert_eq!(
        with_null["params"],
        json!({ "_meta": { TOKEN_META_KEY: "t" } })
    );
    assert_eq!(
        with_meta["params"]["_meta"],
        json!({ "progressToken": 5, TOKEN_META_KEY: "t" })
    );
    assert_eq!(with_meta["params"]["name"], json!("domains"));
}

#[test]
fn attach_token_leaves_replies_and_array_params_alone() {
    let reply = json!({ "jsonrpc": "2.0", "id": 1, "result": {} });
    let array_params = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2] });
    let mut reply_copy = reply.clone();
    let mut array_copy = array_params.clone();

    attach_token(&mut reply_copy, "t");
    attach_token(&mut array_copy, "t");

    assert_eq!(reply_copy, reply);
    assert_eq!(array_copy, array_params);
}

#[test]
fn the_token_file_is_beside_the_socket_and_read_without_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "abc_DEF-123\n").unwrap();

    let path = token_file_beside(&dir.path().join("run.sock"));

    assert_eq!(path, dir.path().join("token"));
    assert_eq!(read_token_file(&path).unwrap(), "abc_DEF-123");
}

#[test]
fn debug_output_never_shows_the_token() {
    let (client, _peer) = framed_pair();

    assert!(!format!("{client:?}").contains("secret-token"));
}
