//! Calls, confirmations and admission prompts waiting for an answer from Java, by id.
//!
//! Java answers through native methods (`completeCall`, `failCall`, `answerConfirmation`,
//! `answerAdmission`)
//! from any thread, at any time. An id is never reused, so an answer after the call was
//! cancelled, or a second answer, finds nothing and does nothing. The table's lock is never
//! held across a JNI call or an `.await`: entries are taken out first, then acted on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use ide_mcp_server::{ProgressSink, ToolError};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::java_ref::JavaRef;

/// One Java handler call in progress.
pub struct PendingCall {
    /// Resolves the Rust future that the server awaits.
    pub answer: oneshot::Sender<Result<Value, ToolError>>,
    /// Fires when the client cancels, the deadline passes or the servers stop.
    pub cancellation: CancellationToken,
    /// Where `reportProgress` goes.
    pub progress: ProgressSink,
    /// The Java `ToolCallContext`, once a callback thread created it.
    pub context: Option<JavaRef>,
}

/// The calls waiting for Java, by id. The ids are this library's own counter, never a
/// client's, so a fast hash cannot be steered into collisions (the standard library's
/// keyed hash cost each call's registration and answer tens of nanoseconds more).
type CallTable = HashMap<u64, PendingCall, foldhash::fast::RandomState>;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static CALLS: Mutex<Option<CallTable>> = Mutex::new(None);
static CONFIRMATIONS: YesNoTable = YesNoTable::new();
static ADMISSIONS: YesNoTable = YesNoTable::new();

/// Yes/no questions a person answers (a confirmation, an admission prompt), by id.
struct YesNoTable {
    waiting: Mutex<Option<HashMap<u64, oneshot::Sender<bool>>>>,
}

impl YesNoTable {
    const fn new() -> Self {
        YesNoTable {
            waiting: Mutex::new(None),
        }
    }

    fn with<R>(&self, work: impl FnOnce(&mut HashMap<u64, oneshot::Sender<bool>>) -> R) -> R {
        let mut waiting = self
            .waiting
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(waiting.get_or_insert_with(HashMap::new))
    }

    fn register(&self, answer: oneshot::Sender<bool>) -> u64 {
        let id = next_id();
        self.with(|waiting| waiting.insert(id, answer));
        id
    }

    fn resolve(&self, id: u64, yes: bool) -> bool {
        match self.with(|waiting| waiting.remove(&id)) {
            Some(answer) => {
                let _ = answer.send(yes);
                true
            }
            None => false,
        }
    }

    fn forget(&self, id: u64) {
        self.with(|waiting| waiting.remove(&id));
    }

    fn len(&self) -> usize {
        self.with(|waiting| waiting.len())
    }
}

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

fn with_calls<R>(work: impl FnOnce(&mut CallTable) -> R) -> R {
    let mut calls = CALLS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    work(calls.get_or_insert_with(CallTable::default))
}

/// Registers a call and returns its id.
pub fn register_call(call: PendingCall) -> u64 {
    let id = next_id();
    with_calls(|calls| calls.insert(id, call));
    id
}

/// Stores the Java context of a call. Gives the context back when the call is already over
/// (cancelled while it waited for a callback thread): the handler must then not run.
pub fn attach_context(id: u64, context: JavaRef) -> Result<(), JavaRef> {
    with_calls(|calls| match calls.get_mut(&id) {
        Some(call) if !call.cancellation.is_cancelled() => {
            call.context = Some(context);
            Ok(())
        }
        _ => Err(context),
    })
}

/// Takes a call out of the table, ending it; `None` when it was already over.
pub fn take_call(id: u64) -> Option<PendingCall> {
    with_calls(|calls| calls.remove(&id))
}

/// Answers a call. Returns whether it was still waiting.
pub fn resolve_call(id: u64, outcome: Result<Value, ToolError>) -> bool {
    match take_call(id) {
        Some(call) => {
            let _ = call.answer.send(outcome);
            true
        }
        None => false,
    }
}

/// Whether the call is over for the handler: cancelled, timed out or already answered.
pub fn is_call_cancelled(id: u64) -> bool {
    with_calls(|calls| {
        calls
            .get(&id)
            .is_none_or(|call| call.cancellation.is_cancelled())
    })
}

/// Forwards a progress report of a call still running.
pub fn report_progress(id: u64, progress: f64, total: Option<f64>, message: Option<String>) {
    let sink = with_calls(|calls| calls.get(&id).map(|call| call.progress.clone()));
    if let Some(sink) = sink {
        sink.report(progress, total, message);
    }
}

/// How many calls wait for Java (for leak tests).
pub fn pending_call_count() -> usize {
    with_calls(|calls| calls.len())
}

/// Registers a confirmation and returns its id.
pub fn register_confirmation(answer: oneshot::Sender<bool>) -> u64 {
    CONFIRMATIONS.register(answer)
}

/// Answers a confirmation. Returns whether it was still waiting.
pub fn resolve_confirmation(id: u64, allowed: bool) -> bool {
    CONFIRMATIONS.resolve(id, allowed)
}

/// Forgets a confirmation nobody waits for any more.
pub fn forget_confirmation(id: u64) {
    CONFIRMATIONS.forget(id);
}

/// Registers an admission prompt and returns its id.
pub fn register_admission(answer: oneshot::Sender<bool>) -> u64 {
    ADMISSIONS.register(answer)
}

/// Answers an admission prompt. Returns whether it was still waiting.
pub fn resolve_admission(id: u64, allowed: bool) -> bool {
    ADMISSIONS.resolve(id, allowed)
}

/// Forgets an admission prompt nobody waits for any more.
pub fn forget_admission(id: u64) {
    ADMISSIONS.forget(id);
}

/// How many confirmations and admission prompts wait for an answer (for leak tests).
pub fn pending_question_count() -> usize {
    CONFIRMATIONS.len() + ADMISSIONS.len()
}
