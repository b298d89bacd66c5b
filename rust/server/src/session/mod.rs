//! The session layer of one connection: what its messages mean once the transport has cut
//! them out of the byte stream. A session decodes each payload, parses it into the typed MCP
//! model, authenticates it, and hands it to its method (`methods/`).
//!
//! - [`authentication`]: the token a message presents, and the one rejection.
//! - [`caps`]: the budgets a client cannot exceed: calls in flight, handlers running. A new
//!   per-client limit (a rate, say) belongs here.
//! - [`connection_budget`]: the connections a server keeps open, unauthenticated (shed when
//!   full) and authenticated (capped per server and per peer process).
//! - [`in_flight`]: the per-connection table that settles a reply against a cancellation.

pub(crate) mod authentication;
pub(crate) mod caps;
pub(crate) mod connection_budget;
pub(crate) mod in_flight;

use std::sync::Arc;

use ide_mcp_protocol::jsonrpc::{ErrorObject, Id, Notification, Response};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::guard::ClientIdentity;
use crate::mcp::common_call;
use crate::mcp::split_request::{self, Classified};
use crate::mcp::{self, ClientNotification, Era, ParsedRequest, ServerResult};
use crate::methods;
use crate::outgoing::Outgoing;
use crate::server_name::ServerName;
use crate::shared::Shared;
use crate::wire::{decode_message, Wire};
use connection_budget::{AuthenticatedPlace, NoPlace, UnauthenticatedPlace};
use in_flight::InFlightCalls;

/// The most of a decode error's reason a `Parse error` reply carries in `data.reason`.
const MAX_PARSE_ERROR_REASON_CHARS: usize = 200;

/// One connection's conversation, from its first message to its close.
pub(crate) struct Session {
    /// The server set's shared state.
    pub(crate) shared: Arc<Shared>,
    /// The server this connection came in on.
    pub(crate) server: ServerName,
    /// Who the client is: the kernel's pid, the name it gave, the connection's number.
    pub(crate) identity: ClientIdentity,
    /// Fires when the connection closes; every call's token is a child of it.
    pub(crate) cancellation: CancellationToken,
    /// The writer's queue: replies and notifications, in the order they are sent.
    pub(crate) outgoing: mpsc::Sender<Outgoing>,
    /// The calls in flight on this connection.
    pub(crate) in_flight: Arc<InFlightCalls>,
    /// Undecodable, invalid or unauthenticated messages so far.
    pub(crate) bad_messages: u32,
    /// The connection's place among those that have not presented a valid token yet.
    pub(crate) unauthenticated: Option<UnauthenticatedPlace>,
    /// Its place among the authenticated connections, from its first valid token on.
    pub(crate) authenticated: Option<AuthenticatedPlace>,
    /// Set when the session must end the connection (the transport closes it).
    pub(crate) close_reason: Option<String>,
    /// Whether more bytes of the connection wait behind the payload being handled.
    pub(crate) others_waiting: bool,
}

impl Session {
    /// Handles one payload: whatever it holds, it is answered (or, for a notification,
    /// acted on or dropped), and the session goes on.
    pub(crate) async fn handle_payload(&mut self, wire: Wire, payload: &[u8]) {
        // Read to the end before anything waits: the parts of a message read in parts are
        // large, and whatever lives across an await is kept in the connection task's future,
        // which every connection holds, idle or not.
        let parsed = match self.read_payload(wire, payload) {
            Ok(Classified::Request(parsed)) => parsed,
            Ok(Classified::Notification(notification)) => {
                return self.handle_notification(notification).await
            }
            // The servers send no requests, so there is nothing a response could answer.
            Ok(Classified::Response(_)) => return,
            Err(reply) => {
                self.bad_messages += 1;
                return self.send(reply).await;
            }
        };
        self.handle_request(parsed).await
    }

    async fn handle_notification(&mut self, notification: Notification) {
        let (meta, notification) = ClientNotification::parse(notification);
        if !authentication::accepts(&self.shared.tokens, &meta) {
            self.bad_messages += 1;
            // A failed notification is dropped: there is no id to answer.
            return;
        }
        if !self.take_authenticated_place().await {
            return;
        }
        methods::notify(self, notification);
    }

