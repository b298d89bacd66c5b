//! `notifications/cancelled {requestId}`: the call's handler is told, and no reply is sent
//! for it afterwards (the in-flight table settles the race with a finishing call).

use ide_mcp_protocol::jsonrpc::Id;

use crate::session::Session;

pub(super) fn apply(session: &mut Session, request_id: Option<Id>) {
    if let Some(id) = request_id {
        session.in_flight.cancel(&id);
    }
}
