//! The checkpoint every `run(tool, args)` passes before anything runs: the guard's verdict,
//! combined with the baseline policy's concerns and the tool's destructiveness, then the
//! host's confirmation for an ask.

use std::time::Duration;

use crate::guard::{GuardRequest, SecurityGuard, Verdict};
use crate::host::Host;

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
