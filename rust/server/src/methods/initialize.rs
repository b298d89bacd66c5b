//! `initialize`: the legacy era's handshake. It records the client's name (self-reported,
//! for the guard and the audit log) and answers the negotiated version.

use std::sync::Arc;

use crate::mcp::versions::negotiated_legacy_version;
use crate::mcp::ServerResult;
use crate::session::Session;

pub(super) fn answer(
    session: &mut Session,
    protocol_version: Option<&str>,
    client_name: Option<String>,
) -> ServerResult {
    if client_name.is_some() {
        session.identity.name = client_name.map(Arc::from);
    }
    ServerResult::Initialize {
        protocol_version: negotiated_legacy_version(protocol_version),
    }
}
