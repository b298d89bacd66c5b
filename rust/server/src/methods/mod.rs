//! The MCP methods, one file each, dispatched from the typed request the session parsed.
//! Adding a method: a variant in `mcp::messages`, a file here, and an arm below.

mod cancelled;
mod discover;
mod initialize;
mod ping;
mod tools_call;
mod tools_list;

use ide_mcp_protocol::jsonrpc::{ErrorObject, Id};

use crate::mcp::{ClientNotification, ClientRequest, Era, RequestMeta};
use crate::session::Session;

/// Answers an authenticated request.
pub(crate) async fn answer(
    session: &mut Session,
    id: Id,
    era: Era,
    meta: RequestMeta,
    request: ClientRequest,
) {
    let result = match request {
        ClientRequest::Initialize {
            protocol_version,
            client_name,
        } => initialize::answer(session, protocol_version.as_deref(), client_name),
        ClientRequest::Ping => ping::answer(),
        ClientRequest::Discover => discover::answer(),
        ClientRequest::ToolsList => tools_list::answer(),
        ClientRequest::ToolsCall { tool, arguments } => {
            return tools_call::answer(session, id, era, meta, tool, arguments).await
        }
        ClientRequest::Unknown(method) => {
            return session
                .fail(id, ErrorObject::method_not_found(&method))
                .await
        }
    };
    session.reply(id, era, result).await;
}

/// Acts on an authenticated notification.
pub(crate) fn notify(session: &mut Session, notification: ClientNotification) {
    match notification {
        ClientNotification::Cancelled { request_id } => cancelled::apply(session, request_id),
        ClientNotification::Ignored => {}
    }
}
