//! One `run(tool, args)` call from admission to reply: lookup, schema validation, the
//! Security Guard, the handler under its deadline, progress, and the output budget.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use futures::FutureExt;
use ide_mcp_protocol::jsonrpc::{Id, Notification, Response};
use ide_mcp_protocol::toon;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::audit::{AuditRecord, AuditVerdict};
use crate::guard::{decide, CheckpointTimeouts, ClientIdentity, Decision, GuardRequest};
use crate::handler::{ProgressReport, ProgressSink, ToolCall};
use crate::in_flight::InFlightCalls;
use crate::limits::json_size_within;
use crate::mcp::tool_result;
use crate::meta_tools::{parameters, within_budget};
use crate::registry::{RegisteredTool, Registry, ToolLookup};
use crate::server_name::ServerName;
use crate::shared::Shared;

/// Everything a call task needs; built by the connection when it admits the call.
pub(crate) struct RunCall {
    pub(crate) shared: Arc<Shared>,
    pub(crate) server: ServerName,
    pub(crate) registry: Arc<Registry>,
    pub(crate) id: Id,
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
        if let Some((text, is_error)) = outcome {
            let text = within_budget(text, self.shared.config.output_budget_bytes);
            let reply =
                Response::success(self.id.clone(), tool_result(self.server, text, is_error));
            self.in_flight.finish(&self.id, reply.into_value());
        }
        // The call is over either way; a handler still running learns it here.
        self.cancellation.cancel();
    }

    /// The result text and whether it is an error.
    async fn execute(&self, mut run_arguments: Map<String, Value>) -> (String, bool) {
        // `args` moves out (never copied); `tool` is read from what remains.
        let args = run_arguments.remove("args");
        let Some(tool_name) = run_arguments.get("tool").and_then(Value::as_str) else {
            return (
                "run needs `tool`, a tool name from tools(domain), and `args`, an object"
                    .to_owned(),
                true,
            );
        };
        let arguments = match args {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(args @ Value::Object(_)) => args,
            Some(_) => return ("`args` must be an object".to_owned(), true),
        };
        let tool = match self.registry.tool(self.server, tool_name) {
            ToolLookup::Found(tool) => tool,
            ToolLookup::Withheld(collision) => {
                return (
                    format!(
                        "tool `{tool_name}` is withheld: its name collides with {} on the `{}` server, \
                         so none of them can be called until the IDE resolves it",
                        collision.tools.join(", "),
                        self.server
                    ),
                    true,
                )
            }
            ToolLookup::Unknown => {
                return (
                    format!(
                        "unknown tool `{tool_name}` on the `{}` server; call domains(), then \
                         tools(domain), to see the tools",
                        self.server
                    ),
                    true,
                )
            }
        };
        let max_argument_bytes = self.shared.config.max_argument_bytes;
        if json_size_within(&arguments, max_argument_bytes).is_none() {
            return (
                format!(
                    "the arguments of `{}` are larger than {max_argument_bytes} bytes; pass less \
                     (for example a path instead of the content)",
                    tool.name
                ),
                true,
            );
        }
        if let Err(problems) = tool.validate(&arguments) {
            return (invalid_arguments_text(&tool, &problems), true);
        }
        let baseline = self.shared.policy.apply(&tool.input_schema, arguments);
        let arguments = Arc::new(baseline.arguments);
        let request = GuardRequest {
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
            timeouts,
        ))
        .catch_unwind()
        .await
        .unwrap_or_else(|_panic| {
            Decision::Refuse(format!(
                "denied: the Security Guard failed while judging `{}` (it crashed); nothing ran",
                request.tool
            ))
        });
        let (verdict, reason, refusal) = match decision {
            Decision::Run(reason) => (AuditVerdict::Allowed, reason, None),
            Decision::Refuse(reason) => (AuditVerdict::Denied, reason.clone(), Some(reason)),
        };
        self.shared.audit.record(AuditRecord {
            at: SystemTime::now(),
            client: self.client.clone(),
            server: self.server,
            domain: tool.domain.clone(),
            tool: tool.name.clone(),
            verdict,
            reason,
            duration: judging_started.elapsed(),
        });
        if let Some(reason) = refusal {
            return (reason, true);
        }
        drop(request);
        // The guard's copy is gone, so this is the very value it judged, moved, not re-parsed.
        let arguments = Arc::try_unwrap(arguments).unwrap_or_else(|shared| (*shared).clone());
        let max_result_bytes = self.shared.config.max_result_bytes;
        match self.invoke(&tool, arguments).await {
            Ok(value) if json_size_within(&value, max_result_bytes).is_none() => (
                format!(
                    "`{}` produced a result larger than {max_result_bytes} bytes, which was \
                     dropped; narrow the request",
                    tool.name
                ),
                true,
            ),
            Ok(value) => (toon::encode(&value, &toon::EncodeOptions::default()), false),
            Err(message) => (message, true),
        }
    }

    /// Runs the handler under the tool's deadline, forwarding progress while it runs.
    async fn invoke(&self, tool: &RegisteredTool, arguments: Value) -> Result<Value, String> {
        let deadline = tool.deadline.unwrap_or(self.shared.config.default_deadline);
        // Without a progress token nothing is forwarded, so neither the progress channel nor
        // the heartbeat timer is made (each is an allocation per call).
        let (progress, mut progress_receiver, mut heartbeat) = match &self.progress_token {
            Some(_) => {
                let (sender, receiver) = mpsc::channel::<ProgressReport>(16);
                let mut heartbeat = tokio::time::interval(self.shared.config.progress_heartbeat);
                heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                heartbeat.reset();
                (ProgressSink::new(sender), Some(receiver), Some(heartbeat))
            }
            None => (ProgressSink::disabled(), None, None),
        };
        let call = ToolCall {
            arguments,
            cancellation: self.cancellation.child_token(),
            progress,
        };
        let handler = AssertUnwindSafe(tool.handler.call(call)).catch_unwind();
        let handler = tokio::time::timeout(deadline, handler);
        tokio::pin!(handler);

        let started = Instant::now();
        let mut last_progress: Option<f64> = None;
        let mut handler_reported = false;
        let outcome = loop {
            tokio::select! {
                outcome = &mut handler => break outcome,
                Some(report) = next_report(&mut progress_receiver) => {
                    handler_reported = true;
                    if last_progress.is_none_or(|last| report.progress > last) {
                        last_progress = Some(report.progress);
                        self.send_progress(report);
                    }
                }
                _ = next_beat(&mut heartbeat), if !handler_reported => {
                    // Heartbeats count up by one, so progress always grows, until the handler
                    // reports on its own scale.
                    let beat = last_progress.map_or(1.0, |last| last.floor() + 1.0);
                    last_progress = Some(beat);
                    self.send_progress(ProgressReport {
                        progress: beat,
                        total: None,
                        message: Some(format!(
                            "`{}` still running ({} ms)",
                            tool.name,
                            started.elapsed().as_millis()
                        )),
                    });
                }
            }
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

    fn send_progress(&self, report: ProgressReport) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut params = Map::new();
        params.insert("progressToken".to_owned(), token.clone());
        params.insert("progress".to_owned(), json!(report.progress));
        if let Some(total) = report.total {
            params.insert("total".to_owned(), json!(total));
        }
        if let Some(message) = report.message {
            params.insert("message".to_owned(), Value::from(message));
        }
        let notification = Notification {
            method: "notifications/progress".to_owned(),
            params: Some(Value::Object(params)),
        };
        // Progress is advisory and superseded by the next report: drop it when the client
        // is not reading rather than hold the call up.
        let _ = self.outgoing.try_send(notification.into_value());
    }
}

/// The next progress report, or nothing (the branch is disabled) without a channel.
async fn next_report(
    receiver: &mut Option<mpsc::Receiver<ProgressReport>>,
) -> Option<ProgressReport> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => None,
    }
}

/// The next heartbeat; never, without a heartbeat timer.
async fn next_beat(heartbeat: &mut Option<tokio::time::Interval>) {
    match heartbeat {
        Some(heartbeat) => {
            heartbeat.tick().await;
        }
        None => std::future::pending().await,
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
