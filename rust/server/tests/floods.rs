//! Connection floods from the same machine: token-less holders, stalled half-frames and idle
//! connections cannot keep a client with the token from being served.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use ide_mcp_server::transport::BlockingStream as UnixStream;
use std::io::{BufRead, BufReader, Read, Write};
use std::time::{Duration, Instant};

use ide_mcp_server::ServerName;
use serde_json::json;
use support::{Setup, TestServers};

/// Far more than the second or so a client with the token should wait, and far less than the
/// hour a flood used to hold a server for: the bound is generous because machines are noisy.
const SERVED_WITHIN: Duration = Duration::from_secs(15);

fn servers_with(configure: impl FnOnce(&mut Setup)) -> TestServers {
    let mut setup = Setup::default();
    configure(&mut setup);
    TestServers::start_with(setup)
}

/// A client with the token connects and is answered, within [`SERVED_WITHIN`].
fn a_client_with_the_token_is_served(servers: &TestServers) {
    let started = Instant::now();
    let mut client = servers.client();
    client.set_read_timeout(Some(SERVED_WITHIN)).unwrap();
    let outcome = client.run("echo", json!({ "value": "served" })).unwrap();
    assert!(!outcome.is_error, "{}", outcome.text);
    assert!(started.elapsed() < SERVED_WITHIN, "{:?}", started.elapsed());
}

fn connect(servers: &TestServers) -> UnixStream {
    UnixStream::connect(servers.socket(ServerName::Code)).unwrap()
}

#[test]
fn token_less_holders_do_not_hold_the_server() {
    let servers = servers_with(|_| {});
    let mut holders = Vec::new();
    for id in 0..64 {
        let mut holder = connect(&servers);
        holder
            .write_all(
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes(),
            )
            .unwrap();
        holders.push(holder);
    }
    // Each was rejected (those not shed yet say so), and then sits there.
    let mut first = BufReader::new(holders.last().unwrap().try_clone().unwrap());
    let mut line = String::new();
    first.read_line(&mut line).unwrap();
    assert!(line.contains("request rejected"), "{line}");
    a_client_with_the_token_is_served(&servers);
    drop(holders);
    servers.stop();
}

#[test]
fn stalled_half_frames_do_not_hold_the_server() {
    let servers = servers_with(|_| {});
    let holders: Vec<UnixStream> = (0..300)
        .map(|_| {
            let mut holder = connect(&servers);
            holder.write_all(b"100\njsonrpc: \"2.").unwrap();
            holder
        })
        .collect();
    a_client_with_the_token_is_served(&servers);
    drop(holders);
    servers.stop();
}

#[test]
fn three_thousand_idle_connections_do_not_hold_the_server() {
    let servers = servers_with(|_| {});
    let holders: Vec<UnixStream> = (0..3000).map(|_| connect(&servers)).collect();
    a_client_with_the_token_is_served(&servers);
    drop(holders);
    servers.stop();
}

#[test]
fn messages_without_a_valid_token_do_not_end_the_first_message_timer() {
    let servers = servers_with(|s| s.config.first_message_timeout = Duration::from_millis(500));
    let mut pretender = connect(&servers);
    pretender
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let started = Instant::now();
    let mut sink = [0u8; 4096];
    let closed = loop {
        if started.elapsed() > Duration::from_secs(20) {
            break false;
        }
        // A message with a wrong token every 100 ms: answered, but never authenticated.
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping",
            "params": {"_meta": {ide_mcp_protocol::contract::TOKEN_META_KEY: "wrong"}}});
        if pretender.write_all(format!("{ping}\n").as_bytes()).is_err() {
            break true;
        }
        match pretender.read(&mut sink) {
            Ok(0) => break true,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break true,
        }
    };
    assert!(
        closed,
        "a connection that never showed a valid token stayed open"
    );
    a_client_with_the_token_is_served(&servers);
    servers.stop();
}

#[test]
fn one_process_cannot_take_every_authenticated_connection() {
    let servers = servers_with(|s| {
        s.config.max_connections_per_server = 8;
        s.config.max_connections_per_peer = 2;
    });
    let mut first = servers.client();
    first.request("ping", json!({})).unwrap();
    let mut second = servers.client();
    second.request("ping", json!({})).unwrap();
    let mut third = servers.client();
    let reply = third.request("ping", json!({})).unwrap();
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("already has 2 connections")),
        "{reply}"
    );
    assert!(matches!(third.read_message(), Ok(None) | Err(_)));
    drop(first);
    // A place is free again once one of them closed.
    let mut fourth = servers.client();
    fourth.set_read_timeout(Some(SERVED_WITHIN)).unwrap();
    let mut answered = false;
    for _ in 0..50 {
        match fourth.request("ping", json!({})) {
            Ok(reply) if reply.get("result").is_some() => {
                answered = true;
                break;
            }
            _ => {
                std::thread::sleep(Duration::from_millis(100));
                fourth = servers.client();
            }
        }
    }
    assert!(answered);
    servers.stop();
}
