//! One entry for the guard and the handler: when both live elsewhere (a Java guard and a Java
//! handler, in the JVM), a call crosses over once, judged and — if the checkpoint lets it run
//! at once — handled in the same entry, instead of crossing over to be judged and again to be
//! handled.
//!
//! The checkpoint still decides: the guard hands its verdict to the call's [`RunGate`], which
//! applies the same rules as `call::checkpoint` (the baseline policy's concerns, a destructive
//! tool asking the person) and, only when they let the call run without asking anyone, records
//! the audit record and opens. Anything else — a denial, an ask, a guard that failed, a call
//! cancelled or timed out meanwhile — keeps the gate shut, and the verdict goes back to the
//! server, which goes on as after a separate judgement.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::call::checkpoint::{decide_at_once, Decision};
use crate::guard::{GuardRequest, Verdict};
use crate::handler::ProgressSink;

/// What a guard gets to judge a call and start its handler in one entry.
pub struct JointCall {
    /// What the guard judges; `request.arguments` is exactly what the handler must get.
    pub request: GuardRequest,
    /// The handler's cancellation (as [`crate::ToolCall::cancellation`]).
    pub cancellation: CancellationToken,
    /// The handler's progress sink (as [`crate::ToolCall::progress`]).
    pub progress: ProgressSink,
    /// Whether the handler may start, asked with the verdict.
    pub gate: RunGate,
    /// Whether more messages of the call's connection are already waiting to be handled
    /// behind this one: a guard that would spend a moment of the calling thread watching for
    /// the call's answer must not, as those messages would wait for it.
    pub others_waiting: bool,
}

impl std::fmt::Debug for JointCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JointCall")
            .field("tool", &self.request.tool)
            .finish_non_exhaustive()
    }
}

/// Whether a judged call may start its handler now. Asked once, from any thread; it never
/// blocks on anything but a short lock, and makes no call into a guard, handler or host.
pub struct RunGate {
    inner: Arc<GateInner>,
}

struct GateInner {
    state: Mutex<GateState>,
    concerns: Vec<String>,
    destructive: bool,
    /// Fires when the call is over (cancelled, the connection closed): the gate stays shut.
    cancellation: CancellationToken,
    /// Told when the gate opens. It wakes the server only if the server already waits for it
    /// (a guard slower than the handler's deadline); otherwise it leaves a permit nobody
    /// takes, at the cost of an atomic operation.
    opening: Notify,
}

enum GateState {
    /// Waiting for the verdict; holds what opening does (the audit record, telling the call).
    Open(Box<dyn FnOnce(&Decision) + Send>),
    /// The handler was let start, at this moment.
    Admitted(Instant),
    /// Refused, or closed by the server (the guard took too long).
    Shut,
}

impl RunGate {
    /// A gate for the call judged by `request`; `on_admit` runs (under the gate's lock, so
    /// before the handler starts) when the verdict lets the call run at once. Opening wakes
    /// the server only when it asked to be told ([`GateCloser::opened`]); otherwise the
    /// server looks at the gate ([`GateCloser::opened_at`]) when one of its clocks runs out.
    pub(crate) fn new(
        request: &GuardRequest,
        cancellation: CancellationToken,
        on_admit: impl FnOnce(&Decision) + Send + 'static,
    ) -> (RunGate, GateCloser) {
        let inner = Arc::new(GateInner {
            state: Mutex::new(GateState::Open(Box::new(on_admit))),
            concerns: request.concerns.clone(),
            destructive: request.annotations.destructive,
            cancellation,
            opening: Notify::new(),
        });
        (
            RunGate {
                inner: Arc::clone(&inner),
            },
            GateCloser { inner },
        )
    }

    /// Whether the handler may start now, given the guard's verdict. `true` at most once;
    /// when `true`, the decision is already in the audit log.
    pub fn admit(&self, verdict: &Verdict) -> bool {
        let mut state = self.inner.lock();
        // Asked once: an admitted or shut gate stays as it is.
        if !matches!(*state, GateState::Open(_)) {
            return false;
        }
        let decision = if self.inner.cancellation.is_cancelled() {
            None
        } else {
            decide_at_once(verdict, &self.inner.concerns, self.inner.destructive)
        };
        match (std::mem::replace(&mut *state, GateState::Shut), decision) {
            (GateState::Open(on_admit), Some(decision)) => {
                on_admit(&decision);
                *state = GateState::Admitted(Instant::now());
                self.inner.opening.notify_one();
                true
            }
            _ => false,
        }
    }
}

impl std::fmt::Debug for RunGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunGate").finish_non_exhaustive()
    }
}

/// The server's side of a gate: it shuts it when it stops waiting for the verdict.
pub(crate) struct GateCloser {
    inner: Arc<GateInner>,
}

impl GateCloser {
    /// Shuts the gate unless the handler was already let start; returns when it was.
    pub(crate) fn shut(&self) -> Option<Instant> {
        let mut state = self.inner.lock();
        match *state {
            GateState::Admitted(at) => Some(at),
            _ => {
                *state = GateState::Shut;
                None
            }
        }
    }

    /// Completes once the gate has opened (at once if it already has).
    pub(crate) async fn opened(&self) {
        self.inner.opening.notified().await;
    }

    /// When the handler was let start, if it was.
    pub(crate) fn opened_at(&self) -> Option<Instant> {
        match *self.inner.lock() {
            GateState::Admitted(at) => Some(at),
            _ => None,
        }
    }
}

impl GateInner {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        // Every update is one assignment: a poisoned lock still holds a whole state.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
