//! One `run(tool, args)` call from admission to reply: lookup, schema validation, the
//! Security Guard, the handler under its deadline, progress, and the output budget.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use futures::FutureExt;
use ide_mcp_protocol::jsonrpc::Id;
use ide_mcp_protocol::toon;
use serde_json::{json, Value};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::audit::{AuditRecord, AuditVerdict};
use crate::call::checkpoint::{decide, decide_on, guard_timed_out, CheckpointTimeouts, Decision};
use crate::call::progress::ProgressForwarder;
use crate::guard::{ClientIdentity, GuardRequest, JointOutcome, Verdict};
use crate::handler::{ToolCall, ToolError};
use crate::joint::{JointCall, RunGate};
use crate::limits::json_within;
use crate::mcp::{Era, RunArguments, ToolArguments, ToolResult};
use crate::meta_tools::{parameters, within_budget};
use crate::outgoing::{Outgoing, ToolReply};
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
    pub(crate) arguments: ToolArguments,
    pub(crate) progress_token: Option<Value>,
    pub(crate) client: ClientIdentity,
    pub(crate) cancellation: CancellationToken,
    pub(crate) in_flight: Arc<InFlightCalls>,
    pub(crate) outgoing: mpsc::Sender<Outgoing>,
    /// Held for the whole call: one of the server's handler slots.
    pub(crate) _handler_slot: OwnedSemaphorePermit,
    /// Whether more messages of the connection were waiting behind this call's request.
    pub(crate) others_waiting: bool,
}

impl RunCall {
    /// Runs the call to its end. A cancellation (by the client, the connection closing or the
    /// servers stopping) ends it at once, with no reply.
    pub(crate) async fn run(mut self) {
        let arguments = std::mem::take(&mut self.arguments);
        // The call is polled before the token is waited on: most calls finish in their first
        // poll, and a wait never polled registers nothing with the token. A call cancelled
        // before it starts never runs. One that finishes in the poll that would have seen its
        // cancellation is answered only if the in-flight table still holds it: never after
        // the client cancelled it or the connection closed (both take it out of the table).
        let outcome = if self.cancellation.is_cancelled() {
            None
        } else {
            tokio::select! {
                biased;
                outcome = self.execute(arguments) => Some(outcome),
                _ = self.cancellation.cancelled() => None,
            }
        };
        if let Some(mut result) = outcome {
            result.text = within_budget(result.text, self.shared.config.output_budget_bytes);
            let reply = ToolReply::new(self.id.clone(), self.server, self.era, result);
            self.in_flight.finish(&self.id, Outgoing::ToolReply(reply));
        }
        // The call is over either way; a handler still running learns it here.
        self.cancellation.cancel();
    }

