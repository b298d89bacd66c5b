//! The calls one connection has in flight, and the rule that settles every race between a
//! reply and a cancellation: whoever removes the entry first wins.
//!
//! Each entry owns a reserved slot in the connection's outgoing queue, taken when the call was
//! admitted. Finishing a call removes its entry and sends the reply through that slot while
//! the lock is held, so the reply is either queued before a cancellation is processed or never
//! queued at all. Sending through a reserved slot never waits, so no `.await` happens under
//! the lock.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::outgoing::Outgoing;
use ide_mcp_protocol::jsonrpc::Id;
use tokio::sync::mpsc::OwnedPermit;
use tokio_util::sync::CancellationToken;

/// Why a call could not be admitted. The reply slot comes back so the refusal can use it.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The id is already in flight on this connection.
    DuplicateId(OwnedPermit<Outgoing>),
    /// The connection already has `depth` calls in flight.
    QueueFull(OwnedPermit<Outgoing>),
}

struct InFlightCall {
    cancellation: CancellationToken,
    reply_slot: OwnedPermit<Outgoing>,
}

/// The ids of a connection's calls are the client's, but at most `depth` of them are in the
/// table at once: a hasher that is fast on short keys (still seeded per process) is enough,
/// where SipHash cost each call about 300 instructions for its insert and remove.
type CallTable = HashMap<Id, InFlightCall, foldhash::fast::RandomState>;

/// The in-flight table of one connection.
pub(crate) struct InFlightCalls {
    depth: usize,
    calls: Mutex<CallTable>,
}

impl std::fmt::Debug for InFlightCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InFlightCalls")
            .field("depth", &self.depth)
            .field("in_flight", &self.len())
            .finish()
    }
}

impl InFlightCalls {
    /// A table that holds at most `depth` calls.
    pub(crate) fn new(depth: usize) -> Self {
        InFlightCalls {
            depth,
            calls: Mutex::new(CallTable::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CallTable> {
        // A panic while holding this lock cannot leave the map inconsistent (every update is
        // a single insert or remove), so a poisoned lock is still safe to use.
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many calls are in flight.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether `id` is in flight.
    pub(crate) fn contains(&self, id: &Id) -> bool {
        self.lock().contains_key(id)
    }

    /// Admits a call, or says why not.
    pub(crate) fn admit(
        &self,
        id: Id,
        cancellation: CancellationToken,
        reply_slot: OwnedPermit<Outgoing>,
    ) -> Result<(), Refusal> {
        let mut calls = self.lock();
        if calls.contains_key(&id) {
            return Err(Refusal::DuplicateId(reply_slot));
        }
        if calls.len() >= self.depth {
            return Err(Refusal::QueueFull(reply_slot));
        }
        calls.insert(
            id,
            InFlightCall {
                cancellation,
                reply_slot,
            },
        );
        Ok(())
    }

    /// Sends the reply of a finished call, unless it was cancelled first. Returns whether the
    /// reply was queued.
    pub(crate) fn finish(&self, id: &Id, reply: Outgoing) -> bool {
        let mut calls = self.lock();
        match calls.remove(id) {
            Some(call) => {
                call.reply_slot.send(reply);
                true
            }
            None => false,
        }
    }

    /// Cancels a call: its handler is told, and no reply will ever be sent for it. Returns
    /// whether the call was still in flight.
    pub(crate) fn cancel(&self, id: &Id) -> bool {
        let removed = self.lock().remove(id);
        match removed {
            Some(call) => {
                call.cancellation.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every call (the connection closed).
    pub(crate) fn cancel_all(&self) {
        let calls: Vec<InFlightCall> = self.lock().drain().map(|(_, call)| call).collect();
        for call in calls {
            call.cancellation.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::sync::mpsc;

    async fn slot(sender: &mpsc::Sender<Outgoing>) -> OwnedPermit<Outgoing> {
        sender
            .clone()
            .reserve_owned()
            .await
            .expect("receiver alive")
    }

    #[tokio::test]
    async fn a_finished_call_sends_its_reply_once() {
        let (sender, mut receiver) = mpsc::channel(4);
        let calls = InFlightCalls::new(2);
        calls
            .admit(Id::Int(1), CancellationToken::new(), slot(&sender).await)
            .expect("admitted");
        assert!(calls.finish(&Id::Int(1), json!("done").into()));
        assert!(!calls.finish(&Id::Int(1), json!("again").into()));
        assert_eq!(
            receiver.recv().await.map(Outgoing::into_value),
            Some(json!("done"))
        );
        assert!(receiver.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_cancelled_call_never_replies_and_its_handler_is_told() {
        let (sender, mut receiver) = mpsc::channel(4);
        let calls = InFlightCalls::new(2);
        let token = CancellationToken::new();
        calls
            .admit(Id::Int(1), token.clone(), slot(&sender).await)
            .expect("admitted");
        assert!(calls.cancel(&Id::Int(1)));
        assert!(token.is_cancelled());
        assert!(!calls.finish(&Id::Int(1), json!("late").into()));
        drop(sender);
        assert_eq!(receiver.recv().await, None);
    }

    #[tokio::test]
    async fn a_duplicate_id_and_a_full_queue_are_refused() {
        let (sender, _receiver) = mpsc::channel(8);
        let calls = InFlightCalls::new(2);
        calls
            .admit(Id::Int(1), CancellationToken::new(), slot(&sender).await)
            .expect("admitted");
        assert!(matches!(
            calls.admit(Id::Int(1), CancellationToken::new(), slot(&sender).await),
            Err(Refusal::DuplicateId(_))
        ));
        calls
            .admit(Id::Int(2), CancellationToken::new(), slot(&sender).await)
            .expect("admitted");
        assert!(matches!(
            calls.admit(Id::Int(3), CancellationToken::new(), slot(&sender).await),
            Err(Refusal::QueueFull(_))
        ));
        assert_eq!(calls.len(), 2);
    }
}
