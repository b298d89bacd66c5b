//! The start options and domain descriptions that Java sends as JSON strings.
//!
//! JSON keeps the native signatures small and stable while the Java API grows: a new knob
//! is a new key, not a new native method. The knobs are `ServerConfig`'s options (listed once,
//! in `ide_mcp_server::config::OPTIONS`); only `bases` and `hostCanConfirm` are read here.
//! Unknown keys are refused, so a typo in a knob's name is an `IllegalArgumentException`, not
//! a silently ignored setting.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_server::mcp_config::BridgeLauncher;
use ide_mcp_server::{
    DomainSpec, ServerConfig, ServerName, ToolAnnotations, ToolHandler, ToolSpec,
};
use serde_json::{Map, Value};

use crate::error::BridgeError;

/// What `Native.start` needs besides the guard and the host.
#[derive(Debug)]
pub struct StartOptions {
    /// Candidate base directories, in order of preference.
    pub bases: Vec<PathBuf>,
    /// The servers' knobs.
    pub config: ServerConfig,
    /// Whether the Java host can show a confirmation.
    pub host_can_confirm: bool,
}

fn invalid(message: impl Into<String>) -> BridgeError {
    BridgeError::IllegalArgument(message.into())
}

fn parse_object(json: &str, what: &str) -> Result<Map<String, Value>, BridgeError> {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(invalid(format!("{what} must be a JSON object"))),
        Err(error) => Err(invalid(format!("{what} is not valid JSON: {error}"))),
    }
}

fn millis(value: &Value, key: &str) -> Result<Duration, BridgeError> {
    value
        .as_u64()
        .map(Duration::from_millis)
        .ok_or_else(|| invalid(format!("option `{key}` must be a non-negative integer")))
}

fn paths(value: &Value, key: &str) -> Result<Vec<PathBuf>, BridgeError> {
    let items = value
        .as_array()
        .ok_or_else(|| invalid(format!("option `{key}` must be an array of paths")))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .filter(|path| !path.is_empty())
                .map(PathBuf::from)
                .ok_or_else(|| invalid(format!("option `{key}` must hold non-empty strings")))
        })
        .collect()
}

/// The start options that are not the servers' knobs: they wire the JNI side.
const BASES: &str = "bases";
const HOST_CAN_CONFIRM: &str = "hostCanConfirm";

/// Parses the options of `Native.start`: `bases` and `hostCanConfirm` are read here, every
/// other key is a [`ServerConfig`] option and is handed to [`ServerConfig::from_json_object`].
pub fn parse_start_options(json: &str) -> Result<StartOptions, BridgeError> {
    let mut object = parse_object(json, "the start options")?;
    let bases = match object.remove(BASES) {
        Some(value) => paths(&value, BASES)?,
        None => Vec::new(),
    };
    let host_can_confirm = match object.remove(HOST_CAN_CONFIRM) {
        Some(value) => value
            .as_bool()
            .ok_or_else(|| invalid(format!("option `{HOST_CAN_CONFIRM}` must be a boolean")))?,
        None => false,
    };
    let config = ServerConfig::from_json_object(&object)
        .map_err(|error| invalid(format!("start options: {error}")))?;
    if bases.is_empty() {
        return Err(invalid(
            "no base directory: pass the IDE's temp dir and java.io.tmpdir",
        ));
    }
    Ok(StartOptions {
        bases,
        config,
        host_can_confirm,
    })
}

/// Parses how a client starts the stdio bridge: `{"java": {"javaHome", "pluginDir"}}` or
/// `{"native": {"executable"}}`.
pub fn parse_launcher(json: &str) -> Result<BridgeLauncher, BridgeError> {
    let object = parse_object(json, "the bridge launcher")?;
    let launcher = match (object.get("java"), object.get("native")) {
        (Some(Value::Object(java)), None) => BridgeLauncher::Java {
            java_home: required_string(java, "javaHome", "a Java launcher")?.into(),
            plugin_dir: required_string(java, "pluginDir", "a Java launcher")?.into(),
        },
        (None, Some(Value::Object(native))) => BridgeLauncher::Native {
            executable: required_string(native, "executable", "a native launcher")?.into(),
        },
        _ => {
            return Err(invalid(
                "the bridge launcher must be {\"java\":{…}} or {\"native\":{…}}",
            ))
        }
    };
    Ok(launcher)
}

