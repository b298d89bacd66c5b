//! The Security Guard checkpoint: every `run(tool, args)` is judged before anything runs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::host::Host;
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
    pub domain: String,
    /// The tool's registered name.
    pub tool: String,
    /// The validated arguments.
    pub arguments: Arc<Value>,
    /// The tool's behaviour hints.
    pub annotations: ToolAnnotations,
    /// What the baseline policy found wrong; with any, only `AllowExplicitly` runs the call.
    pub concerns: Vec<String>,
    /// Who is calling.
    pub client: ClientIdentity,
}

/// What the servers know about the client behind a connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientIdentity {
    /// The peer's process id, from the kernel.
    pub pid: Option<i32>,
    /// The name the client gave in `initialize` or `_meta`, if any (self-reported).
    pub name: Option<String>,
    /// A number unique to the connection within this server set.
    pub connection_id: u64,
}

/// A policy that judges each call.
pub trait SecurityGuard: Send + Sync + 'static {
    /// Judges one call. An `Err` (the guard itself failed) is a denial.
    fn judge(&self, request: &GuardRequest) -> VerdictFuture;
}

/// A guard that allows everything: for tests and the test server, never for an IDE.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAll;

impl SecurityGuard for AllowAll {
    fn judge(&self, _request: &GuardRequest) -> VerdictFuture {
        Box::pin(async { Ok(Verdict::Allow) })
    }
}

/// The final decision after asking the guard and, when it says ask, the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run it; the reason says who allowed it (for the audit log).
    Run(String),
    /// Refuse, with the reason for the model.
    Refuse(String),
}

/// How long each party of the checkpoint may take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckpointTimeouts {
    pub(crate) guard: Duration,
    pub(crate) confirmation: Duration,
}

/// Runs the checkpoint: the guard's verdict, combined with the baseline policy's concerns and
/// the tool's destructiveness, then the host's confirmation for an ask. Every failure path
/// (guard error, timeout, no UI, a person saying no) refuses.
pub(crate) async fn decide(
    guard: &dyn SecurityGuard,
    host: &dyn Host,
    request: &GuardRequest,
    timeouts: CheckpointTimeouts,
) -> Decision {
    let verdict = match tokio::time::timeout(timeouts.guard, guard.judge(request)).await {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(error)) => {
            return Decision::Refuse(format!(
                "denied: the Security Guard failed while judging `{}` ({error}); nothing ran",
                request.tool
            ))
        }
        Err(_) => {
            return Decision::Refuse(format!(
                "denied: the Security Guard did not answer within {} ms; nothing ran",
                timeouts.guard.as_millis()
            ))
        }
    };
    let prompt = match verdict {
        Verdict::Deny { reason } => {
            return Decision::Refuse(format!("denied by the Security Guard: {reason}"))
        }
        Verdict::Allow if !request.concerns.is_empty() => {
            return Decision::Refuse(format!(
                "denied: {}; the IDE's Security Guard did not explicitly allow this",
                request.concerns.join("; ")
            ))
        }
        Verdict::Allow | Verdict::AllowExplicitly if !request.annotations.destructive => {
            return Decision::Run("allowed by the Security Guard".to_owned())
        }
        Verdict::Allow | Verdict::AllowExplicitly => format!(
            "`{}` ({}) may change or destroy data. Run it?",
            request.tool, request.domain
        ),
        Verdict::Ask { prompt } => prompt,
    };
    let Some(answer) = host.confirm(request, &prompt) else {
        return Decision::Refuse(format!(
            "denied: `{}` needs the user's confirmation, and there is no UI to ask in",
            request.tool
        ));
    };
    match tokio::time::timeout(timeouts.confirmation, answer).await {
        Ok(true) => Decision::Run("confirmed by the user".to_owned()),
        Ok(false) => Decision::Refuse(format!("the user declined to run `{}`", request.tool)),
        Err(_) => Decision::Refuse(format!(
            "denied: the user did not answer within {} ms",
            timeouts.confirmation.as_millis()
        )),
    }
}
