//! One `run(tool, args)` call from admission to reply: lookup, schema validation, the
//! Security Guard, the handler under its deadline, progress, and the output budget.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use futures::FutureExt;
use ide_mcp_protocol::jsonrpc::{Id, Response};
use ide_mcp_protocol::toon;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::audit::{AuditRecord, AuditVerdict};
use crate::call::checkpoint::{decide, CheckpointTimeouts, Decision};
use crate::call::progress::ProgressForwarder;
use crate::guard::{ClientIdentity, GuardRequest};
use crate::handler::ToolCall;
use crate::limits::json_size_within;
use crate::mcp::{Era, RunArguments, ServerResult, ToolResult};
use crate::meta_tools::{parameters, within_budget};
use crate::registry::{RegisteredTool, Registry, ToolLookup};
use crate::server_name::ServerName;
use crate::session::in_flight::InFlightCalls;
use crate::shared::Shared;

/// The number of the next call: shared by the guard's request and the handler's call.
static NEXT_CALL_NUMBER: AtomicU64 = AtomicU64::new(1);

/// Everything a call task needs; built by the connection when it admits the call.
pub(crate) struct RunCall {
    pub(crate) shared: Arc<Shared>,
    pub(crate) server: ServerName,
    pub(crate) registry: Arc<Registry>,
    pub(crate) id: Id,
    /// The era of the request, which decides the fields of its result.
    pub(crate) era: Era,
    /// The `arguments` of `tools/call`: `{tool, args}`.
    pub(crate) arguments: Map<String, Value>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) client: ClientIdentity,
    pub(crate) cancellation: CancellationToken,
    pub(crate) in_flight: Arc<InFlightCalls>,
    pub(crate) outgoing: mpsc::Sender<Value>,
    /// Held for the whole call: one of the server's handler slots.
    pub(crate) _handler_slot: OwnedSemaphorePermit,
}

impl RunCall {
    /// Runs the call to its end. A cancellation (by the client, the connection closing or the
    /// servers stopping) ends it at once, with no reply.
    pub(crate) async fn run(mut self) {
        let arguments = std::mem::take(&mut self.arguments);
        let outcome = tokio::select! {
            biased;
            _ = self.cancellation.cancelled() => None,
            outcome = self.execute(arguments) => Some(outcome),
        };
        if let Some(mut result) = outcome {
            result.text = within_budget(result.text, self.shared.config.output_budget_bytes);
            let reply = Response::success(
                self.id.clone(),
                ServerResult::Tool(result).into_value(self.server, self.era),
            );
            self.in_flight.finish(&self.id, reply.into_value());
        }
        // The call is over either way; a handler still running learns it here.
        self.cancellation.cancel();
    }

