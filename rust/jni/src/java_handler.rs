//! The server's traits implemented by Java objects: a tool handler, the Security Guard and
//! the host. Each method runs on a tokio worker, so it never touches JNI: it queues a job
//! for a callback thread and awaits the answer on a oneshot.
//!
//! A call whose guard and handler are both Java is one job (`judge_and_start`): the callback
//! thread judges it, asks the call's gate, and runs the handler at once when the gate opens,
//! so the call crosses into the JVM once instead of twice.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ide_mcp_server::page_delivery::SplitModeNotice;
use ide_mcp_server::AnswerFuture;
use ide_mcp_server::HandlerFuture;
use ide_mcp_server::ToolCollision;
use ide_mcp_server::{ClientProcess, Host, SecurityGuard, ToolCall, ToolError, ToolHandler};
use ide_mcp_server::{GuardRequest, Verdict, VerdictFuture};
use ide_mcp_server::{JointCall, JointFuture, JointOutcome, RunGate};
use jni::objects::{JObject, JString};
use jni::Env;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::sync::oneshot::error::TryRecvError;

use crate::callbacks::{self, GuardCall, UnexpectedClientCall};
use crate::error::BridgeError;
use crate::java_names::{JavaNames, ToolNames};
use crate::java_ref::JavaRef;
use crate::pending::{self, PendingCall};
use crate::threads;

const BUSY: &str = "the IDE is busy: too many tool calls are waiting for it; try again in a moment";

/// A tool whose implementation is a Java `ToolHandler`.
pub struct JavaToolHandler {
    handler: Arc<JavaRef>,
    /// The Java strings of the tool's domain and name, for a Java guard's judgement.
    names: Arc<ToolNames>,
}

impl JavaToolHandler {
    /// Wraps a pinned Java `ToolHandler`.
    pub fn new(handler: JavaRef) -> Self {
        JavaToolHandler {
            handler: Arc::new(handler),
            names: Arc::new(ToolNames::default()),
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
        let job: threads::Job =
            Box::new(move |env: &mut Env<'_>| {
                match callbacks::arguments_string(env, &arguments_json) {
                    Ok(arguments) => run_java_handler(
                        env,
                        &handler,
                        id,
                        call_number,
                        &arguments,
                        explicitly_allowed,
                    ),
                    Err(error) => fail_call(id, error),
                }
            });
        if threads::submit(job).is_err() {
            drop(end);
            return ready(Err(ToolError::new(BUSY)));
        }
        Box::pin(async move {
            let _end = end;
            tokio::select! {
                answer = answered => answer.unwrap_or_else(|_| {
                    Err(ToolError::new(HANDLER_ENDED_UNANSWERED))
                }),
                _ = cancellation.cancelled() => Err(ToolError::new("cancelled")),
            }
        })
    }
}

/// On a callback thread: runs the handler with a new `ToolCallContext` holding `arguments`,
/// the call's arguments JSON. The handler answers through its context, now or later; an
/// exception it throws answers the call as an error naming the exception.
fn run_java_handler(
    env: &mut Env<'_>,
    handler: &JavaRef,
    id: u64,
    call_number: u64,
    arguments: &JString<'_>,
    explicitly_allowed: bool,
) {
    if pending::is_call_cancelled(id) {
        // Cancelled while it waited in the queue: the handler never starts.
        return;
    }
    let started = callbacks::get().and_then(|java| {
        java.start_call(
            env,
            handler.as_obj(),
            id,
            call_number,
            arguments,
            explicitly_allowed,
        )
    });
    match started {
        Ok(context) => keep_context(env, id, &context),
        Err(error) => fail_call(id, error),
    }
}

/// After a handler returned: `context` is its call's `ToolCallContext` when it returned
/// without answering (null when it answered). The call keeps it, so that a cancellation
/// reaches the handler; a call that ended while the handler ran has it told at once (the
/// context ignores that when the handler answered meanwhile). A handler that answers before it
/// returns, as most do, costs no global reference.
fn keep_context(env: &mut Env<'_>, id: u64, context: &JObject<'_>) {
    if context.is_null() {
        return;
    }
    match JavaRef::new(env, context, "the call context") {
        Ok(pinned) => {
            if let Err(pinned) = pending::attach_context(id, pinned) {
                threads::notify_cancelled(pinned);
            }
        }
        Err(error) => fail_call(id, error),
    }
}

