//! Tool calls: the in-flight cap, out-of-order replies, cancellation, deadlines, progress and
//! handler faults, over real sockets.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_protocol::contract::{TOKEN_FILE_NAME, TOKEN_META_KEY};
use ide_mcp_server::client::Client;
use ide_mcp_server::{DomainSpec, ServerName, ToolAnnotations, ToolSpec};
use ide_mcp_server::{ToolCall, ToolError};
use serde_json::{json, Value};
use support::{is_error_result, read_until_response, result_text, run_params, Setup, TestServers};

/// A domain whose `wait` tool records when it starts and when it is cancelled.
fn probe_domain(
    started: Arc<AtomicUsize>,
    cancelled: Arc<AtomicBool>,
    deadline: Option<Duration>,
) -> DomainSpec {
    DomainSpec {
        name: "probe".to_owned(),
        description: "A tool that waits to be cancelled".to_owned(),
        server: ServerName::Code,
        tools: vec![
            ToolSpec {
                name: "wait".to_owned(),
                description: "Waits until cancelled".to_owned(),
                input_schema: json!({ "type": "object" }),
                annotations: ToolAnnotations::default(),
                deadline,
                handler: Arc::new(move |call: ToolCall| {
                    let started = Arc::clone(&started);
                    let cancelled = Arc::clone(&cancelled);
                    async move {
                        // The server drops this future when the call ends; the token is how a
                        // handler working elsewhere (another task, a JVM thread) learns of it.
                        let token = call.cancellation.clone();
                        tokio::spawn(async move {
                            token.cancelled().await;
                            cancelled.store(true, Ordering::SeqCst);
                        });
                        started.fetch_add(1, Ordering::SeqCst);
                        std::future::pending::<()>().await;
                        Err::<Value, _>(ToolError::new("unreachable"))
                    }
                }),
            },
            ToolSpec {
                name: "explode".to_owned(),
                description: "Panics".to_owned(),
                input_schema: json!({ "type": "object" }),
                annotations: ToolAnnotations::default(),
                deadline: None,
                handler: Arc::new(|_call: ToolCall| async move {
                    if true {
                        panic!("handler bug");
                    }
                    Ok(Value::Null)
                }),
            },
            ToolSpec {
                name: "report".to_owned(),
                description: "Reports progress twice".to_owned(),
                input_schema: json!({ "type": "object" }),
                annotations: ToolAnnotations::default(),
                deadline: None,
                handler: Arc::new(|call: ToolCall| async move {
                    call.progress
                        .report(1.0, Some(2.0), Some("half".to_owned()));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    call.progress
                        .report(2.0, Some(2.0), Some("done".to_owned()));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok(json!({ "reported": 2 }))
                }),
            },
        ],
    }
}

fn wait_until(condition: impl Fn() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("condition not reached in 5 s");
}

#[test]
fn replies_come_back_as_each_call_finishes() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let slow = client
        .send_request("tools/call", run_params("sleep", json!({ "ms": 400 })))
        .unwrap();
    let fast = client
        .send_request("tools/call", run_params("echo", json!({ "value": "fast" })))
        .unwrap();
    let first = client.read_message().unwrap().unwrap();
    let second = client.read_message().unwrap().unwrap();
    assert_eq!(first["id"], fast.to_value());
    assert_eq!(second["id"], slow.to_value());
    assert!(result_text(&second).contains("slept: 400"));
    servers.stop();
}

/// Sends `count` calls of `big` whose replies are `bytes` of text each, without reading, and
/// adds their ids to `asked`.
fn ask_for_big_replies(
    client: &mut Client,
    count: usize,
    bytes: usize,
    asked: &mut HashSet<String>,
) {
    for _ in 0..count {
        let id = client
            .send_request("tools/call", run_params("big", json!({ "bytes": bytes })))
            .unwrap();
        asked.insert(id.to_value().to_string());
    }
}

/// Reads until every call in `asked` has been answered, each with `bytes` of text, whole.
fn read_every_big_reply(client: &mut Client, mut asked: HashSet<String>, bytes: usize) {
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    while !asked.is_empty() {
        let reply = client.read_message().unwrap().unwrap();
        assert!(
            asked.remove(&reply["id"].to_string()),
            "an unexpected reply: {}",
            reply["id"]
        );
        assert_eq!(result_text(&reply).matches('x').count(), bytes);
    }
}

