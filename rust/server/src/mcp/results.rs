//! What the servers answer, built from types: [`ServerResult`] becomes the `result` member of
//! a reply, with the fields of the request's era: the server's identity in `_meta` always,
//! `resultType` (and a list's `ttlMs`/`cacheScope`) only in the modern era.

use std::sync::LazyLock;

use serde_json::{json, Map, Value};

use crate::mcp::versions::{supported_versions, Era};
use crate::server_name::ServerName;

/// Where every result names the server that produced it.
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// This library's version, as `serverInfo.version`.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The result of one request.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerResult {
    /// `initialize`, answering with the negotiated version.
    Initialize {
        /// The legacy version both sides speak (see `versions::negotiated_legacy_version`).
        protocol_version: &'static str,
    },
    /// `server/discover`.
    Discover,
    /// `ping`.
    Ping,
    /// `tools/list`: the three meta-tools.
    ToolsList,
    /// `tools/call`: one text block.
    Tool(ToolResult),
}

/// A `tools/call` result carrying one text block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The text: TOON for a successful `run`, words a model can act on otherwise.
    pub text: String,
    /// Whether the call failed (`isError`).
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    pub fn success(text: String) -> Self {
        ToolResult {
            text,
            is_error: false,
        }
    }

    /// A failed result, with what went wrong.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            text: text.into(),
            is_error: true,
        }
    }
}

impl From<ToolResult> for ServerResult {
    fn from(result: ToolResult) -> Self {
        ServerResult::Tool(result)
    }
}

impl ServerResult {
    /// The `result` member of the reply, as `server` answers it in `era`.
    pub fn into_value(self, server: ServerName, era: Era) -> Value {
        // At most six members (`server/discover`'s): sized once, never rehashed.
        let mut result = Map::with_capacity(6);
        let modern = era == Era::Modern;
        match self {
            ServerResult::Initialize { protocol_version } => {
                result.insert("protocolVersion".to_owned(), Value::from(protocol_version));
                result.insert("capabilities".to_owned(), capabilities());
                result.insert("serverInfo".to_owned(), server_info(server));
                result.insert("instructions".to_owned(), Value::from(instructions(server)));
            }
            ServerResult::Discover => {
                result.insert("supportedVersions".to_owned(), json!(supported_versions()));
                result.insert("capabilities".to_owned(), capabilities());
                result.insert("serverInfo".to_owned(), server_info(server));
                result.insert("instructions".to_owned(), Value::from(instructions(server)));
                result.insert("ttlMs".to_owned(), Value::from(0));
                result.insert("cacheScope".to_owned(), Value::from("private"));
            }
            ServerResult::Ping => {}
            ServerResult::ToolsList => {
                result.insert("tools".to_owned(), meta_tools(server));
                if modern {
                    result.insert("ttlMs".to_owned(), Value::from(0));
                    result.insert("cacheScope".to_owned(), Value::from("private"));
                }
            }
            ServerResult::Tool(ToolResult { text, is_error }) => {
                result.insert(
                    "content".to_owned(),
                    json!([{ "type": "text", "text": text }]),
                );
                result.insert("isError".to_owned(), Value::from(is_error));
            }
        }
        if modern {
            result.insert("resultType".to_owned(), Value::from("complete"));
        }
        result.insert(
            "_meta".to_owned(),
            Value::Object(result_meta(server).clone()),
        );
        Value::Object(result)
    }
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
pub(crate) fn result_meta(server: ServerName) -> &'static Map<String, Value> {
    static METAS: LazyLock<[Map<String, Value>; 4]> = LazyLock::new(|| {
        ServerName::ALL.map(|server| {
            let mut meta = Map::new();
            meta.insert(SERVER_INFO_META_KEY.to_owned(), server_info(server));
            meta
        })
    });
    &METAS[server as usize]
}

/// How a model should use the server: the three meta-tools, in one paragraph.
fn instructions(server: ServerName) -> String {
    format!(
        "IDE `{server}` tools. Call domains() to see what this server offers, tools(domain) \
         to see a domain's tools and their parameters, then run(tool, args). Results are TOON \
         (a compact, indentation-based form of JSON)."
    )
}

fn capabilities() -> Value {
    json!({ "tools": { "listChanged": false } })
}

/// The three meta-tools, always in this order.
fn meta_tools(server: ServerName) -> Value {
    json!([
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
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::versions::{negotiated_legacy_version, LEGACY_PROTOCOL_VERSIONS};

    #[test]
    fn initialize_echoes_a_supported_legacy_version() {
        assert_eq!(negotiated_legacy_version(Some("2025-03-26")), "2025-03-26");
        let result = ServerResult::Initialize {
            protocol_version: "2025-03-26",
        }
        .into_value(ServerName::Code, Era::Legacy);
        assert_eq!(result["protocolVersion"], "2025-03-26");
    }

    #[test]
    fn initialize_answers_the_newest_legacy_version_to_an_unknown_one() {
        for requested in [Some("1999-01-01"), Some("2026-07-28"), None] {
            assert_eq!(
                negotiated_legacy_version(requested),
                LEGACY_PROTOCOL_VERSIONS[0]
            );
        }
    }

    fn every_kind() -> [ServerResult; 5] {
        [
            ServerResult::Initialize {
                protocol_version: LEGACY_PROTOCOL_VERSIONS[0],
            },
            ServerResult::Ping,
            ServerResult::Discover,
            ServerResult::ToolsList,
            ServerResult::Tool(ToolResult::success("x".into())),
        ]
    }

    #[test]
    fn every_modern_result_has_result_type_and_server_info() {
        for result in every_kind() {
            let result = result.into_value(ServerName::Vcs, Era::Modern);
            assert_eq!(result["resultType"], "complete");
            assert_eq!(result["_meta"][SERVER_INFO_META_KEY]["name"], "ide-mcp-vcs");
        }
    }

    #[test]
    fn a_legacy_result_carries_no_modern_field() {
        let ping = ServerResult::Ping.into_value(ServerName::Vcs, Era::Legacy);
        assert_eq!(
            ping.as_object()
                .map(|members| members.keys().map(String::as_str).collect::<Vec<_>>()),
            Some(vec!["_meta"])
        );
        for result in every_kind() {
            let result = result.into_value(ServerName::Vcs, Era::Legacy);
            for modern_only in ["resultType", "ttlMs", "cacheScope"] {
                if result.get("supportedVersions").is_none() {
                    assert!(
                        result.get(modern_only).is_none(),
                        "{modern_only} in {result}"
                    );
                }
            }
            assert_eq!(result["_meta"][SERVER_INFO_META_KEY]["name"], "ide-mcp-vcs");
        }
    }

    #[test]
    fn tools_list_holds_the_three_meta_tools_in_order() {
        let result = ServerResult::ToolsList.into_value(ServerName::Code, Era::Modern);
        let names: Vec<&str> = result["tools"]
            .as_array()
            .expect("tools is an array")
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert_eq!(names, ["domains", "tools", "run"]);
    }
}
