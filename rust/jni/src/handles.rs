//! The server sets Java holds, by handle.
//!
//! A handle is a key into this table, never a pointer: a stale, forged or twice-stopped
//! handle finds nothing and becomes an `IllegalStateException`, not undefined behaviour.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use ide_mcp_server::IdeMcpServers;

use crate::error::BridgeError;

static NEXT_HANDLE: AtomicI64 = AtomicI64::new(1);
static SERVER_SETS: Mutex<Option<HashMap<i64, Arc<IdeMcpServers>>>> = Mutex::new(None);

fn with_sets<R>(work: impl FnOnce(&mut HashMap<i64, Arc<IdeMcpServers>>) -> R) -> R {
    let mut sets = SERVER_SETS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    work(sets.get_or_insert_with(HashMap::new))
}

fn unknown(handle: i64) -> BridgeError {
    BridgeError::IllegalState(format!(
        "no running server set has handle {handle}: it was stopped already, or never started"
    ))
}

/// Keeps a started server set and returns its handle (never 0).
pub fn insert(servers: IdeMcpServers) -> i64 {
    let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
    with_sets(|sets| sets.insert(handle, Arc::new(servers)));
    handle
}

/// The server set behind `handle`. The table's lock is released before the caller uses it.
pub fn get(handle: i64) -> Result<Arc<IdeMcpServers>, BridgeError> {
    with_sets(|sets| sets.get(&handle).cloned()).ok_or_else(|| unknown(handle))
}

/// Takes the server set out of the table; the handle is dead from now on.
pub fn remove(handle: i64) -> Result<Arc<IdeMcpServers>, BridgeError> {
    with_sets(|sets| sets.remove(&handle)).ok_or_else(|| unknown(handle))
}

/// How many server sets are running.
pub fn live_count() -> usize {
    with_sets(|sets| sets.len())
}
