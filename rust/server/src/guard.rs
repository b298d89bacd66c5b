//! What the Security Guard is and what it judges: the guard trait, its verdicts and the
//! request it sees. The checkpoint that asks it (and the host) lives in `call::checkpoint`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::handler::{ToolError, ToolHandler};
use crate::joint::JointCall;
use crate::server_name::ServerName;
use crate::tool::ToolAnnotations;

/// A boxed future for the guard's answer.
pub type VerdictFuture = Pin<Box<dyn Future<Output = Result<Verdict, String>> + Send + 'static>>;

/// The guard's answer for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run it, unless the baseline policy raised a concern (a path outside the project, a
    /// credential file) or the tool is destructive (then the person is asked).
    Allow,
    /// Run it even though the baseline policy raised a concern; a destructive tool still asks.
    AllowExplicitly,
    /// Do not run it; the reason goes back to the model.
    Deny {
        /// Why, in words the model can act on.
        reason: String,
    },
    /// Ask the person through the host's confirmation UI; with no UI, this is a denial.
    Ask {
        /// The question to show.
        prompt: String,
    },
}

/// Everything the guard may base its verdict on. `arguments` is exactly what the handler
/// will receive: the same value, not a re-parse.
#[derive(Clone, Debug)]
pub struct GuardRequest {
    /// The server the call came in on.
    pub server: ServerName,
    /// The tool's domain.
    pub domain: Arc<str>,
    /// The tool's registered name.
    pub tool: Arc<str>,
    /// The validated arguments.
    pub arguments: Arc<Value>,
    /// The tool's behaviour hints.
    pub annotations: ToolAnnotations,
    /// What the baseline policy found wrong; with any, only `AllowExplicitly` runs the call.
    pub concerns: Vec<String>,
    /// Who is calling.
    pub client: ClientIdentity,
    /// The call's number, unique within the process; the handler's [`ToolCall`] carries the
    /// same one, so a guard can hand the handler exactly what it judged (a snapshot of what the
    /// arguments name) instead of the handler reading it again.
    ///
    /// [`ToolCall`]: crate::ToolCall
    pub call_number: u64,
}

/// What the servers know about the client behind a connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientIdentity {
    /// The peer's process id, from the kernel.
    pub pid: Option<i32>,
    /// The name the client gave in `initialize` or `_meta`, if any (self-reported).
    pub name: Option<Arc<str>>,
    /// A number unique to the connection within this server set.
    pub connection_id: u64,
}

/// A boxed future for a call judged and (when the checkpoint let it run) handled in one entry.
pub type JointFuture = Pin<Box<dyn Future<Output = JointOutcome> + Send + 'static>>;

/// How a call entered through [`SecurityGuard::judge_and_start`] ended.
#[derive(Debug)]
pub enum JointOutcome {
    /// The gate did not let the handler start (or the guard failed): the verdict goes back to
    /// the checkpoint, which goes on as after [`SecurityGuard::judge`]. The handler never ran.
    Judged(Result<Verdict, String>),
    /// The gate let the handler start: its result.
    Handled(Result<Value, ToolError>),
}

/// A policy that judges each call.
pub trait SecurityGuard: Send + Sync + 'static {
    /// Judges one call. An `Err` (the guard itself failed) is a denial.
    fn judge(&self, request: &GuardRequest) -> VerdictFuture;

    /// Judges a call and, in the same entry, starts its handler if the server's checkpoint
    /// lets the call run at once: for a guard that lives where `handler` lives (the JVM),
    /// so that a call crosses over once instead of twice. The guard must pass the verdict to
    /// [`JointCall::gate`] and start the handler only when it answers `true`, with exactly
    /// the arguments it judged (`call.request.arguments`). `None` when this guard cannot do
    /// that for `handler` (the default): the server then judges and calls separately.
    fn judge_and_start(&self, handler: &dyn ToolHandler, call: JointCall) -> Option<JointFuture> {
        let _ = (handler, call);
        None
    }
}

/// A guard that allows everything: for tests and the test server, never for an IDE.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAll;

impl SecurityGuard for AllowAll {
    fn judge(&self, _request: &GuardRequest) -> VerdictFuture {
        Box::pin(Allowed)
    }
}

/// [`AllowAll`]'s verdict, ready at once: a future of no size, so its box takes no allocation
/// (an `async` block keeps its state in a byte, and every call would allocate one).
struct Allowed;

impl Future for Allowed {
    type Output = Result<Verdict, String>;

    fn poll(
        self: Pin<&mut Self>,
        _context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::task::Poll::Ready(Ok(Verdict::Allow))
    }
}