    /// The result of the call: the handler's, or why it did not run.
    async fn execute(&self, run_arguments: ToolArguments) -> ToolResult {
        let RunArguments {
            tool: tool_name,
            args: arguments,
        } = match RunArguments::read(run_arguments) {
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
        if !json_within(&arguments, max_argument_bytes) {
            return ToolResult::error(format!(
                "the arguments of `{}` are larger than {max_argument_bytes} bytes; pass less (for \
                 example a path instead of the content)",
                tool.name
            ));
        }
        if let Err(problems) = tool.validate(&arguments) {
            return ToolResult::error(invalid_arguments_text(&tool, &problems));
        }
        let argument_names = tool.declared_names_in(&arguments);
        let baseline = self.shared.policy.apply(&tool.path_arguments, arguments);
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
        let audit = AuditDraft {
            client: self.client.clone(),
            server: self.server,
            domain: tool.domain.clone(),
            tool: tool.name.clone(),
            arguments: argument_names,
            started: Instant::now(),
        };
        let timeouts = CheckpointTimeouts {
            guard: self.shared.config.guard_timeout,
            confirmation: self.shared.config.confirmation_timeout,
        };
        let guard = self.shared.guard.as_ref();
        let host = self.shared.host.as_ref();
        let handled = 'handled: {
            let entered = self.enter_once(&tool, &request, &audit, timeouts).await;
            // A guard or host that panics is a guard that failed: a denial, never a lost reply.
            let decision = match entered {
                // Judged and handled in one entry; the gate wrote the audit record.
                Entered::Handled(result) => break 'handled result,
                Entered::Refused(decision) => decision,
                Entered::Judged(verdict) => {
                    let deciding = decide_on(verdict, host, &request, &audit_concerns, timeouts);
                    unless_it_panics(deciding, &request.tool).await
                }
                Entered::Unsupported => {
                    let deciding = decide(guard, host, &request, &audit_concerns, timeouts);
                    unless_it_panics(deciding, &request.tool).await
                }
            };
            self.shared.audit.record(audit.into_record(&decision));
            if !decision.run {
                return ToolResult::error(decision.reason.into_owned());
            }
            drop(request);
            // The guard's copy is gone, so this is the very value it judged, moved, not
            // re-parsed.
            let arguments = Arc::try_unwrap(arguments).unwrap_or_else(|shared| (*shared).clone());
            self.invoke(&tool, arguments, call_number, decision.explicitly_allowed)
                .await
        };
        let max_result_bytes = self.shared.config.max_result_bytes;
        match handled {
            Ok(value) if !json_within(&value, max_result_bytes) => ToolResult::error(format!(
                "`{}` produced a result larger than {max_result_bytes} bytes, which was \
                     dropped; narrow the request",
                tool.name
            )),
            Ok(value) => ToolResult::success(toon::encode(&value, &toon::EncodeOptions::default())),
            Err(message) => ToolResult::error(message),
        }
    }

    /// Offers the guard to judge the call and start its handler in one entry (a Java guard
    /// and a Java handler: one crossing into the JVM instead of two). The verdict must reach
    /// the call's gate within the guard timeout; from the moment the gate opens (the audit
    /// record written), the handler runs under its deadline as in [`RunCall::invoke`].
    async fn enter_once(
        &self,
        tool: &RegisteredTool,
        request: &GuardRequest,
        audit: &AuditDraft,
        timeouts: CheckpointTimeouts,
    ) -> Entered {
        // Only a handler that offers a joint entry can be started by a guard; for the others
        // (every Rust handler) nothing is built.
        if tool.handler.joint_entry().is_none() {
            return Entered::Unsupported;
        }
        let (gate, closer) = {
            let shared = Arc::clone(&self.shared);
            let audit = audit.clone();
            RunGate::new(request, self.cancellation.clone(), move |decision| {
                shared.audit.record(audit.into_record(decision));
            })
        };
        let (progress, mut forwarder) = ProgressForwarder::new(
            self.progress_token.clone(),
            self.shared.config.progress_heartbeat,
            &self.outgoing,
        );
        let call = JointCall {
            request: request.clone(),
            cancellation: self.cancellation.child_token(),
            progress,
            gate,
            others_waiting: self.others_waiting,
        };
        let Some(joint) = self
            .shared
            .guard
            .judge_and_start(tool.handler.as_ref(), call)
        else {
            return Entered::Unsupported;
        };
        let mut joint = AssertUnwindSafe(joint).catch_unwind();
        // The gate opens on the guard's thread without waking this task (a wake-up would
        // cost the call a thread hand-off): the task looks at the gate when one of its clocks
        // runs out, and only a guard slower than the handler's deadline makes it wait to be
        // told. The deadline counts from the opening, the guard timeout from now.
        let deadline = tool.deadline.unwrap_or(self.shared.config.default_deadline);
        let guard_until = Instant::now() + timeouts.guard;
        let mut look_at = guard_until.min(Instant::now() + deadline);
        let mut opened = None;
        let mut waiting_for_the_opening = false;
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut joint => break Ok(outcome),
                never = forwarder.forward(&tool.name), if opened.is_some() => match never {},
                () = closer.opened(), if waiting_for_the_opening => {}
                () = tokio::time::sleep_until(look_at.into()) => {}
            }
            let now = Instant::now();
            let at = match opened.or_else(|| closer.opened_at()) {
                Some(at) => at,
                None if now < guard_until => {
                    waiting_for_the_opening = true;
                    look_at = guard_until;
                    continue;
                }
                // Shut now, the handler never starts; unless it started at this very moment.
                None => match closer.shut() {
                    Some(at) => at,
                    None => return Entered::Refused(guard_timed_out(timeouts)),
                },
            };
            if now >= at + deadline {
                break Err(());
            }
            opened = Some(at);
            waiting_for_the_opening = false;
            look_at = at + deadline;
        };
        let outcome = match outcome {
            Ok(Ok(JointOutcome::Judged(verdict))) if closer.opened_at().is_none() => {
                return Entered::Judged(verdict);
            }
            // Before the gate opened, the guard crashed; past it, the handler did.
            Ok(Err(_panic)) if closer.shut().is_none() => {
                return Entered::Refused(guard_crashed(&request.tool));
            }
            Ok(finished) => Ok(finished
                .map_err(|_panic| ())
                .and_then(|outcome| match outcome {
                    JointOutcome::Handled(result) => Ok(result),
                    // A guard that let the handler start and then reported a verdict broke its
                    // contract; the call fails like a crashed handler.
                    JointOutcome::Judged(_) => Err(()),
                })),
            Err(()) => Err(()),
        };
        Entered::Handled(handler_outcome(tool, deadline, outcome.ok()))
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
        handler_outcome(
            tool,
            deadline,
            outcome.ok().map(|ran| ran.map_err(|_panic| ())),
        )
    }
}

