//! `tools/call` of the three meta-tools: `domains()` and `tools(domain)` answer from the
//! registry at once; `run(tool, args)` is admitted under the session's caps and handed to the
//! call path (`call/`).

use std::future::Future;
use std::sync::Arc;

use futures::future::{Either, OptionFuture};
use futures::FutureExt;
use ide_mcp_protocol::jsonrpc::{ErrorObject, Id};
use serde_json::Value;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::mpsc::OwnedPermit;

use super::Answer;
use crate::call::{self, RunCall};
use crate::mcp::{Era, MetaTool, RequestMeta, ServerResult, ToolArguments, ToolResult};
use crate::meta_tools::{domains_text, tools_text, within_budget};
use crate::outgoing::Outgoing;
use crate::session::{caps, Session};

pub(super) fn answer(
    session: &Session,
    id: Id,
    era: Era,
    meta: RequestMeta,
    tool: MetaTool,
    arguments: ToolArguments,
) -> Answer {
    let server = session.server;
    let budget = session.shared.config.output_budget_bytes;
    let result = match tool {
        MetaTool::Domains => {
            let text = domains_text(&session.shared.registry(), server);
            ToolResult::success(within_budget(text, budget))
        }
        MetaTool::Tools => match arguments
            .into_object()
            .get("domain")
            .and_then(Value::as_str)
        {
            None => ToolResult::error("tools needs `domain`, a domain name from domains()"),
            Some(domain) => match tools_text(&session.shared.registry(), server, domain) {
                Ok(text) => ToolResult::success(within_budget(text, budget)),
                Err(message) => ToolResult::error(message),
            },
        },
        MetaTool::Run => {
            return Answer::Run(RunRequest {
                id,
                era,
                arguments,
                progress_token: meta.progress_token,
            })
        }
        MetaTool::Other(other) => {
            let error = ErrorObject::invalid_params(format!(
                "unknown tool `{other}`: this server's tools are domains, tools and run"
            ));
            return Answer::failure(id, error);
        }
    };
    Answer::result(session, id, era, ServerResult::Tool(result))
}

/// A `run` call as its request gave it, before it is admitted.
pub(crate) struct RunRequest {
    id: Id,
    era: Era,
    arguments: ToolArguments,
    progress_token: Option<Value>,
}

/// Admits a `run` call and starts it, or answers at once that a cap is reached. The reply's
/// room in the outgoing queue is reserved first, so a finished call never waits to reply and
/// a cancellation cannot race it (see `in_flight`); only when the queue is full does this
/// wait for that room, in a box, as the request is kept across the wait.
pub(super) fn start_run(
    session: &Session,
    run: RunRequest,
) -> impl Future<Output = ()> + Send + '_ {
    match session.outgoing.clone().try_reserve_owned() {
        Ok(reply_slot) => {
            Either::Left(OptionFuture::from(admit(session, run, reply_slot)).map(drop))
        }
        Err(TrySendError::Full(outgoing)) => Either::Right(
            async move {
                if let Ok(reply_slot) = outgoing.reserve_owned().await {
                    if let Some(started) = admit(session, run, reply_slot) {
                        started.await;
                    }
                }
            }
            .boxed(),
        ),
        // The connection is closing: there is nobody to answer.
        Err(TrySendError::Closed(_)) => Either::Right(std::future::ready(()).boxed()),
    }
}

/// The call admitted under the caps and started, or `None` when a cap was reached (and the
/// client told so).
fn admit(
    session: &Session,
    run: RunRequest,
    reply_slot: OwnedPermit<Outgoing>,
) -> Option<impl Future<Output = ()> + Send + '_> {
    let RunRequest {
        id,
        era,
        arguments,
        progress_token,
    } = run;
    let admitted = caps::admit_run(session, &id, era, reply_slot)?;
    let call = RunCall {
        shared: Arc::clone(&session.shared),
        server: session.server,
        registry: session.shared.registry(),
        id,
        era,
        arguments,
        progress_token,
        client: session.identity.clone(),
        cancellation: admitted.cancellation,
        in_flight: Arc::clone(&session.in_flight),
        outgoing: session.outgoing.clone(),
        _handler_slot: admitted.handler_slot,
        others_waiting: session.others_waiting,
    };
    Some(call::start(&session.shared, call))
}