/// Answers a call whose handler threw or could not be run.
fn fail_call(id: u64, error: BridgeError) {
    let message = match error {
        BridgeError::Java(thrown) => format!("the handler threw {thrown}"),
        other => format!("the handler could not be run: {other}"),
    };
    pending::resolve_call(id, Err(ToolError::new(message)));
}

fn guard_call(request: &GuardRequest) -> GuardCall {
    GuardCall {
        server: request.server,
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
    /// The Java strings of the names its calls are judged under.
    names: Arc<JavaNames>,
}

impl JavaSecurityGuard {
    /// Wraps a pinned Java `SecurityGuard`.
    pub fn new(guard: JavaRef) -> Self {
        JavaSecurityGuard {
            guard: Arc::new(guard),
            names: Arc::new(JavaNames::new()),
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

/// On a callback thread: the Java guard's verdict on `call`, whose arguments JSON is
/// `arguments`; the tool's names are those of its handler when it has them (`tool`), else
/// from `names`.
fn judge_in_java(
    env: &mut Env<'_>,
    guard: &JavaRef,
    names: &JavaNames,
    tool: Option<&ToolNames>,
    call: &GuardCall,
    arguments: &JString<'_>,
) -> Result<Verdict, String> {
    let judged = (|| {
        let java = callbacks::get()?;
        let tool_names = match tool {
            Some(tool) => tool.get(env, &call.domain, &call.tool, names)?,
            None => (names.name(env, &call.domain)?, names.name(env, &call.tool)?),
        };
        java.judge(
            env,
            guard.as_obj(),
            call,
            arguments,
            (&tool_names.0, &tool_names.1),
            names,
            decode_verdict,
        )
    })();
    judged.map_err(guard_error).and_then(|verdict| verdict)
}

/// Why the guard gave no verdict, for the refusal.
fn guard_error(error: BridgeError) -> String {
    match error {
        BridgeError::Java(thrown) => format!("it threw {thrown}"),
        other => other.to_string(),
    }
}

/// What the one job of a joint call tells the call's future when the gate stayed shut: the
/// verdict (or why there is none). When the gate opens it tells nothing; the handler's
/// answer comes as any handler's does, and is the only wake-up of the call's task.
struct Refused(Result<Verdict, String>);

/// What the gate of a joint call needs while its guard judges it in Java.
struct JointAdmission {
    gate: RunGate,
    refusal: oneshot::Sender<Refused>,
    /// Set before the handler may start.
    started: Arc<AtomicBool>,
}

/// Where the joint call this callback thread runs stands. The job sets `Judging` before it
/// enters Java and takes the stage back when Java returns; in between, the guard's verdict
/// comes back on this same thread through `Native.admitJoint` ([`admit_joint`]).
enum JointStage {
    /// No joint call is being judged on this thread.
    Idle,
    /// The guard is judging; its verdict goes to the gate.
    Judging(JointAdmission),
    /// The gate opened: the handler may start.
    Started,
    /// The gate stayed shut; the refusal went back to the call.
    Refused,
}

thread_local! {
    static JOINT: RefCell<JointStage> = const { RefCell::new(JointStage::Idle) };
}

/// `Native.admitJoint`'s answer (Java's `Native.JOINT_REFUSED`): the handler must not start.
const JOINT_REFUSED: i32 = 0;
/// `Native.admitJoint`'s answer (`Native.JOINT_ALLOWED`): the handler may start.
const JOINT_ALLOWED: i32 = 1;
/// `Native.admitJoint`'s answer (`Native.JOINT_EXPLICITLY_ALLOWED`): the handler may start,
/// explicitly allowed.
const JOINT_EXPLICITLY_ALLOWED: i32 = 2;

/// The verdict `NativeCallbacks.judgeAndStart` gives `Native.admitJoint`: its kind as Java's
/// `Verdict.code()` numbers it (`Verdict.NO_VERDICT` for a guard that returned none), and
/// `text`, which reads the reason or prompt and is asked only for a denial or an ask.
pub fn verdict_of_code(
    code: i32,
    text: impl FnOnce() -> Result<String, String>,
) -> Result<Verdict, String> {
    match code {
        0 => Ok(Verdict::Allow),
        1 => Ok(Verdict::AllowExplicitly),
        2 => text().map(|reason| Verdict::Deny { reason }),
        3 => text().map(|prompt| Verdict::Ask { prompt }),
        _ => Err("the Security Guard returned null instead of a Verdict".to_owned()),
    }
}

/// Holds this thread's [`JointStage`] at `Judging` while the joint call's entry runs, and
/// takes it back when the entry ends, even by a panic: a call left `Judging` would be the
/// next `admitJoint`'s on this thread.
struct JudgingOnThisThread;

impl JudgingOnThisThread {
    fn enter(admission: JointAdmission) -> Self {
        JOINT.with(|stage| *stage.borrow_mut() = JointStage::Judging(admission));
        JudgingOnThisThread
    }

    /// What became of the call, the stage back at `Idle`.
    fn end(self) -> JointStage {
        take_stage()
    }
}

impl Drop for JudgingOnThisThread {
    fn drop(&mut self) {
        // After `end`, `Idle` again: nothing to do. After a panic, the call's refusal channel
        // closes with the admission, which tells its future the guard gave no answer.
        drop(take_stage());
    }
}

fn take_stage() -> JointStage {
    JOINT.with(|stage| std::mem::replace(&mut *stage.borrow_mut(), JointStage::Idle))
}

/// `Native.admitJoint`: the verdict of the guard judging this thread's joint call (or why
/// there is none), given to the call's gate. Whether the handler may start; a refusal goes
/// back to the call from here. Called on any other thread, or a second time, it finds no call
/// and refuses.
pub fn admit_joint(verdict: Result<Verdict, String>) -> i32 {
    let stage =
        JOINT.with(|stage| std::mem::replace(&mut *stage.borrow_mut(), JointStage::Refused));
    let JointStage::Judging(admission) = stage else {
        // Not judging: put back what was there (a second verdict changes nothing).
        JOINT.with(|slot| *slot.borrow_mut() = stage);
        return JOINT_REFUSED;
    };
    match verdict {
        Ok(verdict) if admission.gate.admit(&verdict) => {
            admission.started.store(true, Ordering::Release);
            JOINT.with(|stage| *stage.borrow_mut() = JointStage::Started);
            // The refusal channel closes unused: with `started`, that tells the call's future
            // the handler is running.
            if verdict == Verdict::AllowExplicitly {
                JOINT_EXPLICITLY_ALLOWED
            } else {
                JOINT_ALLOWED
            }
        }
        verdict => {
            let _ = admission.refusal.send(Refused(verdict));
            JOINT_REFUSED
        }
    }
}

/// How long a worker watches for the answers of the only Java call in flight before it
/// parks. An echo-sized call is answered within about 20 µs of its job being queued (the
/// callback thread's wake-up included); an answer taken here finishes the call on the
/// connection's task, so no thread has to be woken to deliver it (that was a wake-up of a
/// parked Tokio worker, which then woke the other one). A slow handler costs a worker this
/// long per call, and only when no other Java call is in flight: with several in flight,
/// nobody watches, and the calls overlap as before.
const SOLE_CALL_WATCH: Duration = Duration::from_micros(50);

/// How many looks the watch makes between two yields of its CPU (and two readings of the
/// clock). Few: when the callback thread shares this CPU (one CPU, or a client that spins on
/// the other), each look before a yield only delays the job; 64 looks cost about 4 µs a call
/// there, 8 about half a microsecond, and a yield on a CPU nobody else wants returns at once.
const LOOKS_PER_YIELD: u32 = 8;

/// Joint calls in flight, to tell whether a new one is alone.
static JOINT_CALLS_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// A joint call counted in [`JOINT_CALLS_IN_FLIGHT`] until it is over (or dropped).
struct InFlight {
    alone: bool,
}

impl InFlight {
    /// Counts a new joint call; it is alone when no other is in flight and no other message
    /// of its connection waits behind it.
    fn enter(others_waiting: bool) -> Self {
        let none_in_flight = JOINT_CALLS_IN_FLIGHT.fetch_add(1, Ordering::AcqRel) == 0;
        InFlight {
            alone: none_in_flight && !others_waiting,
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        JOINT_CALLS_IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

const HANDLER_ENDED_UNANSWERED: &str = "the Java handler ended without answering";
const GUARD_ENDED_UNANSWERED: &str = "the Security Guard ended without answering";

/// What watching a joint call's answers found.
#[derive(Debug)]
enum Watched {
    /// The call is over.
    Over(JointOutcome),
    /// The job ended after starting the handler, whose answer has not come yet.
    HandlerStarted,
    /// Neither answer came.
    Nothing,
}

/// Watches a joint call's two answers for at most `watch`, on this thread, as the call's
/// future would read them when woken.
fn watch_briefly(
    answered: &mut oneshot::Receiver<Result<Value, ToolError>>,
    refused: &mut oneshot::Receiver<Refused>,
    started: &AtomicBool,
    watch: Duration,
) -> Watched {
    let until = Instant::now() + watch;
    let mut job_over = false;
    let mut looks = 0u32;
    loop {
        match answered.try_recv() {
            Ok(answer) => return Watched::Over(JointOutcome::Handled(answer)),
            Err(TryRecvError::Closed) => {
                return Watched::Over(JointOutcome::Handled(Err(ToolError::new(
                    HANDLER_ENDED_UNANSWERED,
                ))))
            }
            Err(TryRecvError::Empty) => {}
        }
        if !job_over {
            match refused.try_recv() {
                Ok(Refused(verdict)) => return Watched::Over(JointOutcome::Judged(verdict)),
                Err(TryRecvError::Closed) if started.load(Ordering::Acquire) => job_over = true,
                Err(TryRecvError::Closed) => {
                    return Watched::Over(JointOutcome::Judged(Err(
                        GUARD_ENDED_UNANSWERED.to_owned()
                    )))
                }
                Err(TryRecvError::Empty) => {}
            }
        }
        looks = looks.wrapping_add(1);
        if looks.is_multiple_of(LOOKS_PER_YIELD) {
            if Instant::now() >= until {
                return if job_over {
                    Watched::HandlerStarted
                } else {
                    Watched::Nothing
                };
            }
            // The callback thread may be waiting for this very CPU.
            std::thread::yield_now();
        }
        std::hint::spin_loop();
    }
}

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
            others_waiting,
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
        let names = Arc::clone(&self.names);
        let handler = Arc::clone(&java_handler.handler);
        let tool_names = Arc::clone(&java_handler.names);
        let job_started = Arc::clone(&started);
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            // One Java string for the guard and the handler: they see the same object.
            let arguments = match callbacks::arguments_string(env, &judged.arguments_json) {
                Ok(arguments) => arguments,
                Err(error) => {
                    let _ = refusal.send(Refused(Err(guard_error(error))));
                    return;
                }
            };
            let admission = JointAdmission {
                gate,
                refusal,
                started: job_started,
            };
            let judging = JudgingOnThisThread::enter(admission);
            let entered = (|| {
                let java = callbacks::get()?;
                let (domain, tool) = tool_names.get(env, &judged.domain, &judged.tool, &names)?;
                java.judge_and_start(
                    env,
                    guard.as_obj(),
                    handler.as_obj(),
                    &judged,
                    &arguments,
                    (&domain, &tool),
                    &names,
                    id,
                )
            })();
            match (judging.end(), entered) {
                // No verdict reached the gate: the guard threw, or the entry failed first.
                (JointStage::Judging(admission), entered) => {
                    let why = match entered {
                        Err(error) => guard_error(error),
                        Ok(_) => GUARD_ENDED_UNANSWERED.to_owned(),
                    };
                    let _ = admission.refusal.send(Refused(Err(why)));
                }
                (JointStage::Started, Ok(context)) => keep_context(env, id, &context),
                (JointStage::Started, Err(error)) => fail_call(id, error),
                // The refusal went back from `admit_joint`.
                (JointStage::Refused | JointStage::Idle, _) => {}
            }
        });
        if threads::submit(job).is_err() {
            drop(end);
            return Some(ready(JointOutcome::Judged(Err(BUSY.to_owned()))));
        }
        let in_flight = InFlight::enter(others_waiting);
        Some(Box::pin(async move {
            let _end = end;
            let mut answered = answered;
            let mut refused = refused;
            let mut job_over = false;
            if in_flight.alone {
                match watch_briefly(&mut answered, &mut refused, &started, SOLE_CALL_WATCH) {
                    Watched::Over(outcome) => return outcome,
                    Watched::HandlerStarted => job_over = true,
                    Watched::Nothing => {}
                }
            }
            loop {
                tokio::select! {
                    biased;
                    answer = &mut answered => {
                        return JointOutcome::Handled(answer.unwrap_or_else(|_| {
                            Err(ToolError::new(HANDLER_ENDED_UNANSWERED))
                        }));
                    }
                    refusal = &mut refused, if !job_over => match refusal {
                        Ok(Refused(verdict)) => return JointOutcome::Judged(verdict),
                        // The job is over without a refusal: it started the handler, whose
                        // answer is on its way, or it never ran.
                        Err(_) if started.load(Ordering::Acquire) => job_over = true,
                        Err(_) => {
                            return JointOutcome::Judged(Err(GUARD_ENDED_UNANSWERED.to_owned()));
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
        let names = Arc::clone(&self.names);
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            let verdict = callbacks::arguments_string(env, &call.arguments_json)
                .map_err(guard_error)
                .and_then(|arguments| judge_in_java(env, &guard, &names, None, &call, &arguments));
            let _ = answer.send(verdict);
        });
        if threads::submit(job).is_err() {
            return ready(Err(BUSY.to_owned()));
        }
        Box::pin(async move {
            answered
                .await
                .unwrap_or_else(|_| Err(GUARD_ENDED_UNANSWERED.to_owned()))
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    type Answer = Result<Value, ToolError>;

    fn channels() -> (
        oneshot::Sender<Answer>,
        oneshot::Receiver<Answer>,
        oneshot::Sender<Refused>,
        oneshot::Receiver<Refused>,
    ) {
        let (answer, answered) = oneshot::channel();
        let (refusal, refused) = oneshot::channel();
        (answer, answered, refusal, refused)
    }

    const LONG: Duration = Duration::from_secs(10);

    #[test]
    fn an_answer_from_another_thread_during_the_watch_is_taken() {
        let (answer, mut answered, refusal, mut refused) = channels();
        let started = Arc::new(AtomicBool::new(false));
        let job_started = Arc::clone(&started);
        let job = std::thread::spawn(move || {
            job_started.store(true, Ordering::Release);
            drop(refusal);
            std::thread::sleep(Duration::from_millis(5));
            let _ = answer.send(Ok(serde_json::json!({"value": 1})));
        });
        let watched = watch_briefly(&mut answered, &mut refused, &started, LONG);
        job.join().unwrap();
        match watched {
            Watched::Over(JointOutcome::Handled(Ok(value))) => assert_eq!(value["value"], 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_refusal_ends_the_watch_with_the_verdict() {
        let (_answer, mut answered, refusal, mut refused) = channels();
        let started = AtomicBool::new(false);
        let _ = refusal.send(Refused(Ok(Verdict::Deny {
            reason: "no".to_owned(),
        })));
        match watch_briefly(&mut answered, &mut refused, &started, LONG) {
            Watched::Over(JointOutcome::Judged(Ok(Verdict::Deny { reason }))) => {
                assert_eq!(reason, "no");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_job_that_never_ran_is_a_guard_that_did_not_answer() {
        let (_answer, mut answered, refusal, mut refused) = channels();
        drop(refusal);
        let started = AtomicBool::new(false);
        match watch_briefly(&mut answered, &mut refused, &started, LONG) {
            Watched::Over(JointOutcome::Judged(Err(reason))) => {
                assert_eq!(reason, GUARD_ENDED_UNANSWERED);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_handler_dropped_unanswered_ends_the_watch_with_an_error() {
        let (answer, mut answered, refusal, mut refused) = channels();
        let started = AtomicBool::new(true);
        drop(refusal);
        drop(answer);
        match watch_briefly(&mut answered, &mut refused, &started, LONG) {
            Watched::Over(JointOutcome::Handled(Err(error))) => {
                assert!(
                    format!("{error:?}").contains(HANDLER_ENDED_UNANSWERED),
                    "{error:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    /// What the watch found out stays usable: the receivers it gave up on are polled by the
    /// call's future afterwards (a receiver read to its end would panic when polled).
    #[test]
    fn a_watch_that_runs_out_leaves_the_answers_to_the_future() {
        let (answer, mut answered, refusal, mut refused) = channels();
        let started = AtomicBool::new(true);
        drop(refusal);
        let watched = watch_briefly(&mut answered, &mut refused, &started, Duration::ZERO);
        assert!(matches!(watched, Watched::HandlerStarted), "{watched:?}");
        let _ = answer.send(Ok(Value::Null));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert!(matches!(runtime.block_on(answered), Ok(Ok(Value::Null))));

        let (_answer, mut answered, _refusal, mut refused) = channels();
        let started = AtomicBool::new(false);
        let watched = watch_briefly(&mut answered, &mut refused, &started, Duration::ZERO);
        assert!(matches!(watched, Watched::Nothing), "{watched:?}");
    }

    #[test]
    fn only_a_call_with_no_other_in_flight_and_nothing_behind_it_is_alone() {
        let first = InFlight::enter(false);
        let second = InFlight::enter(false);
        assert!(!second.alone);
        drop(second);
        drop(first);
        assert!(!InFlight::enter(true).alone);
        assert!(InFlight::enter(false).alone);
    }
}
