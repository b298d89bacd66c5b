//! The server's traits implemented by Java objects: a tool handler, the Security Guard and
//! the host. Each method runs on a tokio worker, so it never touches JNI: it queues a job
//! for a callback thread and awaits the answer on a oneshot.
//!
//! A call whose guard and handler are both Java is one job (`judge_and_start`): the callback
//! thread judges it, asks the call's gate, and runs the handler at once when the gate opens,
//! so the call crosses into the JVM once instead of twice.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ide_mcp_server::page_delivery::SplitModeNotice;
use ide_mcp_server::AnswerFuture;
use ide_mcp_server::HandlerFuture;
use ide_mcp_server::ToolCollision;
use ide_mcp_server::{ClientProcess, Host, SecurityGuard, ToolCall, ToolError, ToolHandler};
use ide_mcp_server::{GuardRequest, Verdict, VerdictFuture};
use ide_mcp_server::{JointCall, JointFuture, JointOutcome};
use jni::Env;
use tokio::sync::oneshot;

use crate::callbacks::{self, GuardCall, UnexpectedClientCall};
use crate::java_ref::JavaRef;
use crate::pending::{self, PendingCall};
use crate::threads;

const BUSY: &str = "the IDE is busy: too many tool calls are waiting for it; try again in a moment";

/// A tool whose implementation is a Java `ToolHandler`.
pub struct JavaToolHandler {
    handler: Arc<JavaRef>,
}

impl JavaToolHandler {
    /// Wraps a pinned Java `ToolHandler`.
    pub fn new(handler: JavaRef) -> Self {
        JavaToolHandler {
            handler: Arc::new(handler),
        }
    }
}

/// Ends a call that is dropped unanswered (cancelled by the client, past its deadline, the
/// connection closed, the servers stopping): the entry goes, and the Java side is told.
struct CallEnd {
    id: u64,
}

impl Drop for CallEnd {
    fn drop(&mut self) {
        if let Some(call) = pending::take_call(self.id) {
            call.cancellation.cancel();
            if let Some(context) = call.context {
                threads::notify_cancelled(context);
            }
        }
    }
}

fn ready<T: Send + 'static>(value: T) -> Pin<Box<dyn Future<Output = T> + Send + 'static>> {
    Box::pin(async move { value })
}

impl ToolHandler for JavaToolHandler {
    fn joint_entry(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        // A Java guard starts this handler in the same job as its judgement.
        Some(self)
    }

    fn call(&self, call: ToolCall) -> HandlerFuture {
        let (answer, answered) = oneshot::channel();
        let cancellation = call.cancellation.clone();
        let arguments_json = call.arguments.to_string();
        let call_number = call.call_number;
        let explicitly_allowed = call.explicitly_allowed;
        let id = pending::register_call(PendingCall {
            answer,
            cancellation: call.cancellation,
            progress: call.progress,
            context: None,
        });
        let end = CallEnd { id };
        let handler = Arc::clone(&self.handler);
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            run_java_handler(
                env,
                &handler,
                id,
                call_number,
                &arguments_json,
                explicitly_allowed,
            );
        });
        if threads::submit(job).is_err() {
            drop(end);
            return ready(Err(ToolError::new(BUSY)));
        }
        Box::pin(async move {
            let _end = end;
            tokio::select! {
                answer = answered => answer.unwrap_or_else(|_| {
                    Err(ToolError::new("the Java handler ended without answering"))
                }),
                _ = cancellation.cancelled() => Err(ToolError::new("cancelled")),
            }
        })
    }
}

/// On a callback thread: creates the call's `ToolCallContext` and runs the handler. The
/// handler answers through its context, now or later; an exception it throws answers the
/// call as an error naming the exception.
fn run_java_handler(
    env: &mut Env<'_>,
    handler: &JavaRef,
    id: u64,
    call_number: u64,
    arguments_json: &str,
    explicitly_allowed: bool,
) {
    let outcome = (|| {
        let java = callbacks::get()?;
        let context =
            java.new_call_context(env, id, call_number, arguments_json, explicitly_allowed)?;
        let pinned = JavaRef::new(env, &context, "the call context")?;
        if pending::attach_context(id, pinned).is_err() {
            // Cancelled while it waited in the queue: the handler never starts.
            return Ok(());
        }
        java.invoke_handler(env, handler.as_obj(), &context)
    })();
    if let Err(error) = outcome {
        let message = match error {
            crate::error::BridgeError::Java(thrown) => format!("the handler threw {thrown}"),
            other => format!("the handler could not be run: {other}"),
        };
        pending::resolve_call(id, Err(ToolError::new(message)));
    }
}

fn guard_call(request: &GuardRequest) -> GuardCall {
    GuardCall {
        server: request.server.as_str().to_owned(),
        domain: request.domain.clone(),
        tool: request.tool.clone(),
        arguments_json: request.arguments.to_string(),
        read_only: request.annotations.read_only,
        destructive: request.annotations.destructive,
        pid: request.client.pid.unwrap_or(-1),
        client_name: request.client.name.clone(),
        connection_id: request.client.connection_id,
        call_number: request.call_number,
        concerns: request.concerns.clone(),
    }
}

