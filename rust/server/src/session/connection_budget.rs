//! The connection budget of one server, shaped so that a local flood cannot hold it.
//!
//! A connection has not shown who it is until it presents a valid token. Until then it sits in
//! a small pool of unauthenticated connections; when the pool is full, a newcomer sheds the
//! oldest connection of the peer process that holds the most places in it (as sshd's
//! MaxStartups drops early), instead of being refused: idle or stalled connections of one
//! process cannot lock another process out. A connection that authenticates leaves the pool
//! for the authenticated budget, which has its own cap per server (over it, the connection
//! waits for a place) and per peer process (over it, the connection is refused).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The connections of one server.
#[derive(Debug)]
pub(crate) struct ConnectionBudget {
    unauthenticated: Mutex<UnauthenticatedPool>,
    authenticated: Arc<Semaphore>,
    per_peer: Arc<Mutex<HashMap<i32, usize>>>,
    max_per_peer: usize,
}

#[derive(Debug)]
struct UnauthenticatedPool {
    capacity: usize,
    next_ticket: u64,
    /// Oldest first: the ticket, the peer's pid, and what closes the connection.
    entries: VecDeque<(u64, i32, CancellationToken)>,
}

/// A connection's place in the unauthenticated pool; dropping it gives the place back.
#[derive(Debug)]
pub(crate) struct UnauthenticatedPlace {
    budget: Arc<ConnectionBudget>,
    ticket: u64,
}

/// A connection's place in the authenticated budget, held until it closes.
#[derive(Debug)]
pub(crate) struct AuthenticatedPlace {
    _permit: OwnedSemaphorePermit,
    _counted: PeerCount,
}

/// Why an authenticated connection has no place.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoPlace {
    /// The peer process already has this many authenticated connections.
    PeerFull(usize),
    /// The connection closed (or the servers stopped) while it waited.
    Closed,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update is a single insert or removal: a panic cannot leave it inconsistent.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ConnectionBudget {
    /// A budget of `unauthenticated` connections that have not shown a token yet,
    /// `authenticated` that have, and at most `per_peer` authenticated ones per process.
    pub(crate) fn new(unauthenticated: usize, authenticated: usize, per_peer: usize) -> Self {
        ConnectionBudget {
            unauthenticated: Mutex::new(UnauthenticatedPool {
                capacity: unauthenticated.max(1),
                next_ticket: 0,
                entries: VecDeque::new(),
            }),
            authenticated: Arc::new(Semaphore::new(authenticated)),
            per_peer: Arc::new(Mutex::new(HashMap::new())),
            max_per_peer: per_peer.max(1),
        }
    }

    /// Gives a new connection of `pid` a place in the unauthenticated pool, shedding another
    /// when it is full: the oldest of the process with the most places (possibly `pid`).
    pub(crate) fn enter(
        self: &Arc<Self>,
        pid: i32,
        close: CancellationToken,
    ) -> UnauthenticatedPlace {
        let (shed, ticket) = {
            let mut pool = lock(&self.unauthenticated);
            let shed = if pool.entries.len() >= pool.capacity {
                pool.shed_one(pid)
            } else {
                None
            };
            pool.next_ticket += 1;
            let ticket = pool.next_ticket;
            pool.entries.push_back((ticket, pid, close));
            (shed, ticket)
        };
        if let Some((shed_pid, close)) = shed {
            tracing::info!(
                pid = shed_pid,
                "unauthenticated connections full: shed the oldest"
            );
            close.cancel();
        }
        UnauthenticatedPlace {
            budget: Arc::clone(self),
            ticket,
        }
    }

    /// Moves an authenticated connection of `pid` out of the pool into the authenticated
    /// budget, waiting while the server's cap is reached.
    pub(crate) async fn authenticate(
        &self,
        place: UnauthenticatedPlace,
        pid: i32,
        closed: &CancellationToken,
    ) -> Result<AuthenticatedPlace, NoPlace> {
        {
            let mut per_peer = lock(&self.per_peer);
            let count = per_peer.entry(pid).or_insert(0);
            if *count >= self.max_per_peer {
                return Err(NoPlace::PeerFull(self.max_per_peer));
            }
            *count += 1;
        }
        // Counted first, so a place taken while this one waits cannot pass the peer's cap.
        let counted = PeerCount {
            per_peer: Arc::clone(&self.per_peer),
            pid,
        };
        // Out of the pool now: waiting for a place is not a reason to be shed.
        drop(place);
        let permit = tokio::select! {
            biased;
            _ = closed.cancelled() => return Err(NoPlace::Closed),
            permit = Arc::clone(&self.authenticated).acquire_owned() => {
                permit.map_err(|_closed| NoPlace::Closed)?
            }
        };
        Ok(AuthenticatedPlace {
            _permit: permit,
            _counted: counted,
        })
    }

    #[cfg(test)]
    fn unauthenticated_len(&self) -> usize {
        lock(&self.unauthenticated).entries.len()
    }
}