/// Replies larger than the socket's buffers, and more requests sent while the server's writes
/// wait for room: the connection reads while it waits to write, and once the client reads,
/// every reply arrives whole. (On Linux both sides then wait through the connection's own
/// epoll set at once, where an arming for one side must keep the other's interest.)
#[test]
fn a_client_that_reads_late_gets_every_reply_whole() {
    const REPLY_BYTES: usize = 300_000;
    let servers = TestServers::start_with({
        let mut setup = Setup::default();
        setup.config.output_budget_bytes = 2 * REPLY_BYTES;
        setup
    });
    let mut client = servers.client();
    let mut asked = HashSet::new();
    for _round in 0..2 {
        ask_for_big_replies(&mut client, 6, REPLY_BYTES, &mut asked);
        // Long enough for the first round's replies to fill the socket, so that the second
        // round's requests are read while a write waits for room.
        std::thread::sleep(Duration::from_millis(300));
    }
    read_every_big_reply(&mut client, asked, REPLY_BYTES);
    let echo = client
        .request(
            "tools/call",
            run_params("echo", json!({ "value": "after" })),
        )
        .unwrap();
    assert!(result_text(&echo).contains("after"));
    servers.stop();
}

/// More replies than the connection's outgoing queue holds, to a client that has not read yet:
/// a call that comes while the queue is full waits for room for its reply before it is
/// admitted (the connection's task waits there, which is the back-pressure on the client), and
/// once the client reads, every call has been answered, whole.
#[test]
fn a_call_that_finds_the_outgoing_queue_full_waits_for_room_and_is_answered() {
    const REPLY_BYTES: usize = 100_000;
    // One call in flight and 32 control replies: room for 33 messages in the queue.
    const CALLS: usize = 45;
    let servers = TestServers::start_with({
        let mut setup = Setup::default();
        setup.config.queue_depth = 1;
        setup.config.output_budget_bytes = 2 * REPLY_BYTES;
        setup
    });
    let mut client = servers.client();
    let mut asked = HashSet::new();
    ask_for_big_replies(&mut client, CALLS, REPLY_BYTES, &mut asked);
    // Long enough for the replies to fill the socket and then the queue.
    std::thread::sleep(Duration::from_millis(300));
    read_every_big_reply(&mut client, asked, REPLY_BYTES);
    servers.stop();
}

#[test]
fn over_the_queue_depth_a_call_is_refused_at_once_and_cancellation_still_gets_through() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let mut ids = Vec::new();
    for _ in 0..16 {
        ids.push(
            client
                .send_request("tools/call", run_params("sleep", json!({ "ms": 60_000 })))
                .unwrap(),
        );
    }
    let over = client
        .send_request("tools/call", run_params("echo", json!({ "value": 1 })))
        .unwrap();
    let (refusal, before) = read_until_response(&mut client, &over.to_value());
    assert!(before.is_empty());
    assert!(is_error_result(&refusal));
    assert!(result_text(&refusal).contains("QUEUE_DEPTH"), "{refusal}");

    // Control traffic does not wait behind the calls.
    let pong = client.request("ping", json!({})).unwrap();
    assert!(pong.get("result").is_some());

    // Cancel one; its slot frees and no reply ever comes for it.
    let victim = ids.remove(0);
    client
        .send_notification(
            "notifications/cancelled",
            json!({ "requestId": victim.to_value(), "reason": "test" }),
        )
        .unwrap();
    let next = client
        .request("tools/call", run_params("echo", json!({ "value": 2 })))
        .unwrap();
    assert!(!is_error_result(&next), "{next}");
    for id in ids {
        client
            .send_notification(
                "notifications/cancelled",
                json!({ "requestId": id.to_value() }),
            )
            .unwrap();
    }
    let pong = client.request("ping", json!({})).unwrap();
    assert!(pong.get("result").is_some());
    assert!(client.take_notifications().is_empty());
    servers.stop();
}

#[test]
fn an_id_still_in_flight_cannot_be_reused() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let token =
        std::fs::read_to_string(servers.servers().directory().unwrap().join(TOKEN_FILE_NAME))
            .unwrap();
    let call = |id: i64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "run", "arguments": { "tool": "sleep", "args": { "ms": 300 } },
            "_meta": { TOKEN_META_KEY: token } } })
    };
    client.send_value(&call(7)).unwrap();
    client.send_value(&call(7)).unwrap();
    let first = client.read_message().unwrap().unwrap();
    assert_eq!(first["id"], 7);
    assert_eq!(first["error"]["code"], -32600, "{first}");
    let second = client.read_message().unwrap().unwrap();
    assert_eq!(second["id"], 7);
    assert!(result_text(&second).contains("slept"));
    servers.stop();
}

#[test]
fn cancellation_reaches_the_handler_and_no_reply_follows() {
    let started = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicBool::new(false));
    let mut setup = Setup::default();
    setup.domains.push(probe_domain(
        Arc::clone(&started),
        Arc::clone(&cancelled),
        None,
    ));
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let id = client
        .send_request("tools/call", run_params("wait", json!({})))
        .unwrap();
    wait_until(|| started.load(Ordering::SeqCst) == 1);
    client
        .send_notification(
            "notifications/cancelled",
            json!({ "requestId": id.to_value() }),
        )
        .unwrap();
    wait_until(|| cancelled.load(Ordering::SeqCst));
    // The very next message is the ping's reply: the cancelled call never answers.
    let pong_id = client.send_request("ping", json!({})).unwrap();
    let next = client.read_message().unwrap().unwrap();
    assert_eq!(next["id"], pong_id.to_value(), "{next}");
    servers.stop();
}

