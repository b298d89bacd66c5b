//! Authentication of every message: the token it carries in `_meta` (read by
//! [`RequestMeta`]) checked against the token ring. Whatever is wrong, the answer is the same.

use ide_mcp_protocol::contract::REQUEST_REJECTED;
use ide_mcp_protocol::jsonrpc::{ErrorCode, ErrorObject};

use crate::mcp::RequestMeta;
use crate::token_ring::TokenRing;

/// Whether the message presents a token the ring accepts now.
pub(crate) fn accepts(tokens: &TokenRing, meta: &RequestMeta) -> bool {
    meta.token
        .as_deref()
        .is_some_and(|token| tokens.verify(token))
}

/// The one error every failed request gets: `-32600 request rejected`, saying nothing of
/// what was wrong.
pub(crate) fn rejection() -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_REQUEST, REQUEST_REJECTED)
}
