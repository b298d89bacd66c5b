//! The state every task of a running server set shares.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::admission::AdmissionGate;
use crate::audit::AuditLog;
use crate::config::ServerConfig;
use crate::guard::SecurityGuard;
use crate::host::Host;
use crate::policy::BaselinePolicy;
use crate::registry::Registry;
use crate::server_name::{PerServer, ServerName};
use crate::session::connection_budget::ConnectionBudget;
use crate::token_ring::TokenRing;

/// Shared by the listeners, connections and calls of one server set.
pub(crate) struct Shared {
    /// The knobs, fixed at start.
    pub(crate) config: ServerConfig,
    /// The current registry snapshot; replaced whole on every change.
    registry: RwLock<Arc<Registry>>,
    /// Which tokens are accepted.
    pub(crate) tokens: TokenRing,
    /// Judges every `run`.
    pub(crate) guard: Arc<dyn SecurityGuard>,
    /// The application hosting the servers.
    pub(crate) host: Arc<dyn Host>,
    /// Fires on stop: every listener, connection and call watches it (through child tokens).
    pub(crate) shutdown: CancellationToken,
    /// Every spawned connection and call, so stop can wait for them to finish.
    pub(crate) tasks: TaskTracker,
    /// Per server, the permits for handlers running at once.
    handler_slots: PerServer<Arc<Semaphore>>,
    /// Per server, the budget of open connections.
    connections: PerServer<Arc<ConnectionBudget>>,
    /// Who may connect.
    pub(crate) admission: Arc<AdmissionGate>,
    /// Path confinement and credential files, before the guard.
    pub(crate) policy: BaselinePolicy,
    /// Every verdict.
    pub(crate) audit: AuditLog,
    next_connection_id: AtomicU64,
    /// The connection that last read bytes through the runtime: only it may look at its
    /// socket before waiting (`connection/request_watch.rs`).
    pub(crate) last_reader: AtomicU64,
}

impl Shared {
    pub(crate) fn new(
        config: ServerConfig,
        registry: Registry,
        tokens: TokenRing,
        guard: Arc<dyn SecurityGuard>,
        host: Arc<dyn Host>,
    ) -> Self {
        let handler_slots =
            PerServer::from_fn(|_| Arc::new(Semaphore::new(config.max_running_handlers)));
        let connections = PerServer::from_fn(|_| Arc::new(connection_budget(&config)));
        let policy = BaselinePolicy::new(&config.project_roots);
        let audit = AuditLog::new(config.audit_capacity);
        Shared {
            config,
            registry: RwLock::new(Arc::new(registry)),
            tokens,
            guard,
            host,
            shutdown: CancellationToken::new(),
            tasks: TaskTracker::new(),
            handler_slots,
            connections,
            admission: Arc::new(AdmissionGate::default()),
            policy,
            audit,
            next_connection_id: AtomicU64::new(1),
            last_reader: AtomicU64::new(0),
        }
    }

    /// The registry as it is now; a call keeps using the snapshot it took.
    pub(crate) fn registry(&self) -> Arc<Registry> {
        Arc::clone(
            &self
                .registry
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    /// Replaces the registry through `change`, which sees the current one. The lock is held
    /// only for the swap, never across I/O or a call into the host.
    pub(crate) fn update_registry<T, E>(
        &self,
        change: impl FnOnce(&Registry) -> Result<(Registry, T), E>,
    ) -> Result<(Arc<Registry>, T), E> {
        let mut current = self
            .registry
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (next, outcome) = change(&current)?;
        let next = Arc::new(next);
        *current = Arc::clone(&next);
        Ok((next, outcome))
    }

    /// The handler permits of `server`.
    pub(crate) fn handler_slots(&self, server: ServerName) -> Arc<Semaphore> {
        Arc::clone(self.handler_slots.get(server))
    }

    /// The connection budget of `server`.
    pub(crate) fn connection_budget(&self, server: ServerName) -> Arc<ConnectionBudget> {
        Arc::clone(self.connections.get(server))
    }

    /// A number for a new connection.
    pub(crate) fn next_connection_id(&self) -> u64 {
        self.next_connection_id.fetch_add(1, Ordering::Relaxed)
    }
}

fn connection_budget(config: &ServerConfig) -> ConnectionBudget {
    ConnectionBudget::new(
        config.max_unauthenticated_connections,
        config.max_connections_per_server,
        config.max_connections_per_peer,
    )
}
