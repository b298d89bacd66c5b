//! The MCP layer: protocol eras, lifecycle methods, and the shapes of their results.
//!
//! Two eras share one connection. Legacy clients (2024-11-05 … 2025-11-25) open with
//! `initialize`; modern clients (2026-07-28) call `server/discover` and put their version in
//! every request's `_meta`. Nothing here keeps per-connection state, so either may come
//! first, and both may come on the same connection.

use std::sync::LazyLock;

use serde_json::{json, Map, Value};

use crate::server_name::ServerName;

/// The legacy protocol versions, newest first.
pub const LEGACY_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The modern (stateless) protocol versions.
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = ["2026-07-28"];

pub use ide_mcp_protocol::contract::{PROTOCOL_VERSION_META_KEY, REQUEST_REJECTED, TOKEN_META_KEY};

/// Where every result names the server that produced it.
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// This library's version, as `serverInfo.version`.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Whether `version` is one this server speaks, in either era.
pub fn is_supported_version(version: &str) -> bool {
    MODERN_PROTOCOL_VERSIONS.contains(&version) || LEGACY_PROTOCOL_VERSIONS.contains(&version)
}

/// Every supported version, modern first.
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .chain(LEGACY_PROTOCOL_VERSIONS.iter())
        .copied()
        .collect()
}

/// The `serverInfo` object of `server`.
pub fn server_info(server: ServerName) -> Value {
    json!({
        "name": format!("ide-mcp-{server}"),
        "title": format!("IDE {server} tools"),
        "version": SERVER_VERSION,
    })
}

/// The `_meta` every result of `server` carries, built once: every reply clones it instead of
/// formatting the names again.
fn result_meta(server: ServerName) -> &'static Map<String, Value> {
    static METAS: LazyLock<[Map<String, Value>; 4]> = LazyLock::new(|| {
        ServerName::ALL.map(|server| {
            let mut meta = Map::new();
            meta.insert(SERVER_INFO_META_KEY.to_owned(), server_info(server));
            meta
        })
    });
    let index = ServerName::ALL
        .iter()
        .position(|each| *each == server)
        .unwrap_or(0);
    &METAS[index]
}

/// How a model should use the server: the three meta-tools, in one paragraph.
pub fn instructions(server: ServerName) -> String {
    format!(
        "IDE `{server}` tools. Call domains() to see what this server offers, tools(domain) \
         to see a domain's tools and their parameters, then run(tool, args). Results are TOON \
         (a compact, indentation-based form of JSON)."
    )
}

/// Adds what every result carries: `resultType` and the server's identity in `_meta`.
pub fn finish_result(server: ServerName, mut result: Map<String, Value>) -> Value {
    result.insert("resultType".to_owned(), Value::from("complete"));
    match result.get_mut("_meta") {
        Some(Value::Object(meta)) => {
            meta.insert(SERVER_INFO_META_KEY.to_owned(), server_info(server));
        }
        Some(_) => {}
        None => {
            result.insert(
                "_meta".to_owned(),
                Value::Object(result_meta(server).clone()),
            );
        }
    }
    Value::Object(result)
}

fn capabilities() -> Value {
    json!({ "tools": { "listChanged": false } })
}

/// The result of `initialize`: the client's version when we speak it, else our newest legacy
/// version (the client then decides whether to go on).
pub fn initialize_result(server: ServerName, params: Option<&Value>) -> Value {
    let requested = params
        .and_then(|params| params.get("protocolVersion"))
        .and_then(Value::as_str);
    let version = match requested {
        Some(version) if LEGACY_PROTOCOL_VERSIONS.contains(&version) => version,
        _ => LEGACY_PROTOCOL_VERSIONS[0],
    };
    let mut result = Map::new();
    result.insert("protocolVersion".to_owned(), Value::from(version));
    result.insert("capabilities".to_owned(), capabilities());
    result.insert("serverInfo".to_owned(), server_info(server));
    result.insert("instructions".to_owned(), Value::from(instructions(server)));
    finish_result(server, result)
}

