//! The MCP methods, both eras, the meta-tools and the two wires, over real sockets.
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use ide_mcp_server::client::Wire;
use ide_mcp_server::mcp::{PROTOCOL_VERSION_META_KEY, SERVER_INFO_META_KEY, TOKEN_META_KEY};
use ide_mcp_server::ServerName;
use serde_json::{json, Value};
use support::{is_error_result, run_params, TestServers};

#[test]
fn initialize_then_domains_tools_and_run() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let init = client.initialize().unwrap();
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "ide-mcp-code");

    let domains = client.domains().unwrap();
    assert!(!domains.is_error);
    assert!(domains.text.starts_with("# "), "{}", domains.text);
    assert!(domains.text.contains("diagnostics"), "{}", domains.text);

    let tools = client.tools("diagnostics").unwrap();
    for tool in ["echo", "sleep", "fail", "big"] {
        assert!(tools.text.contains(tool), "{}", tools.text);
    }

    let echoed = client.run("echo", json!({ "value": "héllo 🌍" })).unwrap();
    assert!(!echoed.is_error, "{}", echoed.text);
    let decoded = ide_mcp_protocol::toon::decode(&echoed.text, &Default::default()).unwrap();
    assert_eq!(decoded, json!({ "value": "héllo 🌍" }));
    servers.stop();
}

#[test]
fn tools_list_returns_the_three_meta_tools_in_order() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let reply = client.request("tools/list", json!({})).unwrap();
    let names: Vec<&str> = reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["domains", "tools", "run"]);
    assert_eq!(
        reply["result"]["_meta"][SERVER_INFO_META_KEY]["name"],
        "ide-mcp-code"
    );
    servers.stop();
}

#[test]
fn legacy_results_carry_only_legacy_fields_and_modern_results_the_modern_ones() {
    let servers = TestServers::start();
    let mut client = servers.client();
    client.initialize().unwrap();
    // Strict legacy clients (the TypeScript SDK 1.x) reject a field they do not know.
    let pong = client.request("ping", json!({})).unwrap();
    assert_eq!(
        pong["result"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["_meta"]
    );
    let listed = client.request("tools/list", json!({})).unwrap();
    for modern_only in ["resultType", "ttlMs", "cacheScope"] {
        assert!(listed["result"].get(modern_only).is_none(), "{listed}");
    }
    let called = client
        .request("tools/call", run_params("echo", json!({ "value": 1 })))
        .unwrap();
    assert!(called["result"].get("resultType").is_none(), "{called}");

    let modern = json!({ "_meta": { PROTOCOL_VERSION_META_KEY: "2026-07-28" } });
    let pong = client.request("ping", modern.clone()).unwrap();
    assert_eq!(pong["result"]["resultType"], "complete");
    let listed = client.request("tools/list", modern).unwrap();
    assert_eq!(listed["result"]["resultType"], "complete");
    assert!(listed["result"]["ttlMs"].is_u64());
    servers.stop();
}

#[test]
fn both_eras_work_on_one_connection_in_any_order() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let modern = json!({ "_meta": { PROTOCOL_VERSION_META_KEY: "2026-07-28" } });
    let discover = client.request("server/discover", modern.clone()).unwrap();
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(result["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2026-07-28")));
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["ttlMs"].is_u64());
    assert!(result["cacheScope"].is_string());
    assert!(result["instructions"].is_string());

    let init = client.initialize().unwrap();
    assert_eq!(init["protocolVersion"], "2025-11-25");

    let listed = client.request("tools/list", modern.clone()).unwrap();
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 3);
    let mut call = run_params("echo", json!({ "value": 1 }));
    call["_meta"] = json!({ PROTOCOL_VERSION_META_KEY: "2026-07-28" });
    let called = client.request("tools/call", call).unwrap();
    assert!(!is_error_result(&called));
    let again = client.request("server/discover", json!({})).unwrap();
    assert_eq!(again["result"]["resultType"], "complete");
    servers.stop();
}

#[test]
fn an_unsupported_modern_version_gets_32022_with_supported_and_requested() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let reply = client
        .request(
            "server/discover",
            json!({ "_meta": { PROTOCOL_VERSION_META_KEY: "2099-01-01" } }),
        )
        .unwrap();
    assert_eq!(reply["error"]["code"], -32022);
    assert_eq!(reply["error"]["data"]["requested"], "2099-01-01");
    assert!(reply["error"]["data"]["supported"]
        .as_array()
        .unwrap()
        .contains(&json!("2026-07-28")));
    servers.stop();
}

#[test]
fn initialize_with_an_unknown_version_answers_the_newest_legacy_one() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let reply = client
        .request(
            "initialize",
            json!({ "protocolVersion": "1999-01-01", "capabilities": {} }),
        )
        .unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    let reply = client
        .request(
            "initialize",
            json!({ "protocolVersion": "2024-11-05", "capabilities": {} }),
        )
        .unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    servers.stop();
}

#[test]
fn an_unknown_method_gets_32601() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let reply = client.request("resources/list", json!({})).unwrap();
    assert_eq!(reply["error"]["code"], -32601);
    servers.stop();
}

#[test]
fn a_tool_name_other_than_the_meta_tools_gets_32602() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let reply = client
        .request("tools/call", json!({ "name": "echo", "arguments": {} }))
        .unwrap();
    assert_eq!(reply["error"]["code"], -32602);
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap()
        .contains("domains, tools and run"));
    servers.stop();
}