/// A Security Guard implemented in Java; judged synchronously on a callback thread, within
/// the server's guard timeout.
pub struct JavaSecurityGuard {
    guard: Arc<JavaRef>,
}

impl JavaSecurityGuard {
    /// Wraps a pinned Java `SecurityGuard`.
    pub fn new(guard: JavaRef) -> Self {
        JavaSecurityGuard {
            guard: Arc::new(guard),
        }
    }
}

/// Decodes the one-letter verdict encoding of `NativeCallbacks.judge`.
pub fn decode_verdict(encoded: &str) -> Result<Verdict, String> {
    let mut chars = encoded.chars();
    let kind = chars.next();
    let text = chars.as_str().to_owned();
    match kind {
        Some('A') => Ok(Verdict::Allow),
        Some('E') => Ok(Verdict::AllowExplicitly),
        Some('D') => Ok(Verdict::Deny { reason: text }),
        Some('Q') => Ok(Verdict::Ask { prompt: text }),
        _ => Err(format!(
            "the Security Guard returned an unknown verdict `{encoded}`"
        )),
    }
}

/// On a callback thread: the Java guard's verdict on `call`.
fn judge_in_java(env: &mut Env<'_>, guard: &JavaRef, call: &GuardCall) -> Result<Verdict, String> {
    callbacks::get()
        .and_then(|java| java.judge(env, guard.as_obj(), call))
        .map_err(|error| match error {
            crate::error::BridgeError::Java(thrown) => format!("it threw {thrown}"),
            other => other.to_string(),
        })
        .and_then(|encoded| decode_verdict(&encoded))
}

/// What the one job of a joint call tells the call's future when the gate stayed shut: the
/// verdict (or why there is none). When the gate opens it tells nothing; the handler's
/// answer comes as any handler's does, and is the only wake-up of the call's task.
struct Refused(Result<Verdict, String>);

impl SecurityGuard for JavaSecurityGuard {
    fn judge_and_start(&self, handler: &dyn ToolHandler, call: JointCall) -> Option<JointFuture> {
        let java_handler = handler
            .joint_entry()
            .and_then(|entry| entry.downcast_ref::<JavaToolHandler>())?;
        let JointCall {
            request,
            cancellation,
            progress,
            gate,
        } = call;
        // Serialised once: the guard judges this very text, and the handler gets it.
        let judged = guard_call(&request);
        let (answer, answered) = oneshot::channel();
        let id = pending::register_call(PendingCall {
            answer,
            cancellation: cancellation.clone(),
            progress,
            context: None,
        });
        let end = CallEnd { id };
        let (refusal, refused) = oneshot::channel();
        // Set by the job before it starts the handler: when the job ends without a refusal,
        // this tells a handler that was started (its answer is coming) from a job that never
        // ran.
        let started = Arc::new(AtomicBool::new(false));
        let guard = Arc::clone(&self.guard);
        let handler = Arc::clone(&java_handler.handler);
        let job_started = Arc::clone(&started);
        let job: threads::Job =
            Box::new(
                move |env: &mut Env<'_>| match judge_in_java(env, &guard, &judged) {
                    Ok(verdict) if gate.admit(&verdict) => {
                        job_started.store(true, Ordering::Release);
                        run_java_handler(
                            env,
                            &handler,
                            id,
                            judged.call_number,
                            &judged.arguments_json,
                            verdict == Verdict::AllowExplicitly,
                        );
                    }
                    verdict => {
                        let _ = refusal.send(Refused(verdict));
                    }
                },
            );
        if threads::submit(job).is_err() {
            drop(end);
            return Some(ready(JointOutcome::Judged(Err(BUSY.to_owned()))));
        }
        Some(Box::pin(async move {
            let _end = end;
            let mut answered = answered;
            let mut refused = refused;
            let mut job_over = false;
            loop {
                tokio::select! {
                    biased;
                    answer = &mut answered => {
                        return JointOutcome::Handled(answer.unwrap_or_else(|_| {
                            Err(ToolError::new("the Java handler ended without answering"))
                        }));
                    }
                    refusal = &mut refused, if !job_over => match refusal {
                        Ok(Refused(verdict)) => return JointOutcome::Judged(verdict),
                        // The job is over without a refusal: it started the handler, whose
                        // answer is on its way, or it never ran.
                        Err(_) if started.load(Ordering::Acquire) => job_over = true,
                        Err(_) => {
                            return JointOutcome::Judged(Err(
                                "the Security Guard ended without answering".to_owned(),
                            ));
                        }
                    },
                    _ = cancellation.cancelled() => {
                        return if started.load(Ordering::Acquire) {
                            JointOutcome::Handled(Err(ToolError::new("cancelled")))
                        } else {
                            JointOutcome::Judged(Err("cancelled".to_owned()))
                        };
                    }
                }
            }
        }))
    }

    fn judge(&self, request: &GuardRequest) -> VerdictFuture {
        let (answer, answered) = oneshot::channel();
        let call = guard_call(request);
        let guard = Arc::clone(&self.guard);
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            let _ = answer.send(judge_in_java(env, &guard, &call));
        });
        if threads::submit(job).is_err() {
            return ready(Err(BUSY.to_owned()));
        }
        Box::pin(async move {
            answered
                .await
                .unwrap_or_else(|_| Err("the Security Guard ended without answering".to_owned()))
        })
    }
}

