//! The MCP methods, one file each, dispatched from the typed request the session parsed.
//! Adding a method: a variant in `mcp::messages`, a file here, and an arm below.

mod cancelled;
mod discover;
mod initialize;
mod ping;
mod tools_call;
mod tools_list;

use std::future::Future;

use futures::future::Either;
use futures::FutureExt;
use ide_mcp_protocol::jsonrpc::{ErrorObject, Id, Response};

use crate::mcp::{ClientNotification, ClientRequest, Era, RequestMeta, ServerResult};
use crate::outgoing::Outgoing;
use crate::session::Session;
pub(crate) use tools_call::RunRequest;

/// What a request's answer leaves to do once its method has decided: a message to queue, or
/// a `run` call to admit and start. The methods decide without waiting, so that nothing of
/// the request lives across an await but this (whatever does is kept in the connection task's
/// future, which every connection holds, idle or not).
pub(crate) enum Answer {
    /// A reply or an error, for the outgoing queue.
    Send(Outgoing),
    /// A `run` call, admitted under the session's caps when it is carried out.
    Run(RunRequest),
}

impl Answer {
    /// The reply to `id` with `result`, in the fields of `era`.
    pub(crate) fn result(session: &Session, id: Id, era: Era, result: ServerResult) -> Self {
        Answer::Send(
            Response::success(id, result.into_value(session.server, era))
                .into_value()
                .into(),
        )
    }

    /// The error reply to `id`.
    pub(crate) fn failure(id: Id, error: ErrorObject) -> Self {
        Answer::Send(Response::error(Some(id), error).into_value().into())
    }

    /// Queues the message (waiting for room: the back-pressure on a client that does not
    /// read), or admits and starts the call. The answer is taken apart now: the future holds
    /// only what it waits with.
    pub(crate) fn carry_out(self, session: &Session) -> impl Future<Output = ()> + Send + '_ {
        match self {
            Answer::Send(message) => Either::Left(session.outgoing.send(message).map(drop)),
            Answer::Run(run) => Either::Right(tools_call::start_run(session, run)),
        }
    }
}

/// Answers an authenticated request.
pub(crate) fn answer(
    session: &mut Session,
    id: Id,
    era: Era,
    meta: RequestMeta,
    request: ClientRequest,
) -> Answer {
    let result = match request {
        ClientRequest::Initialize {
            protocol_version,
            client_name,
        } => initialize::answer(session, protocol_version.as_deref(), client_name),
        ClientRequest::Ping => ping::answer(),
        ClientRequest::Discover => discover::answer(),
        ClientRequest::ToolsList => tools_list::answer(),
        ClientRequest::ToolsCall { tool, arguments } => {
            return tools_call::answer(session, id, era, meta, tool, arguments)
        }
        ClientRequest::Unknown(method) => {
            return Answer::failure(id, ErrorObject::method_not_found(&method))
        }
    };
    Answer::result(session, id, era, result)
}

/// Acts on an authenticated notification.
pub(crate) fn notify(session: &mut Session, notification: ClientNotification) {
    match notification {
        ClientNotification::Cancelled { request_id } => cancelled::apply(session, request_id),
        ClientNotification::Ignored => {}
    }
}
