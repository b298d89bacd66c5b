//! Every limit tripped by one client while a well-behaved client keeps being served.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use ide_mcp_server::transport::BlockingStream as UnixStream;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use ide_mcp_protocol::contract::{TOKEN_FILE_NAME, TOKEN_META_KEY};
use ide_mcp_server::client::Client;
use ide_mcp_server::ServerName;
use serde_json::json;
use support::{Setup, TestServers};

fn servers_with(configure: impl FnOnce(&mut Setup)) -> TestServers {
    let mut setup = Setup::default();
    configure(&mut setup);
    TestServers::start_with(setup)
}

/// Reads until the server closes the stream; returns how long that took.
fn time_until_closed(stream: &mut UnixStream) -> Duration {
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let started = Instant::now();
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return started.elapsed(),
            Ok(_) => continue,
        }
    }
}

fn well_behaved_client_is_served(servers: &TestServers) {
    let mut client = servers.client();
    let outcome = client
        .run("echo", json!({ "value": "still here" }))
        .unwrap();
    assert!(!outcome.is_error);
}

#[test]
fn a_silent_new_connection_is_closed_after_the_first_message_timeout() {
    let servers = servers_with(|s| s.config.first_message_timeout = Duration::from_millis(200));
    let mut silent = UnixStream::connect(servers.socket(ServerName::Code)).unwrap();
    well_behaved_client_is_served(&servers);
    assert!(time_until_closed(&mut silent) < Duration::from_secs(10));
    servers.stop();
}

#[test]
fn a_stalled_frame_header_is_closed_after_the_header_timeout() {
    let servers = servers_with(|s| {
        s.config.header_timeout = Duration::from_millis(200);
        s.config.first_message_timeout = Duration::from_secs(60);
    });
    let mut client = servers.client();
    client.request("ping", json!({})).unwrap();
    client.send_raw_bytes(b"12").unwrap();
    well_behaved_client_is_served(&servers);
    assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    servers.stop();
}

#[test]
fn a_stalled_frame_body_is_closed_after_the_body_timeout() {
    let servers = servers_with(|s| s.config.body_timeout = Duration::from_millis(200));
    let mut client = servers.client();
    client.request("ping", json!({})).unwrap();
    client.send_raw_bytes(b"100\nabc").unwrap();
    well_behaved_client_is_served(&servers);
    assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    servers.stop();
}

#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let servers = servers_with(|s| s.config.idle_timeout = Duration::from_millis(300));
    let mut client = servers.client();
    client.request("ping", json!({})).unwrap();
    well_behaved_client_is_served(&servers);
    assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    servers.stop();
}

#[test]
fn the_idle_timer_counts_from_the_last_message() {
    // Messages 300 ms apart, for longer than the idle timeout in all: the timer the first
    // message set goes off in between and must find the connection active.
    let servers = servers_with(|s| s.config.idle_timeout = Duration::from_millis(600));
    let mut client = servers.client();
    for _ in 0..4 {
        client.request("ping", json!({})).unwrap();
        std::thread::sleep(Duration::from_millis(300));
    }
    client.request("ping", json!({})).unwrap();
    servers.stop();
}

#[test]
fn a_connection_that_spoke_in_time_outlives_the_first_message_timeout() {
    let servers = servers_with(|s| s.config.first_message_timeout = Duration::from_millis(200));
    let mut client = servers.client();
    client.request("ping", json!({})).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    client.request("ping", json!({})).unwrap();
    servers.stop();
}

#[test]
fn a_connection_with_a_call_in_flight_is_not_idle() {
    let servers = servers_with(|s| s.config.idle_timeout = Duration::from_millis(200));
    let mut client = servers.client();
    let outcome = client.run("sleep", json!({ "ms": 700 })).unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    servers.stop();
}

#[test]
fn too_many_bad_messages_close_the_connection() {
    let servers = servers_with(|s| s.config.max_bad_messages = 3);
    let mut client = servers.client();
    let undecodable = b"8\na: \"open";
    for _ in 0..3 {
        client.send_raw_bytes(undecodable).unwrap();
        let reply = client.read_message().unwrap().unwrap();
        assert_eq!(reply["error"]["code"], -32700);
    }
    client.send_raw_bytes(undecodable).unwrap();
    let _ = client.read_message();
    assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    well_behaved_client_is_served(&servers);
    servers.stop();
}

#[test]
fn a_frame_larger_than_any_valid_request_is_refused_before_it_is_decoded() {
    let servers = servers_with(|_| {});
    // Defaults: 1 MiB of arguments at most, so no valid request needs 3 MiB.
    let mut stream = UnixStream::connect(servers.socket(ServerName::Code)).unwrap();
    let payload = format!(
        "jsonrpc: \"2.0\"\nid: 1\nmethod: ping\npad: \"{}\"",
        "x".repeat(3 << 20)
    );
    let mut frame = format!("{}\n", payload.len()).into_bytes();
    frame.extend_from_slice(payload.as_bytes());
    // The server may close before all of it is written.
    let _ = stream.write_all(&frame);
    let mut reply = Vec::new();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = stream.read_to_end(&mut reply);
    assert!(
        reply.is_empty(),
        "answered: {}",
        String::from_utf8_lossy(&reply)
    );
    well_behaved_client_is_served(&servers);
    servers.stop();
}