/// The host callbacks implemented in Java.
pub struct JavaHost {
    host: Arc<JavaRef>,
    /// Whether the host has a UI to ask in; without one an ask is a denial, decided here
    /// without a trip to Java.
    can_confirm: bool,
}

impl JavaHost {
    /// Wraps a pinned Java `Host`.
    pub fn new(host: JavaRef, can_confirm: bool) -> Self {
        JavaHost {
            host: Arc::new(host),
            can_confirm,
        }
    }
}

/// Forgets the confirmation when nobody awaits it any more (timed out, call cancelled).
struct ConfirmationEnd {
    id: u64,
}

impl Drop for ConfirmationEnd {
    fn drop(&mut self) {
        pending::forget_confirmation(self.id);
    }
}

/// Forgets the admission prompt when nobody awaits it any more (timed out, servers stopped).
struct AdmissionEnd {
    id: u64,
}

impl Drop for AdmissionEnd {
    fn drop(&mut self) {
        pending::forget_admission(self.id);
    }
}

impl Host for JavaHost {
    fn unexpected_client(&self, client: &ClientProcess) -> AnswerFuture {
        tracing::warn!(
            pid = client.pid,
            executable = ?client.executable,
            "an unexpected client connected to the IDE MCP servers; asking the host"
        );
        let (answer, answered) = oneshot::channel();
        let id = pending::register_admission(answer);
        let end = AdmissionEnd { id };
        let call = UnexpectedClientCall {
            pid: client.pid,
            executable: client
                .executable
                .as_ref()
                .map(|path| path.to_string_lossy().into_owned()),
            command_line: client.command_line.clone(),
        };
        let host = Arc::clone(&self.host);
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            let asked = callbacks::get()
                .and_then(|java| java.unexpected_client(env, host.as_obj(), &call, id));
            if let Err(error) = asked {
                tracing::warn!(%error, "the host's unexpectedClient failed; the client is rejected");
                pending::resolve_admission(id, false);
            }
        });
        if threads::submit(job).is_err() {
            tracing::warn!("the host could not be asked about a client: the IDE is busy; rejected");
            return Box::pin(async { false });
        }
        Box::pin(async move {
            let _end = end;
            answered.await.unwrap_or(false)
        })
    }

    fn split_mode_notice(&self, notice: &SplitModeNotice) {
        tracing::warn!("{}", notice.message);
        let host = Arc::clone(&self.host);
        let message = notice.message.clone();
        let configuration = notice.configuration.to_string();
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            let told = callbacks::get().and_then(|java| {
                java.split_mode_notice(env, host.as_obj(), &message, &configuration)
            });
            if let Err(error) = told {
                tracing::warn!(%error, "the host's splitModeNotice failed");
            }
        });
        if threads::submit(job).is_err() {
            tracing::warn!("the host could not be given the split-mode notice: the IDE is busy");
        }
    }

    fn confirm(&self, request: &GuardRequest, prompt: &str) -> Option<AnswerFuture> {
        if !self.can_confirm {
            return None;
        }
        let (answer, answered) = oneshot::channel();
        let id = pending::register_confirmation(answer);
        let end = ConfirmationEnd { id };
        let call = guard_call(request);
        let prompt = prompt.to_owned();
        let host = Arc::clone(&self.host);
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            let asked = callbacks::get()
                .and_then(|java| java.confirm(env, host.as_obj(), &call, &prompt, id));
            if let Err(error) = asked {
                tracing::warn!(%error, "the host's confirmation failed; the call is denied");
                pending::resolve_confirmation(id, false);
            }
        });
        if threads::submit(job).is_err() {
            return Some(Box::pin(async { false }));
        }
        Some(Box::pin(async move {
            let _end = end;
            answered.await.unwrap_or(false)
        }))
    }

    fn tools_withheld(&self, collisions: &[ToolCollision]) {
        for collision in collisions {
            tracing::warn!(
                server = %collision.server,
                name = %collision.normalized_name,
                tools = ?collision.tools,
                "tools withheld: their names normalise to the same name"
            );
        }
        let host = Arc::clone(&self.host);
        let collisions = collisions.to_vec();
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            let Ok(java) = callbacks::get() else {
                return;
            };
            for collision in &collisions {
                let told = java.tools_withheld(
                    env,
                    host.as_obj(),
                    collision.server.as_str(),
                    &collision.normalized_name,
                    &collision.tools,
                );
                if let Err(error) = told {
                    tracing::warn!(%error, "the host's toolsWithheld failed");
                }
            }
        });
        if threads::submit(job).is_err() {
            tracing::warn!("the host could not be told about withheld tools: the IDE is busy");
        }
    }
}