/// Parses a server name as Java's `Server` enum spells it (`CODE`) or as the wire does
/// (`code`).
pub fn parse_server(name: &str) -> Result<ServerName, BridgeError> {
    ServerName::ALL
        .into_iter()
        .find(|server| server.as_str().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            invalid(format!(
                "unknown server `{name}`: use code, run, vcs or ops"
            ))
        })
}

fn required_string(
    object: &Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<String, BridgeError> {
    object
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| invalid(format!("{what} needs `{key}`, a string")))
}

fn flag(object: &Map<String, Value>, key: &str) -> bool {
    object.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Parses a domain description; `handlers[i]` implements `tools[i]`.
pub fn parse_domain(
    json: &str,
    mut handlers: Vec<Arc<dyn ToolHandler>>,
) -> Result<DomainSpec, BridgeError> {
    let object = parse_object(json, "the domain")?;
    let name = required_string(&object, "name", "a domain")?;
    let description = required_string(&object, "description", "a domain")?;
    let server = parse_server(&required_string(&object, "server", "a domain")?)?;
    let tools_json = object
        .get("tools")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(format!("domain `{name}` needs `tools`, an array")))?;
    if tools_json.len() != handlers.len() {
        return Err(invalid(format!(
            "domain `{name}` has {} tools but {} handlers",
            tools_json.len(),
            handlers.len()
        )));
    }
    let mut tools = Vec::with_capacity(tools_json.len());
    for (tool, handler) in tools_json.iter().zip(handlers.drain(..)) {
        let tool = tool
            .as_object()
            .ok_or_else(|| invalid(format!("each tool of domain `{name}` must be an object")))?;
        let tool_name = required_string(tool, "name", "a tool")?;
        let schema_text = required_string(tool, "inputSchema", &format!("tool `{tool_name}`"))?;
        let input_schema: Value = serde_json::from_str(&schema_text).map_err(|error| {
            invalid(format!(
                "tool `{tool_name}` in domain `{name}`: its input schema is not valid JSON: {error}"
            ))
        })?;
        let deadline = match tool.get("deadlineMillis") {
            None | Some(Value::Null) => None,
            Some(value) => Some(millis(value, "deadlineMillis")?),
        };
        tools.push(ToolSpec {
            description: required_string(tool, "description", &format!("tool `{tool_name}`"))?,
            name: tool_name,
            input_schema,
            annotations: ToolAnnotations {
                read_only: flag(tool, "readOnly"),
                destructive: flag(tool, "destructive"),
            },
            deadline,
            handler,
        });
    }
    Ok(DomainSpec {
        name,
        description,
        server,
        tools,
    })
}

#[cfg(test)]
mod tests {
    use ide_mcp_protocol::contract::MAX_FRAME_BYTES;

    use super::*;

    #[test]
    fn start_options_set_only_the_knobs_given() {
        let options = parse_start_options(
            r#"{"bases":["/tmp/a","/tmp/b"],"guardTimeoutMillis":250,"hostCanConfirm":true}"#,
        );
        let Ok(options) = options else {
            panic!("valid options were refused: {options:?}");
        };
        assert_eq!(
            options.bases,
            vec![PathBuf::from("/tmp/a"), PathBuf::from("/tmp/b")]
        );
        assert_eq!(options.config.guard_timeout, Duration::from_millis(250));
        assert_eq!(
            options.config.queue_depth,
            ServerConfig::default().queue_depth
        );
        assert!(options.host_can_confirm);
    }