impl UnauthenticatedPool {
    fn shed_one(&mut self, newcomer: i32) -> Option<(i32, CancellationToken)> {
        let mut counts: HashMap<i32, usize> = HashMap::new();
        *counts.entry(newcomer).or_insert(0) += 1;
        for (_, pid, _) in &self.entries {
            *counts.entry(*pid).or_insert(0) += 1;
        }
        // The process with the most places; on a tie, the one whose oldest entry is oldest.
        let mut heaviest: Option<(i32, usize)> = None;
        for (_, pid, _) in &self.entries {
            let count = counts.get(pid).copied().unwrap_or(0);
            if heaviest.is_none_or(|(_, most)| count > most) {
                heaviest = Some((*pid, count));
            }
        }
        let (heaviest, _) = heaviest?;
        let index = self
            .entries
            .iter()
            .position(|(_, pid, _)| *pid == heaviest)?;
        self.entries
            .remove(index)
            .map(|(_, pid, close)| (pid, close))
    }
}

impl Drop for UnauthenticatedPlace {
    fn drop(&mut self) {
        lock(&self.budget.unauthenticated)
            .entries
            .retain(|(ticket, _, _)| *ticket != self.ticket);
    }
}

/// One authenticated connection counted against its peer; uncounted when dropped.
#[derive(Debug)]
struct PeerCount {
    per_peer: Arc<Mutex<HashMap<i32, usize>>>,
    pid: i32,
}

impl Drop for PeerCount {
    fn drop(&mut self) {
        let mut per_peer = lock(&self.per_peer);
        if let Some(count) = per_peer.get_mut(&self.pid) {
            *count -= 1;
            if *count == 0 {
                per_peer.remove(&self.pid);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_pool_sheds_the_oldest_of_the_heaviest_peer() {
        let budget = Arc::new(ConnectionBudget::new(3, 8, 8));
        let flood: Vec<CancellationToken> = (0..2).map(|_| CancellationToken::new()).collect();
        let _flood_places: Vec<_> = flood
            .iter()
            .map(|close| budget.enter(100, close.clone()))
            .collect();
        let other = CancellationToken::new();
        let _other_place = budget.enter(200, other.clone());
        // Full: a newcomer of a third process sheds the flood's oldest, not the other one.
        let newcomer = CancellationToken::new();
        let _newcomer_place = budget.enter(300, newcomer.clone());
        assert!(flood[0].is_cancelled());
        assert!(!flood[1].is_cancelled() && !other.is_cancelled() && !newcomer.is_cancelled());
        assert_eq!(budget.unauthenticated_len(), 3);
    }

    #[tokio::test]
    async fn authenticated_places_are_capped_per_peer_and_given_back() {
        let budget = Arc::new(ConnectionBudget::new(8, 8, 2));
        let close = CancellationToken::new();
        let first = budget
            .authenticate(budget.enter(1, close.clone()), 1, &close)
            .await
            .expect("a place");
        let _second = budget
            .authenticate(budget.enter(1, close.clone()), 1, &close)
            .await
            .expect("a place");
        assert_eq!(budget.unauthenticated_len(), 0);
        let third = budget
            .authenticate(budget.enter(1, close.clone()), 1, &close)
            .await;
        assert_eq!(third.expect_err("over the cap"), NoPlace::PeerFull(2));
        drop(first);
        budget
            .authenticate(budget.enter(1, close.clone()), 1, &close)
            .await
            .expect("a place again");
    }
}
