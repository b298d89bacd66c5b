//! Values Java holds by handle: the generic [`HandleTable`], and the server sets' own table.
//!
//! A handle is a key into a table, never a pointer: a stale, forged or twice-freed handle
//! finds nothing and becomes an `IllegalStateException` (or `false`), not undefined behaviour.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use ide_mcp_server::IdeMcpServers;

use crate::error::BridgeError;

/// A table of values by handle (never 0). The lock is held only inside one operation, never
/// while the caller uses what it got out.
pub struct HandleTable<T> {
    next: AtomicI64,
    entries: Mutex<Option<HashMap<i64, T>>>,
}

impl<T: Clone> HandleTable<T> {
    /// An empty table, for a `static`.
    pub const fn new() -> Self {
        HandleTable {
            next: AtomicI64::new(1),
            entries: Mutex::new(None),
        }
    }

    fn with<R>(&self, work: impl FnOnce(&mut HashMap<i64, T>) -> R) -> R {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(entries.get_or_insert_with(HashMap::new))
    }

    /// Keeps `value` and returns its new handle.
    pub fn insert(&self, value: T) -> i64 {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        self.with(|entries| entries.insert(handle, value));
        handle
    }

    /// A copy of the value behind `handle` (an `Arc`, typically).
    pub fn get(&self, handle: i64) -> Option<T> {
        self.with(|entries| entries.get(&handle).cloned())
    }

    /// Takes the value out; the handle is dead from now on.
    pub fn remove(&self, handle: i64) -> Option<T> {
        self.with(|entries| entries.remove(&handle))
    }

    /// How many values are held (for leak tests).
    pub fn len(&self) -> usize {
        self.with(|entries| entries.len())
    }
}

static SERVER_SETS: HandleTable<Arc<IdeMcpServers>> = HandleTable::new();

fn unknown(handle: i64) -> BridgeError {
    BridgeError::IllegalState(format!(
        "no running server set has handle {handle}: it was stopped already, or never started"
    ))
}

/// Keeps a started server set and returns its handle (never 0).
pub fn insert(servers: IdeMcpServers) -> i64 {
    SERVER_SETS.insert(Arc::new(servers))
}

/// The server set behind `handle`. The table's lock is released before the caller uses it.
pub fn get(handle: i64) -> Result<Arc<IdeMcpServers>, BridgeError> {
    SERVER_SETS.get(handle).ok_or_else(|| unknown(handle))
}

/// Takes the server set out of the table; the handle is dead from now on.
pub fn remove(handle: i64) -> Result<Arc<IdeMcpServers>, BridgeError> {
    SERVER_SETS.remove(handle).ok_or_else(|| unknown(handle))
}

/// How many server sets are running.
pub fn live_count() -> usize {
    SERVER_SETS.len()
}