/// The result of `server/discover`.
pub fn discover_result(server: ServerName) -> Value {
    let mut result = Map::new();
    result.insert("supportedVersions".to_owned(), json!(supported_versions()));
    result.insert("capabilities".to_owned(), capabilities());
    result.insert("serverInfo".to_owned(), server_info(server));
    result.insert("instructions".to_owned(), Value::from(instructions(server)));
    result.insert("ttlMs".to_owned(), Value::from(0));
    result.insert("cacheScope".to_owned(), Value::from("private"));
    finish_result(server, result)
}

/// The result of `ping`.
pub fn ping_result(server: ServerName) -> Value {
    finish_result(server, Map::new())
}

/// The three meta-tools, always in this order.
pub fn tools_list_result(server: ServerName) -> Value {
    let tools = json!([
        {
            "name": "domains",
            "title": "List domains",
            "description": format!(
                "Lists the domains of the IDE `{server}` server (name, description). Start here."
            ),
            "inputSchema": { "type": "object", "properties": {}, "additionalProperties": false },
            "annotations": { "readOnlyHint": true, "openWorldHint": false },
        },
        {
            "name": "tools",
            "title": "List a domain's tools",
            "description": "Lists a domain's tools: name, description, whether it is read-only or destructive, and its parameters.",
            "inputSchema": {
                "type": "object",
                "properties": { "domain": { "type": "string", "description": "A domain name from domains()." } },
                "required": ["domain"],
                "additionalProperties": false,
            },
            "annotations": { "readOnlyHint": true, "openWorldHint": false },
        },
        {
            "name": "run",
            "title": "Run a tool",
            "description": "Runs one of the domains' tools. `args` must match the tool's parameters as tools(domain) lists them. The answer is TOON.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "tool": { "type": "string", "description": "A tool name from tools(domain)." },
                    "args": { "type": "object", "description": "The tool's arguments." },
                },
                "required": ["tool"],
                "additionalProperties": false,
            },
            "annotations": { "readOnlyHint": false, "destructiveHint": true, "openWorldHint": false },
        },
    ]);
    let mut result = Map::new();
    result.insert("tools".to_owned(), tools);
    result.insert("ttlMs".to_owned(), Value::from(0));
    result.insert("cacheScope".to_owned(), Value::from("private"));
    finish_result(server, result)
}

/// A `tools/call` result carrying one text block.
pub fn tool_result(server: ServerName, text: String, is_error: bool) -> Value {
    let mut result = Map::new();
    result.insert(
        "content".to_owned(),
        json!([{ "type": "text", "text": text }]),
    );
    result.insert("isError".to_owned(), Value::from(is_error));
    finish_result(server, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_echoes_a_supported_legacy_version() {
        let result = initialize_result(
            ServerName::Code,
            Some(&json!({"protocolVersion": "2025-03-26"})),
        );
        assert_eq!(result["protocolVersion"], "2025-03-26");
    }

    #[test]
    fn initialize_answers_the_newest_legacy_version_to_an_unknown_one() {
        for requested in [json!("1999-01-01"), json!("2026-07-28"), json!(3)] {
            let result = initialize_result(
                ServerName::Code,
                Some(&json!({ "protocolVersion": requested })),
            );
            assert_eq!(result["protocolVersion"], LEGACY_PROTOCOL_VERSIONS[0]);
        }
    }

    #[test]
    fn every_result_has_result_type_and_server_info() {
        for result in [
            ping_result(ServerName::Vcs),
            discover_result(ServerName::Vcs),
            tools_list_result(ServerName::Vcs),
            tool_result(ServerName::Vcs, "x".into(), false),
        ] {
            assert_eq!(result["resultType"], "complete");
            assert_eq!(result["_meta"][SERVER_INFO_META_KEY]["name"], "ide-mcp-vcs");
        }
    }

    #[test]
    fn tools_list_holds_the_three_meta_tools_in_order() {
        let result = tools_list_result(ServerName::Code);
        let names: Vec<&str> = result["tools"]
            .as_array()
            .expect("tools is an array")
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert_eq!(names, ["domains", "tools", "run"]);
    }
}