/// What became of a call past the checkpoint.
enum Entered {
    /// The guard cannot start the handler in the same entry: judge, then call.
    Unsupported,
    /// The verdict came back with the handler not started: the checkpoint goes on with it.
    Judged(Result<Verdict, String>),
    /// Refused before the handler started (the guard timed out or crashed).
    Refused(Decision),
    /// The handler ran: its result, or what went wrong.
    Handled(Result<Value, String>),
}

/// The checkpoint's decision, or a denial when the guard or the host panicked in it.
async fn unless_it_panics(deciding: impl Future<Output = Decision>, tool: &str) -> Decision {
    AssertUnwindSafe(deciding)
        .catch_unwind()
        .await
        .unwrap_or_else(|_panic| guard_crashed(tool))
}

/// Everything of a call's audit record but the decision, so that whoever decides (the call,
/// or a gate on another thread) writes the same record.
#[derive(Clone)]
struct AuditDraft {
    client: ClientIdentity,
    server: ServerName,
    domain: Arc<str>,
    tool: Arc<str>,
    arguments: Vec<Arc<str>>,
    started: Instant,
}

impl AuditDraft {
    /// The record of `decision`.
    fn into_record(self, decision: &Decision) -> AuditRecord {
        AuditRecord {
            at: SystemTime::now(),
            client: self.client,
            server: self.server,
            domain: self.domain,
            tool: self.tool,
            arguments: self.arguments,
            verdict: if decision.run {
                AuditVerdict::Allowed
            } else {
                AuditVerdict::Denied
            },
            reason: decision.audit_reason.clone(),
            duration: self.started.elapsed(),
        }
    }
}

fn guard_crashed(tool: &str) -> Decision {
    Decision::refuse(
        format!(
            "denied: the Security Guard failed while judging `{tool}` (it crashed); nothing ran"
        ),
        "denied: the Security Guard crashed",
    )
}

/// A handler's result in the words the model gets: the value, or what went wrong (`Err(())`
/// is a crash; `None` is the deadline, `deadline` long, passed).
fn handler_outcome(
    tool: &RegisteredTool,
    deadline: Duration,
    outcome: Option<Result<Result<Value, ToolError>, ()>>,
) -> Result<Value, String> {
    match outcome {
        Some(Ok(Ok(value))) => Ok(value),
        Some(Ok(Err(error))) => Err(format!("`{}` failed: {}", tool.name, error.message())),
        Some(Err(())) => Err(format!(
            "`{}` failed: its handler crashed (an internal error in the IDE); the call did not \
             complete",
            tool.name
        )),
        None => Err(format!(
            "`{}` did not finish within its deadline of {} ms and was cancelled; narrow the \
             request or try again",
            tool.name,
            deadline.as_millis()
        )),
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