#[test]
fn unknown_tool_bad_arguments_and_handler_errors_are_error_results() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let unknown = client.run("no_such_tool", json!({})).unwrap();
    assert!(unknown.is_error);
    assert!(unknown.text.contains("tools(domain)"), "{}", unknown.text);

    let bad = client.run("sleep", json!({ "ms": "soon" })).unwrap();
    assert!(bad.is_error);
    assert!(
        bad.text.contains("invalid arguments for `sleep`"),
        "{}",
        bad.text
    );
    assert!(bad.text.contains("ms"), "{}", bad.text);

    let failed = client
        .run("fail", json!({ "message": "disk on fire" }))
        .unwrap();
    assert!(failed.is_error);
    assert!(failed.text.contains("disk on fire"), "{}", failed.text);

    let unknown_domain = client.tools("nope").unwrap();
    assert!(unknown_domain.is_error);
    assert!(unknown_domain.text.contains("diagnostics"));
    servers.stop();
}

#[test]
fn a_result_over_the_output_budget_is_cut_and_says_so() {
    let mut setup = support::Setup::default();
    setup.config.output_budget_bytes = 1000;
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    let outcome = client.run("big", json!({ "bytes": 5000 })).unwrap();
    assert!(outcome.text.len() <= 1000, "{}", outcome.text.len());
    // The notice comes first: clients that show only a preview of a long result show it.
    assert!(
        outcome.text.starts_with("# cut: the result was"),
        "{}",
        outcome.text
    );
    assert!(outcome.text.contains("Narrow the request"));
    servers.stop();
}

#[test]
fn the_ndjson_wire_is_chosen_by_a_leading_brace() {
    let servers = TestServers::start();
    let mut client = servers.client_of(ServerName::Vcs, Wire::Lines);
    let init = client.initialize().unwrap();
    assert_eq!(init["serverInfo"]["name"], "ide-mcp-vcs");
    let echoed = client.run("echo", json!({ "value": [1, 2, 3] })).unwrap();
    assert!(!echoed.is_error);
    assert!(echoed.text.contains("value[3]: 1,2,3"), "{}", echoed.text);
    servers.stop();
}

#[test]
fn an_undecodable_payload_gets_parse_error_and_the_connection_stays_open() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let payload = b"key: \"unterminated";
    let mut frame = format!("{}\n", payload.len()).into_bytes();
    frame.extend_from_slice(payload);
    client.send_raw_bytes(&frame).unwrap();
    let reply = client.read_message().unwrap().unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(reply["error"]["message"], "Parse error");
    assert_eq!(reply["id"], Value::Null);
    let pong = client.request("ping", json!({})).unwrap();
    assert!(pong["result"].is_object(), "{pong}");
    servers.stop();
}

#[test]
fn duplicate_keys_are_a_parse_error() {
    let servers = TestServers::start();
    let mut client = servers.client();
    let payload = b"jsonrpc: \"2.0\"\nid: 1\nid: 2\nmethod: ping";
    let mut frame = format!("{}\n", payload.len()).into_bytes();
    frame.extend_from_slice(payload);
    client.send_raw_bytes(&frame).unwrap();
    let reply = client.read_message().unwrap().unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    servers.stop();
}

#[test]
fn a_batch_is_an_invalid_request() {
    let servers = TestServers::start();
    let mut client = servers.client();
    client
        .send_value(&json!([{ "jsonrpc": "2.0", "id": 1, "method": "ping" }]))
        .unwrap();
    let reply = client.read_message().unwrap().unwrap();
    assert_eq!(reply["error"]["code"], -32600);
    servers.stop();
}

fn assert_closed_without_reply(bytes: &[u8]) {
    let servers = TestServers::start();
    let mut client = servers.client();
    client.send_raw_bytes(bytes).unwrap();
    match client.read_message() {
        Ok(None) | Err(_) => {}
        Ok(Some(message)) => panic!("expected the connection to close, got {message}"),
    }
    // The server keeps serving everyone else.
    let mut other = servers.client();
    other.request("ping", json!({})).unwrap();
    servers.stop();
}

#[test]
fn a_bad_frame_header_closes_the_connection() {
    assert_closed_without_reply(b"12a\nxxxxxxxxxxxx");
}

#[test]
fn a_leading_zero_header_closes_the_connection() {
    assert_closed_without_reply(b"05\nhello");
}

#[test]
fn an_oversize_frame_closes_the_connection() {
    assert_closed_without_reply(b"99999999999\n");
}

#[test]
fn a_frame_over_the_configured_limit_closes_the_connection() {
    let mut setup = support::Setup::default();
    setup.config.max_frame_bytes = 1024;
    let servers = TestServers::start_with(setup);
    let mut client = servers.client();
    client.send_raw_bytes(b"2048\n").unwrap();
    assert!(matches!(client.read_message(), Ok(None) | Err(_)));
    servers.stop();
}

#[test]
fn tokens_in_both_wires_use_the_same_meta_key() {
    assert_eq!(TOKEN_META_KEY, "dev.lain.claudejb/token");
}

/// The process's virtual size: an allocation counts here even before its pages are touched,
/// so a buffer reserved for a declared length shows up at once.
fn virtual_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().next().unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn a_declared_length_the_bytes_do_not_back_grows_no_memory() {
    let servers = TestServers::start();
    let before = virtual_bytes();
    let mut clients = Vec::new();
    for _ in 0..8 {
        let mut client = servers.client();
        // 60 MiB declared, 1 KiB sent: the server must not reserve the rest.
        let mut bytes = b"62914560\n".to_vec();
        bytes.extend_from_slice(&[b'a'; 1024]);
        client.send_raw_bytes(&bytes).unwrap();
        clients.push(client);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // Eight 60 MiB reservations would be 480 MiB; other tests running alongside add far less.
    let grown = virtual_bytes().saturating_sub(before);
    assert!(grown < 200 * 1024 * 1024, "memory grew by {grown} bytes");
    let mut other = servers.client();
    other.request("ping", json!({})).unwrap();
    servers.stop();
}
