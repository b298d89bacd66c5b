//! The MCP model: what a client may send, parsed once into types, and what the servers
//! answer, built from types. Nothing here does I/O or keeps per-connection state.
//!
//! Two eras share one connection. Legacy clients (2024-11-05 … 2025-11-25) open with
//! `initialize`; modern clients (2026-07-28) call `server/discover` and put their version in
//! every request's `_meta`. Either may come first, and both may come on the same connection.
//!
//! - [`versions`]: the protocol versions of both eras.
//! - [`meta`]: `params._meta`, the one place its keys are read.
//! - [`messages`]: [`ClientRequest`] and [`ClientNotification`], parsed from JSON-RPC.
//! - [`results`]: [`ServerResult`] and the `_meta` every result carries.

pub(crate) mod common_call;
pub mod messages;
pub mod meta;
pub mod results;
pub(crate) mod split_request;
pub mod versions;

pub use ide_mcp_protocol::contract::{PROTOCOL_VERSION_META_KEY, REQUEST_REJECTED, TOKEN_META_KEY};
pub use messages::{
    ClientNotification, ClientRequest, MetaTool, ParsedRequest, RunArguments, RunMembers,
    ToolArguments,
};
pub use meta::RequestMeta;
pub use results::{ServerResult, ToolResult, SERVER_INFO_META_KEY, SERVER_VERSION};
pub use versions::{
    is_supported_version, supported_versions, Era, LEGACY_PROTOCOL_VERSIONS,
    MODERN_PROTOCOL_VERSIONS,
};
