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

use futures::future::{BoxFuture, Either};
use futures::FutureExt;

use ide_mcp_protocol::jsonrpc::{ErrorObject, Response};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::guard::ClientIdentity;
use crate::mcp::common_call;
use crate::mcp::split_request::{self, Classified};
use crate::mcp::{self, ClientNotification, ParsedRequest};
use crate::methods::{self, Answer};
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
    /// A child of `cancellation` held for the connection's life, never used: a token keeps its
    /// children in a list that it frees when the last child goes and allocates again for the
    /// next one, which was an allocation and a free for every call made one at a time.
    pub(crate) _call_tokens_anchor: CancellationToken,
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
    ///
    /// Everything is decided before anything waits, and only the future of what is left to
    /// do is awaited: whatever lives across an await is kept in the connection task's future,
    /// which every connection holds, idle or not. What is left is an [`Answer`] carried out (a
    /// message queued, or a call admitted and started); a message that needs the connection's
    /// place among the authenticated first (its first valid token, once a connection) takes
    /// the way that may wait for that place, boxed.
    pub(crate) async fn handle_payload(&mut self, wire: Wire, payload: &[u8]) {
        let left: Either<_, BoxFuture<'_, ()>> = match self.read_payload(wire, payload) {
            Ok(Classified::Request(parsed)) => {
                if !authentication::accepts(&self.shared.tokens, &parsed.meta) {
                    self.bad_messages += 1;
                    Either::Left(
                        Answer::failure(parsed.id, authentication::rejection()).carry_out(self),
                    )
                } else if self.authenticated.is_none() {
                    Either::Right(self.request_taking_place(parsed).boxed())
                } else {
                    let answer = self.answer_request(parsed);
                    Either::Left(answer.carry_out(self))
                }
            }
            Ok(Classified::Notification(notification)) => {
                let (meta, notification) = ClientNotification::parse(notification);
                if !authentication::accepts(&self.shared.tokens, &meta) {
                    // A failed notification is dropped: there is no id to answer.
                    self.bad_messages += 1;
                    return;
                }
                if self.authenticated.is_some() {
                    methods::notify(self, notification);
                    return;
                }
                Either::Right(self.notification_taking_place(notification).boxed())
            }
            // The servers send no requests, so there is nothing a response could answer.
            Ok(Classified::Response(_)) => return,
            Err(reply) => {
                self.bad_messages += 1;
                Either::Left(Answer::Send(reply.into_value().into()).carry_out(self))
            }
        };
        left.await;
    }

    /// An authenticated notification of a connection that has no place among the
    /// authenticated yet: the place first (which may wait), then the notification.
    async fn notification_taking_place(&mut self, notification: ClientNotification) {
        if self.take_authenticated_place().await {
            methods::notify(self, notification);
        }
    }

    /// An authenticated request of a connection that has no place among the authenticated
    /// yet: the place first (which may wait), then the answer.
    async fn request_taking_place(&mut self, parsed: ParsedRequest) {
        let answer = if self.take_authenticated_place().await {
            self.answer_request(parsed)
        } else {
            let reason = self.close_reason.clone().unwrap_or_default();
            Answer::failure(parsed.id, ErrorObject::invalid_request(reason))
        };
        answer.carry_out(self).await;
    }

    /// The answer to an authenticated request of a connection with its place.
    fn answer_request(&mut self, parsed: ParsedRequest) -> Answer {
        let era = parsed.era();
        let ParsedRequest { id, meta, request } = parsed;
        if self.in_flight.contains(&id) {
            let error = caps::id_in_flight(&id);
            return Answer::failure(id, error);
        }
        if let Some(version) = meta.protocol_version_text() {
            if !mcp::is_supported_version(&version) {
                let error =
                    ErrorObject::unsupported_protocol_version(&version, &mcp::supported_versions());
                return Answer::failure(id, error);
            }
        }
        match request {
            Ok(request) => methods::answer(self, id, era, meta, request),
            Err(error) => Answer::failure(id, error),
        }
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
}
