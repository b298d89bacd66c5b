//! The checkpoint every `run(tool, args)` passes before anything runs: the guard's verdict,
//! combined with the baseline policy's concerns and the tool's destructiveness, then the
//! host's confirmation for an ask.

use std::borrow::Cow;
use std::time::Duration;

use crate::guard::{GuardRequest, SecurityGuard, Verdict};
use crate::host::Host;

/// The final decision after asking the guard and, when it says ask, the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decision {
    /// Whether the call runs.
    pub(crate) run: bool,
    /// Why, in words the model can act on (for a refusal, the text of the error result).
    pub(crate) reason: Cow<'static, str>,
    /// Why, for the audit log: from a fixed vocabulary plus the names of arguments, never an
    /// argument's value nor the guard's or the host's own words (which may quote values).
    pub(crate) audit_reason: Cow<'static, str>,
    /// The guard answered `AllowExplicitly`: the handler may pass what the credential rule
    /// withholds (`ToolCall::explicitly_allowed`).
    pub(crate) explicitly_allowed: bool,
}

impl Decision {
    /// A call that runs, `why` in the fixed words of the audit log (nothing is copied: a
    /// call that runs pays for no text).
    pub(crate) fn run(why: &'static str, explicitly_allowed: bool) -> Self {
        Decision {
            run: true,
            reason: Cow::Borrowed(why),
            audit_reason: Cow::Borrowed(why),
            explicitly_allowed,
        }
    }

    pub(crate) fn refuse(reason: String, audit_reason: impl Into<Cow<'static, str>>) -> Self {
        Decision {
            run: false,
            reason: Cow::Owned(reason),
            audit_reason: audit_reason.into(),
            explicitly_allowed: false,
        }
    }
}

/// How long each party of the checkpoint may take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckpointTimeouts {
    pub(crate) guard: Duration,
    pub(crate) confirmation: Duration,
}

/// Runs the checkpoint: the guard's verdict, combined with the baseline policy's concerns and
/// the tool's destructiveness, then the host's confirmation for an ask. Every failure path
/// (guard error, timeout, no UI, a person saying no) refuses. `audit_concerns` are the
/// policy's concerns without the values they are about, for the audit log.
pub(crate) async fn decide(
    guard: &dyn SecurityGuard,
    host: &dyn Host,
    request: &GuardRequest,
    audit_concerns: &[String],
    timeouts: CheckpointTimeouts,
) -> Decision {
    let verdict = match tokio::time::timeout(timeouts.guard, guard.judge(request)).await {
        Ok(verdict) => verdict,
        Err(_) => return guard_timed_out(timeouts),
    };
    decide_on(verdict, host, request, audit_concerns, timeouts).await
}

/// The refusal when the guard did not answer within its timeout.
pub(crate) fn guard_timed_out(timeouts: CheckpointTimeouts) -> Decision {
    let waited = timeouts.guard.as_millis();
    Decision::refuse(
        format!("denied: the Security Guard did not answer within {waited} ms; nothing ran"),
        format!("denied: the Security Guard did not answer within {waited} ms"),
    )
}

/// The decision when the verdict lets the call run without asking anyone: an allow with no
/// concern of the baseline policy, or an explicit allow, for a tool that is not destructive.
/// `None` when the call is refused or a person must be asked.
pub(crate) fn decide_at_once(
    verdict: &Verdict,
    concerns: &[String],
    destructive: bool,
) -> Option<Decision> {
    match verdict {
        Verdict::Allow if !concerns.is_empty() => None,
        Verdict::Allow | Verdict::AllowExplicitly if !destructive => Some(Decision::run(
            "allowed by the Security Guard",
            *verdict == Verdict::AllowExplicitly,
        )),
        _ => None,
    }
}

/// The checkpoint after the guard answered (or failed): run at once, refuse, or ask the host.
pub(crate) async fn decide_on(
    verdict: Result<Verdict, String>,
    host: &dyn Host,
    request: &GuardRequest,
    audit_concerns: &[String],
    timeouts: CheckpointTimeouts,
) -> Decision {
    let verdict = match verdict {
        Ok(verdict) => verdict,
        Err(error) => {
            return Decision::refuse(
                format!(
                    "denied: the Security Guard failed while judging `{}` ({error}); nothing ran",
                    request.tool
                ),
                "denied: the Security Guard failed",
            )
        }
    };
    if let Some(run) = decide_at_once(&verdict, &request.concerns, request.annotations.destructive)
    {
        return run;
    }
    let explicitly_allowed = verdict == Verdict::AllowExplicitly;
    let prompt = match verdict {
        Verdict::Deny { reason } => {
            return Decision::refuse(
                format!("denied by the Security Guard: {reason}"),
                "denied by the Security Guard",
            )
        }
        Verdict::Allow if !request.concerns.is_empty() => {
            return Decision::refuse(
                format!(
                    "denied: {}; the IDE's Security Guard did not explicitly allow this",
                    request.concerns.join("; ")
                ),
                format!(
                    "denied by the baseline policy: {}; not explicitly allowed",
                    audit_concerns.join("; ")
                ),
            )
        }
        Verdict::Allow | Verdict::AllowExplicitly => format!(
            "`{}` ({}) may change or destroy data. Run it?",
            request.tool, request.domain
        ),
        Verdict::Ask { prompt } => prompt,
    };
    let Some(answer) = host.confirm(request, &prompt) else {
        return Decision::refuse(
            format!(
                "denied: `{}` needs the user's confirmation, and there is no UI to ask in",
                request.tool
            ),
            "denied: confirmation needed, and no UI to ask in",
        );
    };
    match tokio::time::timeout(timeouts.confirmation, answer).await {
        Ok(true) => Decision::run("confirmed by the user", explicitly_allowed),
        Ok(false) => Decision::refuse(
            format!("the user declined to run `{}`", request.tool),
            "declined by the user",
        ),
        Err(_) => {
            let text = format!(
                "denied: the user did not answer within {} ms",
                timeouts.confirmation.as_millis()
            );
            Decision::refuse(text.clone(), text)
        }
    }
}