    /// Decodes and classifies one payload; the error is the reply to an undecodable or
    /// invalid one (made once and sent at once: boxing it would only add an allocation).
    #[allow(clippy::result_large_err)]
    fn read_payload(&self, wire: Wire, payload: &[u8]) -> Result<Classified, Response> {
        let limits = &self.shared.config.decode_limits;
        // The `tools/call` every client sends, read by hand; everything else (and anything in
        // doubt) decoded and classified.
        if let Some(request) = common_call::read(wire, payload, limits) {
            return Ok(Classified::Request(request));
        }
        let message = match decode_message(wire, payload, limits) {
            Ok(message) => message,
            Err(reason) => {
                tracing::debug!(server = %self.server, %reason, "undecodable payload");
                // The reason describes the client's own bytes (where they broke, or that they
                // would decode past the budget), so saying it costs nothing and helps the client.
                let reason: String = reason.chars().take(MAX_PARSE_ERROR_REASON_CHARS).collect();
                let error =
                    ErrorObject::parse_error().with_data(serde_json::json!({ "reason": reason }));
                return Err(Response::error(None, error));
            }
        };
        split_request::classify(message).map_err(|invalid| invalid.to_response())
    }

    async fn handle_request(&mut self, parsed: ParsedRequest) {
        let era = parsed.era();
        let ParsedRequest { id, meta, request } = parsed;
        if !authentication::accepts(&self.shared.tokens, &meta) {
            self.bad_messages += 1;
            self.fail(id, authentication::rejection()).await;
            return;
        }
        if !self.take_authenticated_place().await {
            let reason = self.close_reason.clone().unwrap_or_default();
            self.fail(id, ErrorObject::invalid_request(reason)).await;
            return;
        }
        if self.in_flight.contains(&id) {
            let error = caps::id_in_flight(&id);
            self.fail(id, error).await;
            return;
        }
        if let Some(version) = meta.protocol_version_text() {
            if !mcp::is_supported_version(&version) {
                let error =
                    ErrorObject::unsupported_protocol_version(&version, &mcp::supported_versions());
                self.fail(id, error).await;
                return;
            }
        }
        match request {
            Ok(request) => methods::answer(self, id, era, meta, request).await,
            Err(error) => self.fail(id, error).await,
        }
    }

    /// On the first valid token, moves the connection from the unauthenticated pool to the
    /// authenticated budget (waiting while the server's cap is reached). `false` when it may
    /// not stay: then `close_reason` says why.
    async fn take_authenticated_place(&mut self) -> bool {
        let Some(place) = self.unauthenticated.take() else {
            return self.authenticated.is_some();
        };
        let pid = self.identity.pid.unwrap_or(0);
        let budget = self.shared.connection_budget(self.server);
        match budget.authenticate(place, pid, &self.cancellation).await {
            Ok(authenticated) => {
                self.authenticated = Some(authenticated);
                true
            }
            Err(NoPlace::PeerFull(most)) => {
                self.close_reason = Some(format!(
                    "this process already has {most} connections to the `{}` server; close one, \
                     then connect again",
                    self.server
                ));
                false
            }
            Err(NoPlace::Closed) => {
                self.close_reason = Some("closed".to_owned());
                false
            }
        }
    }

    /// Queues a reply; waiting here is the back-pressure on a client that does not read.
    pub(crate) async fn send(&self, response: Response) {
        let _ = self.outgoing.send(response.into_value().into()).await;
    }

    /// Answers `id` with a result, in the fields of `era`.
    pub(crate) async fn reply(&self, id: Id, era: Era, result: ServerResult) {
        self.send(Response::success(id, result.into_value(self.server, era)))
            .await;
    }

    /// Answers `id` with an error.
    pub(crate) async fn fail(&self, id: Id, error: ErrorObject) {
        self.send(Response::error(Some(id), error)).await;
    }
}
