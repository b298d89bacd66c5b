//! The start options and domain descriptions that Java sends as JSON strings.
//!
//! JSON keeps the native signatures small and stable while the Java API grows: a new knob
//! is a new key, not a new native method. Unknown keys are refused, so a typo in a knob's
//! name is an `IllegalArgumentException`, not a silently ignored setting.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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

fn unsigned(value: &Value, key: &str) -> Result<u64, BridgeError> {
    value
        .as_u64()
        .ok_or_else(|| invalid(format!("option `{key}` must be a non-negative integer")))
}

fn positive_usize(value: &Value, key: &str) -> Result<usize, BridgeError> {
    let number = unsigned(value, key)?;
    if number == 0 {
        return Err(invalid(format!("option `{key}` must be at least 1")));
    }
    usize::try_from(number).map_err(|_| invalid(format!("option `{key}` is too large")))
}

fn millis(value: &Value, key: &str) -> Result<Duration, BridgeError> {
    Ok(Duration::from_millis(unsigned(value, key)?))
}

/// Parses the options of `Native.start`.
pub fn parse_start_options(json: &str) -> Result<StartOptions, BridgeError> {
    let object = parse_object(json, "the start options")?;
    let mut options = StartOptions {
        bases: Vec::new(),
        config: ServerConfig::default(),
        host_can_confirm: false,
    };
    for (key, value) in &object {
        let config = &mut options.config;
        match key.as_str() {
            "bases" => {
                let bases = value
                    .as_array()
                    .ok_or_else(|| invalid("option `bases` must be an array of paths"))?;
                for base in bases {
                    let base = base
                        .as_str()
                        .ok_or_else(|| invalid("option `bases` must hold strings"))?;
                    options.bases.push(PathBuf::from(base));
                }
            }
            "hostCanConfirm" => {
                options.host_can_confirm = value
                    .as_bool()
                    .ok_or_else(|| invalid("option `hostCanConfirm` must be a boolean"))?;
            }
            "queueDepth" => config.queue_depth = positive_usize(value, key)?,
            "maxRunningHandlers" => config.max_running_handlers = positive_usize(value, key)?,
            "maxFrameBytes" => config.max_frame_bytes = positive_usize(value, key)?,
            "outputBudgetBytes" => config.output_budget_bytes = positive_usize(value, key)?,
            "workerThreads" => config.worker_threads = positive_usize(value, key)?,
            "defaultDeadlineMillis" => config.default_deadline = millis(value, key)?,
            "guardTimeoutMillis" => config.guard_timeout = millis(value, key)?,
            "progressHeartbeatMillis" => config.progress_heartbeat = millis(value, key)?,
            "drainTimeoutMillis" => config.drain_timeout = millis(value, key)?,
            "tokenRotationMillis" => config.tokens.rotation = millis(value, key)?,
            "tokenOverlapMillis" => config.tokens.overlap = millis(value, key)?,
            other => return Err(invalid(format!("unknown start option `{other}`"))),
        }
    }
    if options.bases.is_empty() {
        return Err(invalid(
            "no base directory: pass the IDE's temp dir and java.io.tmpdir",
        ));
    }
    Ok(options)
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
