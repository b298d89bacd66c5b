//! The read timers of a connection: the first message, a frame header, a message body, and
//! silence. Whichever is due next is the one the read loop sleeps until.

use std::time::{Duration, Instant};

use bytes::BytesMut;

use crate::config::ServerConfig;
use crate::wire::Wire;

/// How often a connection with calls in flight re-checks its idle timer.
const IDLE_RECHECK: Duration = Duration::from_secs(1);

/// When the bytes of a connection are due.
pub(super) struct ReadTiming {
    /// When the connection was accepted.
    pub(super) accepted_at: Instant,
    /// Whether a message with a valid token has arrived yet.
    pub(super) saw_message: bool,
    /// When the bytes of the message being read began to arrive.
    pub(super) message_started: Option<Instant>,
    /// When the last message (or a recheck with calls in flight) was seen.
    pub(super) last_activity: Instant,
}

/// What happens when a connection's deadline passes.
pub(super) enum Expiry {
    /// Close the connection, for this reason.
    Close(&'static str),
    /// Nothing yet: look again.
    Recheck,
}

impl ReadTiming {
    /// The next deadline, and what happens when it passes.
    pub(super) fn next_deadline(
        &self,
        config: &ServerConfig,
        buffer: &BytesMut,
        wire: Option<Wire>,
        calls_in_flight: usize,
    ) -> (Instant, Expiry) {
        if !self.saw_message {
            return (
                self.accepted_at + config.first_message_timeout,
                Expiry::Close("no authenticated message in time"),
            );
        }
        if let Some(started) = self.message_started {
            let header_done = match wire {
                Some(Wire::Lines) => true,
                _ => buffer.iter().take(12).any(|&byte| byte == b'\n'),
            };
            return if header_done {
                (
                    started + config.body_timeout,
                    Expiry::Close("a message body arrived too slowly"),
                )
            } else {
                (
                    started + config.header_timeout,
                    Expiry::Close("a frame header arrived too slowly"),
                )
            };
        }
        if calls_in_flight > 0 {
            return (
                self.last_activity + IDLE_RECHECK.min(config.idle_timeout),
                Expiry::Recheck,
            );
        }
        (
            self.last_activity + config.idle_timeout,
            Expiry::Close("idle for too long"),
        )
    }
}
