//! The budgets a client cannot exceed, and what it is told when it reaches one: calls in
//! flight on a connection (`QUEUE_DEPTH`) and handlers running at once on a server. The
//! connections a server keeps open are `connection_budget`'s. A call over a cap is answered at once and the connection keeps reading,
//! so a cancellation still gets through.

use ide_mcp_protocol::jsonrpc::{ErrorObject, Id, Response};
use tokio::sync::mpsc::OwnedPermit;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use crate::mcp::{Era, ToolResult};
use crate::outgoing::{Outgoing, ToolReply};
use crate::server_name::ServerName;
use crate::session::in_flight::Refusal;
use crate::session::Session;

/// What an admitted call holds until it ends.
pub(crate) struct AdmittedCall {
    /// Fires when the call is cancelled, the connection closes or the servers stop.
    pub(crate) cancellation: CancellationToken,
    /// One of the server's handler slots.
    pub(crate) handler_slot: OwnedSemaphorePermit,
}

/// The error for a request whose id is still in flight on its connection.
pub(crate) fn id_in_flight(id: &Id) -> ErrorObject {
    ErrorObject::invalid_request(format!(
        "id {} is still in flight on this connection; use a new id",
        id.to_value()
    ))
}

/// Admits a `run` call into the connection's in-flight table with its reply's room in the
/// outgoing queue (`reply_slot`), and takes a handler slot; or answers at once which cap was
/// reached (then `None`).
pub(crate) fn admit_run(
    session: &Session,
    id: &Id,
    era: Era,
    reply_slot: OwnedPermit<Outgoing>,
) -> Option<AdmittedCall> {
    let cancellation = session.cancellation.child_token();
    match session
        .in_flight
        .admit(id.clone(), cancellation.clone(), reply_slot)
    {
        Ok(()) => {}
        Err(Refusal::QueueFull(slot)) => {
            let text = format!(
                "busy: this connection already has {} calls in flight (QUEUE_DEPTH); wait for a \
                 reply, then retry",
                session.shared.config.queue_depth
            );
            slot.send(busy_reply(session.server, era, id.clone(), text));
            return None;
        }
        Err(Refusal::DuplicateId(slot)) => {
            slot.send(
                Response::error(Some(id.clone()), id_in_flight(id))
                    .into_value()
                    .into(),
            );
            return None;
        }
    }
    let Ok(handler_slot) = session
        .shared
        .handler_slots(session.server)
        .try_acquire_owned()
    else {
        let text = format!(
            "busy: the `{}` server is already running {} tool calls; retry in a moment",
            session.server, session.shared.config.max_running_handlers
        );
        session
            .in_flight
            .finish(id, busy_reply(session.server, era, id.clone(), text));
        return None;
    };
    Some(AdmittedCall {
        cancellation,
        handler_slot,
    })
}

fn busy_reply(server: ServerName, era: Era, id: Id, text: String) -> Outgoing {
    Outgoing::ToolReply(ToolReply::new(id, server, era, ToolResult::error(text)))
}