#[test]
fn a_client_that_stops_reading_is_closed_after_the_write_timeout() {
    let servers = servers_with(|s| {
        s.config.write_timeout = Duration::from_millis(300);
        s.config.output_budget_bytes = 4 * 1024 * 1024;
    });
    let mut greedy = servers.client();
    for _ in 0..16 {
        greedy
            .send_request(
                "tools/call",
                support::run_params("big", json!({ "bytes": 2_000_000 })),
            )
            .unwrap();
    }
    // Long enough for the replies to fill the socket and a write to wait out its timeout even
    // on a loaded machine (the handlers make 32 MB of replies first).
    std::thread::sleep(Duration::from_millis(2500));
    well_behaved_client_is_served(&servers);
    // Whatever was already in the socket buffers can be read, then the stream ends.
    greedy
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut replies = 0;
    while let Ok(Some(_)) = greedy.read_message() {
        replies += 1;
    }
    assert!(
        replies < 16,
        "all {replies} replies arrived; the writer never gave up"
    );
    servers.stop();
}

#[test]
fn connections_over_the_cap_wait_until_one_closes() {
    let servers = servers_with(|s| s.config.max_connections_per_server = 2);
    let mut first = servers.client();
    first.request("ping", json!({})).unwrap();
    let mut second = servers.client();
    second.request("ping", json!({})).unwrap();
    let mut third = servers.client();
    let id = third.send_request("ping", json!({})).unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    assert!(third.read_message().is_err(), "served over the cap");
    drop(first);
    third
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let reply = third.read_message().unwrap().unwrap();
    assert_eq!(reply["id"], id.to_value());
    // Another server has its own cap.
    let mut ops = servers.client_of(ServerName::Ops, Default::default());
    ops.request("ping", json!({})).unwrap();
    servers.stop();
}

#[test]
fn a_message_past_the_decode_limits_is_a_parse_error() {
    let servers = servers_with(|s| s.config.decode_limits.max_array_len = 10);
    let mut client = servers.client();
    client
        .send_request("ping", json!({ "list": (0..100).collect::<Vec<u32>>() }))
        .unwrap();
    let reply = client.read_message().unwrap().unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    let reply = client
        .request("ping", json!({ "list": [1, 2, 3] }))
        .unwrap();
    assert!(reply.get("result").is_some());
    servers.stop();
}

#[test]
fn deep_nesting_is_a_parse_error_on_both_wires() {
    let servers = servers_with(|_| {});
    let token =
        std::fs::read_to_string(servers.servers().directory().unwrap().join(TOKEN_FILE_NAME))
            .unwrap();
    let mut nested = json!(1);
    for _ in 0..200 {
        nested = json!([nested]);
    }
    let message = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping",
        "params": { "deep": nested, "_meta": { TOKEN_META_KEY: token } } });
    let mut line = serde_json::to_vec(&message).unwrap();
    line.push(b'\n');
    let mut stream = UnixStream::connect(servers.socket(ServerName::Code)).unwrap();
    stream.write_all(&line).unwrap();
    let mut lines = Client::from_stream(stream, ide_mcp_server::client::Wire::Lines);
    let reply = lines.read_message().unwrap().unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    let mut framed = servers.client();
    framed.send_value(&message).unwrap();
    let reply = framed.read_message().unwrap().unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    servers.stop();
}

#[test]
fn arguments_over_the_size_cap_are_refused() {
    let servers = servers_with(|s| s.config.max_argument_bytes = 1024);
    let mut client = servers.client();
    let outcome = client
        .run("echo", json!({ "value": "x".repeat(2000) }))
        .unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome.text.contains("larger than 1024 bytes"),
        "{}",
        outcome.text
    );
    well_behaved_client_is_served(&servers);
    servers.stop();
}

#[test]
fn a_result_over_the_size_cap_is_an_error_result() {
    let servers = servers_with(|s| s.config.max_result_bytes = 10_000);
    let mut client = servers.client();
    let outcome = client.run("big", json!({ "bytes": 20_000 })).unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome.text.contains("larger than 10000 bytes"),
        "{}",
        outcome.text
    );
    well_behaved_client_is_served(&servers);
    servers.stop();
}

#[test]
fn a_payload_that_would_expand_past_the_decode_budget_is_a_parse_error() {
    let servers = servers_with(|_| {});
    // No token: the payload is decoded before authentication. A 1 MiB table key that
    // every one of 2,000 rows would copy (2 GB of keys) is refused while decoding.
    let key = "k".repeat(1024 * 1024);
    let mut payload = format!("items[2000]{{{key}}}:\n");
    for _ in 0..2000 {
        payload.push_str("  1\n");
    }
    let mut frame = format!("{}\n", payload.len()).into_bytes();
    frame.extend_from_slice(payload.as_bytes());
    let mut client = servers.client();
    let started = Instant::now();
    client.send_raw_bytes(&frame).unwrap();
    let reply = client.read_message().unwrap().unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    // The reply says why: the message would decode past the budget.
    assert!(
        reply["error"]["data"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("to decode")),
        "{reply}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The same connection goes on, and so does the server.
    let pong = client.request("ping", json!({})).unwrap();
    assert!(pong.get("result").is_some(), "{pong}");
    well_behaved_client_is_served(&servers);
    servers.stop();
}

#[test]
fn a_reply_over_the_frame_limit_is_answered_with_an_error_under_its_id() {
    // The output budget lets the text through; the frame limit does not.
    let servers = servers_with(|s| {
        s.config.max_frame_bytes = 100_000;
        s.config.output_budget_bytes = 1_000_000;
    });
    let mut client = servers.client();
    let reply = client
        .request(
            "tools/call",
            support::run_params("big", json!({ "bytes": 200_000 })),
        )
        .unwrap();
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("exceeded the maximum frame size")),
        "{reply}"
    );
    well_behaved_client_is_served(&servers);
    servers.stop();
}