    /// The result of the call: the handler's, or why it did not run.
    async fn execute(&self, run_arguments: Map<String, Value>) -> ToolResult {
        let RunArguments {
            tool: tool_name,
            args: arguments,
        } = match RunArguments::parse(run_arguments) {
            Ok(parsed) => parsed,
            Err(problem) => return ToolResult::error(problem),
        };
        let tool = match self.registry.tool(self.server, &tool_name) {
            ToolLookup::Found(tool) => tool,
            ToolLookup::Withheld(collision) => {
                return ToolResult::error(format!(
                "tool `{tool_name}` is withheld: its name collides with {} on the `{}` server, \
                         so none of them can be called until the IDE resolves it",
                collision.tools.join(", "),
                self.server
            ))
            }
            ToolLookup::Unknown => {
                return ToolResult::error(format!(
                    "unknown tool `{tool_name}` on the `{}` server; call domains(), then \
                         tools(domain), to see the tools",
                    self.server
                ))
            }
        };
        let max_argument_bytes = self.shared.config.max_argument_bytes;
        if json_size_within(&arguments, max_argument_bytes).is_none() {
            return ToolResult::error(format!(
                "the arguments of `{}` are larger than {max_argument_bytes} bytes; pass less (for \
                 example a path instead of the content)",
                tool.name
            ));
        }
        if let Err(problems) = tool.validate(&arguments) {
            return ToolResult::error(invalid_arguments_text(&tool, &problems));
        }
        let argument_names = declared_argument_names(&tool.input_schema, &arguments);
        let baseline = self.shared.policy.apply(&tool.input_schema, arguments);
        let audit_concerns = baseline.audit_concerns;
        let arguments = Arc::new(baseline.arguments);
        let call_number = NEXT_CALL_NUMBER.fetch_add(1, Ordering::Relaxed);
        let request = GuardRequest {
            call_number,
            server: self.server,
            domain: tool.domain.clone(),
            tool: tool.name.clone(),
            arguments: Arc::clone(&arguments),
            annotations: tool.annotations,
            client: self.client.clone(),
            concerns: baseline.concerns,
        };
        let judging_started = Instant::now();
        let timeouts = CheckpointTimeouts {
            guard: self.shared.config.guard_timeout,
            confirmation: self.shared.config.confirmation_timeout,
        };
        // A guard or host that panics is a guard that failed: a denial, never a lost reply.
        let decision = AssertUnwindSafe(decide(
            self.shared.guard.as_ref(),
            self.shared.host.as_ref(),
            &request,
            &audit_concerns,
            timeouts,
        ))
        .catch_unwind()
        .await
        .unwrap_or_else(|_panic| {
            Decision::refuse(
                format!(
                    "denied: the Security Guard failed while judging `{}` (it crashed); nothing ran",
                    request.tool
                ),
                "denied: the Security Guard crashed",
            )
        });
        let verdict = if decision.run {
            AuditVerdict::Allowed
        } else {
            AuditVerdict::Denied
        };
        self.shared.audit.record(AuditRecord {
            at: SystemTime::now(),
            client: self.client.clone(),
            server: self.server,
            domain: tool.domain.clone(),
            tool: tool.name.clone(),
            arguments: argument_names,
            verdict,
            reason: decision.audit_reason,
            duration: judging_started.elapsed(),
        });
        if !decision.run {
            return ToolResult::error(decision.reason);
        }
        drop(request);
        // The guard's copy is gone, so this is the very value it judged, moved, not re-parsed.
        let arguments = Arc::try_unwrap(arguments).unwrap_or_else(|shared| (*shared).clone());
        let max_result_bytes = self.shared.config.max_result_bytes;
        match self
            .invoke(&tool, arguments, call_number, decision.explicitly_allowed)
            .await
        {
            Ok(value) if json_size_within(&value, max_result_bytes).is_none() => {
                ToolResult::error(format!(
                    "`{}` produced a result larger than {max_result_bytes} bytes, which was \
                     dropped; narrow the request",
                    tool.name
                ))
            }
            Ok(value) => ToolResult::success(toon::encode(&value, &toon::EncodeOptions::default())),
            Err(message) => ToolResult::error(message),
        }
    }

    /// Runs the handler under the tool's deadline, forwarding progress while it runs.
    async fn invoke(
        &self,
        tool: &RegisteredTool,
        arguments: Value,
        call_number: u64,
        explicitly_allowed: bool,
    ) -> Result<Value, String> {
        let deadline = tool.deadline.unwrap_or(self.shared.config.default_deadline);
        let (progress, mut forwarder) = ProgressForwarder::new(
            self.progress_token.clone(),
            self.shared.config.progress_heartbeat,
            &self.outgoing,
        );
        let call = ToolCall {
            call_number,
            arguments,
            cancellation: self.cancellation.child_token(),
            progress,
            explicitly_allowed,
        };
        let handler = AssertUnwindSafe(tool.handler.call(call)).catch_unwind();
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(deadline, handler) => outcome,
            never = forwarder.forward(&tool.name) => match never {},
        };
        match outcome {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(format!("`{}` failed: {}", tool.name, error.message())),
            Ok(Err(_panic)) => Err(format!(
                "`{}` failed: its handler crashed (an internal error in the IDE); the call did not \
                 complete",
                tool.name
            )),
            Err(_elapsed) => Err(format!(
                "`{}` did not finish within its deadline of {} ms and was cancelled; narrow the \
                 request or try again",
                tool.name,
                deadline.as_millis()
            )),
        }
    }
}

/// The names of the arguments a call gave that its tool's schema declares: what the audit log
/// may say of them (an undeclared name is the client's text, and is left out like a value).
fn declared_argument_names(schema: &Value, arguments: &Value) -> Vec<String> {
    let declared = schema.get("properties").and_then(Value::as_object);
    match (declared, arguments.as_object()) {
        (Some(declared), Some(given)) => given
            .keys()
            .filter(|name| declared.contains_key(name.as_str()))
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

fn invalid_arguments_text(tool: &RegisteredTool, problems: &[String]) -> String {
    let mut text = format!(
        "invalid arguments for `{}`:\n{}\n# parameters of `{}`:\n",
        tool.name,
        problems
            .iter()
            .map(|problem| format!("- {problem}"))
            .collect::<Vec<_>>()
            .join("\n"),
        tool.name
    );
    toon::encode_into(
        &json!({ "parameters": parameters(&tool.input_schema) }),
        &toon::EncodeOptions::default(),
        &mut text,
    );
    text
}
