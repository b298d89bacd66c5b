//! The `diagnostics` domain: four small tools the test server serves on every server, for
//! protocol tests, benchmarks and checking an installation from a shell.
//!
//! - `echo {value}` answers `{value}`.
//! - `sleep {ms}` waits, then answers `{slept: ms}`; it stops early when cancelled.
//! - `fail {message}` fails with that message.
//! - `big {bytes}` answers a string of that many bytes.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::handler::{ToolCall, ToolError};
use crate::server_name::ServerName;
use crate::tool::{DomainSpec, ToolAnnotations, ToolSpec};

/// The largest `big` answer, so a typo cannot make the server allocate gigabytes.
pub const MAX_BIG_BYTES: u64 = 64 * 1024 * 1024;

const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only: true,
    destructive: false,
};

/// The `diagnostics` domain for `server`, with each tool's deadline left to the server.
pub fn diagnostics_domain(server: ServerName) -> DomainSpec {
    DomainSpec {
        name: "diagnostics".to_owned(),
        description: "Tools for checking the connection: echo, sleep, fail, big".to_owned(),
        server,
        tools: vec![
            ToolSpec {
                name: "echo".to_owned(),
                description: "Answers with the value it was given".to_owned(),
                input_schema: json!({
                    "type": "object",
                    "properties": { "value": { "description": "Any JSON value" } },
                    "required": ["value"],
                    "additionalProperties": false,
                }),
                annotations: READ_ONLY,
                deadline: None,
                handler: Arc::new(|call: ToolCall| async move { Ok(echo_answer(call.arguments)) }),
            },
            ToolSpec {
                name: "sleep".to_owned(),
                description: "Waits `ms` milliseconds, reporting progress; stops when cancelled"
                    .to_owned(),
                input_schema: json!({
                    "type": "object",
                    "properties": { "ms": { "type": "integer", "minimum": 0, "maximum": 3_600_000, "description": "How long to wait" } },
                    "required": ["ms"],
                    "additionalProperties": false,
                }),
                annotations: READ_ONLY,
                deadline: None,
                handler: Arc::new(|call: ToolCall| async move {
                    let ms = call
                        .arguments
                        .get("ms")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(json!({ "slept": ms })),
                        _ = call.cancellation.cancelled() => Err(ToolError::new("cancelled")),
                    }
                }),
            },
            ToolSpec {
                name: "fail".to_owned(),
                description: "Fails with the given message".to_owned(),
                input_schema: json!({
                    "type": "object",
                    "properties": { "message": { "type": "string", "description": "The failure message" } },
                    "required": ["message"],
                    "additionalProperties": false,
                }),
                annotations: READ_ONLY,
                deadline: None,
                handler: Arc::new(|call: ToolCall| async move {
                    let message = call
                        .arguments
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("failed");
                    Err(ToolError::new(message))
                }),
            },
            ToolSpec {
                name: "big".to_owned(),
                description: "Answers a string of `bytes` bytes".to_owned(),
                input_schema: json!({
                    "type": "object",
                    "properties": { "bytes": { "type": "integer", "minimum": 0, "maximum": MAX_BIG_BYTES, "description": "The length of the answer" } },
                    "required": ["bytes"],
                    "additionalProperties": false,
                }),
                annotations: READ_ONLY,
                deadline: None,
                handler: Arc::new(|call: ToolCall| async move {
                    let bytes = call
                        .arguments
                        .get("bytes")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                    let length = usize::try_from(bytes.min(MAX_BIG_BYTES)).unwrap_or(0);
                    Ok(Value::String("x".repeat(length)))
                }),
            },
        ],
    }
}

/// `echo`'s answer, `{value}`. Arguments that passed the tool's schema are that very object,
/// so they go back as they came, with no new map built and nothing copied; anything else (a
/// caller that skipped the schema) gets the object built from its `value`.
fn echo_answer(arguments: Value) -> Value {
    match arguments {
        Value::Object(map)
            if map.len() == 1 && map.keys().next().is_some_and(|key| key == "value") =>
        {
            Value::Object(map)
        }
        other => json!({ "value": other.get("value").cloned().unwrap_or(Value::Null) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_answers_value_alone_whatever_it_was_given() {
        let nested = json!({ "value": { "a": [1, "two", null] } });
        assert_eq!(echo_answer(nested.clone()), nested);
        assert_eq!(
            echo_answer(json!({ "value": null })),
            json!({ "value": null })
        );
        assert_eq!(
            echo_answer(json!({ "value": 1, "extra": 2 })),
            json!({ "value": 1 })
        );
        assert_eq!(echo_answer(json!({ "other": 1 })), json!({ "value": null }));
        assert_eq!(echo_answer(json!([1])), json!({ "value": null }));
    }
}