    #[test]
    fn every_limit_and_timeout_reaches_the_config() {
        let options = parse_start_options(
            r#"{"bases":["/tmp"],"maxConnectionsPerServer":3,"maxFrameBytes":4096,
                "maxStringBytes":100,"maxArrayLength":10,"maxObjectKeys":11,"maxDepth":12,
                "maxArgumentBytes":2048,"maxResultBytes":8192,"confirmationTimeoutMillis":5,
                "admissionTimeoutMillis":6,"rejectionCooldownMillis":7,
                "firstMessageTimeoutMillis":8,"headerTimeoutMillis":9,"bodyTimeoutMillis":10,
                "idleTimeoutMillis":11,"writeTimeoutMillis":12,"maxBadMessages":4,
                "projectRoots":["/p","/q"],"auditCapacity":50}"#,
        );
        let Ok(StartOptions { config, .. }) = options else {
            panic!("valid options were refused: {options:?}");
        };
        assert_eq!(config.max_connections_per_server, 3);
        assert_eq!(config.max_frame_bytes, 4096);
        assert_eq!(config.decode_limits.max_string_bytes, 100);
        assert_eq!(config.decode_limits.max_array_len, 10);
        assert_eq!(config.decode_limits.max_object_keys, 11);
        assert_eq!(config.decode_limits.max_depth, 12);
        assert_eq!(config.max_argument_bytes, 2048);
        assert_eq!(config.max_result_bytes, 8192);
        assert_eq!(config.confirmation_timeout, Duration::from_millis(5));
        assert_eq!(config.admission_timeout, Duration::from_millis(6));
        assert_eq!(config.rejection_cooldown, Duration::from_millis(7));
        assert_eq!(config.first_message_timeout, Duration::from_millis(8));
        assert_eq!(config.header_timeout, Duration::from_millis(9));
        assert_eq!(config.body_timeout, Duration::from_millis(10));
        assert_eq!(config.idle_timeout, Duration::from_millis(11));
        assert_eq!(config.write_timeout, Duration::from_millis(12));
        assert_eq!(config.max_bad_messages, 4);
        assert_eq!(
            config.project_roots,
            vec![PathBuf::from("/p"), PathBuf::from("/q")]
        );
        assert_eq!(config.audit_capacity, 50);
    }

    #[test]
    fn a_frame_limit_over_64_mib_or_a_zero_timeout_is_refused() {
        let frame = |bytes: usize| format!(r#"{{"bases":["/t"],"maxFrameBytes":{bytes}}}"#);
        assert!(parse_start_options(&frame(MAX_FRAME_BYTES + 1)).is_err());
        assert!(parse_start_options(&frame(MAX_FRAME_BYTES)).is_ok());
        assert!(parse_start_options(r#"{"bases":["/t"],"idleTimeoutMillis":0}"#).is_err());
    }

    #[test]
    fn launchers_parse_both_ways_and_nothing_else() {
        assert!(matches!(
            parse_launcher(r#"{"java":{"javaHome":"/jbr","pluginDir":"/p"}}"#),
            Ok(BridgeLauncher::Java { .. })
        ));
        assert!(matches!(
            parse_launcher(r#"{"native":{"executable":"/bin/ide-mcp"}}"#),
            Ok(BridgeLauncher::Native { .. })
        ));
        assert!(parse_launcher(r#"{"java":{"javaHome":"/jbr"}}"#).is_err());
        assert!(parse_launcher(r#"{"java":{},"native":{}}"#).is_err());
    }

    #[test]
    fn an_unknown_option_is_refused_by_name() {
        let error = parse_start_options(r#"{"bases":["/tmp"],"queueDepht":3}"#);
        assert!(
            matches!(error, Err(BridgeError::IllegalArgument(message)) if message.contains("queueDepht"))
        );
    }

    #[test]
    fn start_options_need_a_base() {
        assert!(matches!(
            parse_start_options("{}"),
            Err(BridgeError::IllegalArgument(_))
        ));
    }

    #[test]
    fn server_names_parse_in_either_case() {
        assert!(matches!(parse_server("CODE"), Ok(ServerName::Code)));
        assert!(matches!(parse_server("vcs"), Ok(ServerName::Vcs)));
        assert!(parse_server("web").is_err());
    }

    #[test]
    fn a_domain_needs_one_handler_per_tool() {
        let json = r#"{"name":"files","description":"d","server":"CODE","tools":[{"name":"read","description":"r","inputSchema":"{}"}]}"#;
        assert!(matches!(
            parse_domain(json, Vec::new()),
            Err(BridgeError::IllegalArgument(message)) if message.contains("1 tools but 0 handlers")
        ));
    }
}