#[test]
fn closing_the_connection_cancels_its_calls() {
    let started = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicBool::new(false));
    let mut setup = Setup::default();
    setup.domains.push(probe_domain(
        Arc::clone(&started),
        Arc::clone(&cancelled),
        None,
    ));
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    client
        .send_request("tools/call", run_params("wait", json!({})))
        .unwrap();
    wait_until(|| started.load(Ordering::SeqCst) == 1);
    drop(client);
    wait_until(|| cancelled.load(Ordering::SeqCst));
    servers.stop();
}

#[test]
fn a_call_past_its_deadline_is_an_error_and_its_handler_is_cancelled() {
    let started = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicBool::new(false));
    let mut setup = Setup::default();
    setup.domains.push(probe_domain(
        Arc::clone(&started),
        Arc::clone(&cancelled),
        Some(Duration::from_millis(200)),
    ));
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let outcome = client.run("wait", json!({})).unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome.text.contains("deadline of 200 ms"),
        "{}",
        outcome.text
    );
    wait_until(|| cancelled.load(Ordering::SeqCst));
    servers.stop();
}

#[test]
fn a_panicking_handler_is_an_error_result_and_the_server_keeps_serving() {
    let mut setup = Setup::default();
    setup
        .domains
        .push(probe_domain(Arc::default(), Arc::default(), None));
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let outcome = client.run("explode", json!({})).unwrap();
    assert!(outcome.is_error);
    assert!(outcome.text.contains("crashed"), "{}", outcome.text);
    let echoed = client.run("echo", json!({ "value": 1 })).unwrap();
    assert!(!echoed.is_error);
    servers.stop();
}

#[test]
fn handler_progress_is_forwarded_with_the_progress_token() {
    let mut setup = Setup::default();
    setup
        .domains
        .push(probe_domain(Arc::default(), Arc::default(), None));
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let mut params = run_params("report", json!({}));
    params["_meta"] = json!({ "progressToken": "p-1" });
    let id = client.send_request("tools/call", params).unwrap();
    let (reply, before) = read_until_response(&mut client, &id.to_value());
    assert!(!is_error_result(&reply));
    let progress: Vec<&Value> = before
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{before:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "p-1");
    assert_eq!(progress[0]["params"]["progress"], 1.0);
    assert_eq!(progress[1]["params"]["total"], 2.0);
    assert_eq!(progress[1]["params"]["message"], "done");
    servers.stop();
}

#[test]
fn a_long_call_gets_heartbeats_when_the_handler_reports_nothing() {
    let mut setup = Setup::default();
    setup.config.progress_heartbeat = Duration::from_millis(100);
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let mut params = run_params("sleep", json!({ "ms": 1000 }));
    params["_meta"] = json!({ "progressToken": 9 });
    let id = client.send_request("tools/call", params).unwrap();
    let (_reply, before) = read_until_response(&mut client, &id.to_value());
    assert!(before.len() >= 2, "{before:?}");
    assert!(before
        .iter()
        .all(|message| message["params"]["progressToken"] == 9));
    servers.stop();
}

#[test]
fn no_progress_is_sent_without_a_progress_token() {
    let mut setup = Setup::default();
    setup.config.progress_heartbeat = Duration::from_millis(50);
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let id = client
        .send_request("tools/call", run_params("sleep", json!({ "ms": 300 })))
        .unwrap();
    let (_reply, before) = read_until_response(&mut client, &id.to_value());
    assert!(before.is_empty(), "{before:?}");
    servers.stop();
}

#[test]
fn the_per_server_handler_cap_refuses_at_once() {
    let mut setup = Setup::default();
    setup.config.max_running_handlers = 2;
    let servers = TestServers::start_with(setup);
    let mut first = servers.client();
    let mut second = servers.client();
    first
        .send_request("tools/call", run_params("sleep", json!({ "ms": 30_000 })))
        .unwrap();
    second
        .send_request("tools/call", run_params("sleep", json!({ "ms": 30_000 })))
        .unwrap();
    // A call is audited after it took its handler slot: two records, two slots held.
    wait_until(|| servers.servers().audit_log().len() == 2);
    let mut third = servers.client();
    let refused = third.run("echo", json!({ "value": 1 })).unwrap();
    assert!(refused.is_error);
    assert!(
        refused.text.contains("already running 2 tool calls"),
        "{}",
        refused.text
    );
    // Another server's cap is its own.
    let mut other = servers.client_of(ServerName::Ops, Default::default());
    assert!(!other.run("echo", json!({ "value": 1 })).unwrap().is_error);
    servers.stop();
}
