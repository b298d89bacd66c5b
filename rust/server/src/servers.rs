//! The public handle of one project's servers: start, register and remove domains, rotate
//! the token, stop. Its methods return quickly and never wait on the runtime, except `stop`,
//! which drains in the order the contract gives.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

use crate::audit::AuditRecord;
use crate::clock::{Clock, SystemMonotonicClock};
use crate::config::ServerConfig;
use crate::guard::SecurityGuard;
use crate::host::{HeadlessHost, Host};
use crate::listener::accept_loop;
use crate::live_sets::{LiveSetRecord, LiveSetsError, Registration};
use crate::mcp_config::{mcp_servers_block, BridgeLauncher};
use crate::page_delivery::{SplitModeNotice, SPLIT_MODE_MESSAGE};
use crate::registry::{Registry, RegistryError, ToolCollision};
use crate::runtime_dir::{RuntimeDir, RuntimeDirError};
use crate::server_name::ServerName;
use crate::shared::Shared;
use crate::token_ring::{TokenGenerationError, TokenRing};
use crate::tool::DomainSpec;
use ide_mcp_protocol::contract::READY_LINE_PREFIX;

/// Why the servers could not start, or a change could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ServersError {
    /// No Security Guard was given: nothing may run without a verdict.
    #[error(
        "no Security Guard was set; every run(tool, args) needs one (use AllowAll only in tests)"
    )]
    NoGuard,
    /// A domain could not be registered.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The runtime directory or token file could not be set up.
    #[error(transparent)]
    RuntimeDir(#[from] RuntimeDirError),
    /// The OS random source failed.
    #[error("could not generate a token: {0}")]
    Token(#[from] TokenGenerationError),
    /// A socket could not be created.
    #[error("could not listen on {}: {source}", .path.display())]
    Listen {
        /// The socket path.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The I/O runtime could not be started.
    #[error("could not start the I/O runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// Builds a server set.
pub struct ServersBuilder {
    bases: Vec<PathBuf>,
    config: ServerConfig,
    guard: Option<Arc<dyn SecurityGuard>>,
    host: Arc<dyn Host>,
    clock: Arc<dyn Clock>,
    domains: Vec<DomainSpec>,
}

impl std::fmt::Debug for ServersBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServersBuilder")
            .field("bases", &self.bases)
            .field("config", &self.config)
            .field("domains", &self.domains)
            .finish_non_exhaustive()
    }
}

impl ServersBuilder {
    /// Starts from the candidate base directories, in order of preference (the IDE temp dir,
    /// then `java.io.tmpdir`).
    pub fn new(bases: impl IntoIterator<Item = PathBuf>) -> Self {
        ServersBuilder {
            bases: bases.into_iter().collect(),
            config: ServerConfig::default(),
            guard: None,
            host: Arc::new(HeadlessHost),
            clock: Arc::new(SystemMonotonicClock),
            domains: Vec::new(),
        }
    }

    /// Replaces the configuration.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets the Security Guard (required).
    pub fn guard(mut self, guard: Arc<dyn SecurityGuard>) -> Self {
        self.guard = Some(guard);
        self
    }

    /// Sets the host callbacks.
    pub fn host(mut self, host: Arc<dyn Host>) -> Self {
        self.host = host;
        self
    }

    /// Sets the monotonic clock the token ring uses (tests pass a manual one).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Adds a domain served from the start.
    pub fn domain(mut self, domain: DomainSpec) -> Self {
        self.domains.push(domain);
        self
    }

    /// Creates the runtime directory and token, and listens on every server that has a
    /// domain.
    pub fn start(self) -> Result<IdeMcpServers, ServersError> {
        let guard = self.guard.ok_or(ServersError::NoGuard)?;
        let mut registry = Registry::default();
        for domain in self.domains {
            registry = registry.with_domain(domain)?;
        }
        let tokens = TokenRing::new(self.config.tokens, self.clock)?;
        let runtime_dir = RuntimeDir::create(&self.bases)?;
        runtime_dir.write_token(tokens.current().expose())?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.config.worker_threads.max(1))
            .thread_name("ide-mcp-io")
            .enable_all()
            .build()
            .map_err(ServersError::Runtime)?;
        let collisions = registry.collisions().to_vec();
        let shared = Arc::new(Shared::new(
            self.config,
            registry,
            tokens,
            guard,
            Arc::clone(&self.host),
        ));
        let servers = IdeMcpServers {
            running: Some(Running {
                runtime,
                shared,
                runtime_dir: Arc::new(runtime_dir),
                listeners: Mutex::new(HashMap::new()),
                registration: Mutex::new(RegistryState::default()),
                started_at: seconds_since_epoch(),
            }),
        };
        let running = servers.running()?;
        running.sync_listeners()?;
        running.register();
        running.spawn_rotation();
        if !collisions.is_empty() {
            self.host.tools_withheld(&collisions);
        }
        tracing::info!(
            "{READY_LINE_PREFIX}{}",
            running.runtime_dir.path().display()
        );
        Ok(servers)
    }
}

/// A running server set: one project's runtime directory, token and sockets.
#[derive(Debug)]
pub struct IdeMcpServers {
    running: Option<Running>,
}

struct Running {
    runtime: Runtime,
    shared: Arc<Shared>,
    runtime_dir: Arc<RuntimeDir>,
    listeners: Mutex<HashMap<ServerName, CancellationToken>>,
    /// This set's record in the per-user registry of live server sets.
    registration: Mutex<RegistryState>,
    /// When the set started, in seconds since 1970.
    started_at: u64,
}

/// Whether the set is registered, and if not, why.
#[derive(Debug, Default)]
struct RegistryState {
    registration: Option<Registration>,
    problem: Option<String>,
}

fn seconds_since_epoch() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("directory", &self.runtime_dir.path())
            .finish_non_exhaustive()
    }
}

impl Running {
    /// The record this set is registered with now.
    fn live_set_record(&self) -> Result<LiveSetRecord, LiveSetsError> {
        let config = &self.shared.config;
        LiveSetRecord::for_this_process(
            &config.project_roots,
            self.runtime_dir.path(),
            &self.live_servers(),
            &config.host_name,
            self.started_at,
        )
        .ok_or_else(|| {
            LiveSetsError::Encode(
                "this process's start time cannot be read, so no reader could tell it alive"
                    .to_owned(),
            )
        })
    }

    fn live_servers(&self) -> Vec<ServerName> {
        let registry = self.shared.registry();
        ServerName::ALL
            .into_iter()
            .filter(|server| registry.serves(*server))
            .collect()
    }

    /// Writes this set's record in the per-user registry, unless the options turn it off. A
    /// registry that cannot be used does not stop the servers (clients can still be given the
    /// socket); the problem is logged and kept for [`IdeMcpServers::registry_problem`].
    fn register(&self) {
        if !self.shared.config.register_live_set {
            return;
        }
        let registered = self
            .live_set_record()
            .and_then(|record| Registration::register(&record, self.runtime_dir.id()));
        let mut state = lock(&self.registration);
        match registered {
            Ok(registration) => state.registration = Some(registration),
            Err(error) => {
                tracing::warn!(%error, "this server set is not in the registry of live server sets; clients must be given its sockets");
                state.problem = Some(error.to_string());
            }
        }
    }

    /// Rewrites the record after the live servers changed.
    fn update_registration(&self) {
        let state = lock(&self.registration);
        let Some(registration) = &state.registration else {
            return;
        };
        if let Err(error) = self
            .live_set_record()
            .and_then(|record| registration.update(&record))
        {
            tracing::warn!(%error, "could not update this server set's registry record");
        }
    }

    /// The root `--project` bridges name this set by: its first root, when it is registered.
    fn registered_project(&self) -> Option<PathBuf> {
        lock(&self.registration).registration.as_ref()?;
        let root = self.shared.config.project_roots.first()?;
        Some(std::fs::canonicalize(root).unwrap_or_else(|_| root.clone()))
    }

    /// Makes the set of listening sockets match the registry: a socket for every server with
    /// a domain, none for the others.
    fn sync_listeners(&self) -> Result<(), ServersError> {
        let registry = self.shared.registry();
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for server in ServerName::ALL {
            let serves = registry.serves(server);
            let listening = listeners.contains_key(&server);
            if serves && !listening {
                let stop = self.listen(server)?;
                listeners.insert(server, stop);
            } else if !serves && listening {
                if let Some(stop) = listeners.remove(&server) {
                    stop.cancel();
                }
                let _ = std::fs::remove_file(self.runtime_dir.socket_path(server.as_str()));
            }
        }
        drop(listeners);
        self.update_registration();
        Ok(())
    }

    fn listen(&self, server: ServerName) -> Result<CancellationToken, ServersError> {
        let path = self.runtime_dir.socket_path(server.as_str());
        let listen_error = |source| ServersError::Listen {
            path: path.clone(),
            source,
        };
        // A socket file left by an earlier listener of this same instance would make bind
        // fail; the directory is ours alone, so removing it is safe.
        let _ = std::fs::remove_file(&path);
        let _entered = self.runtime.enter();
        let listener = crate::platform::bind_listener(&path).map_err(listen_error)?;
        self.runtime_dir.secure_socket_file(server.as_str())?;
        let stop = self.shared.shutdown.child_token();
        self.shared.tasks.spawn(accept_loop(
            listener,
            server,
            Arc::clone(&self.shared),
            stop.clone(),
        ));
        Ok(stop)
    }

    fn spawn_rotation(&self) {
        let shared = Arc::clone(&self.shared);
        let runtime_dir = Arc::clone(&self.runtime_dir);
        self.runtime.spawn(async move {
            loop {
                let wait = shared.tokens.time_until_rotation();
                tokio::select! {
                    _ = shared.shutdown.cancelled() => return,
                    _ = tokio::time::sleep(wait) => {}
                }
                if shared.tokens.rotation_due() {
                    if let Err(error) = rotate(&shared, &runtime_dir) {
                        tracing::error!(%error, "token rotation failed; retrying in a minute");
                        tokio::select! {
                            _ = shared.shutdown.cancelled() => return,
                            _ = tokio::time::sleep(Duration::from_secs(60)) => {}
                        }
                    }
                }
            }
        });
    }
}

fn rotate(shared: &Shared, runtime_dir: &RuntimeDir) -> Result<(), ServersError> {
    let token = shared.tokens.rotate()?;
    runtime_dir.write_token(token.expose())?;
    Ok(())
}

impl IdeMcpServers {
    /// Starts building a server set over the candidate base directories.
    pub fn builder(bases: impl IntoIterator<Item = PathBuf>) -> ServersBuilder {
        ServersBuilder::new(bases)
    }

    fn running(&self) -> Result<&Running, ServersError> {
        self.running.as_ref().ok_or_else(|| {
            ServersError::Runtime(std::io::Error::other("the servers are already stopped"))
        })
    }

    /// The runtime directory, `<base>/claude-ide-mcp/<id>`.
    pub fn directory(&self) -> Option<&Path> {
        self.running
            .as_ref()
            .map(|running| running.runtime_dir.path())
    }

    /// The socket path of `server` (whether or not it is listening).
    pub fn socket_path(&self, server: ServerName) -> Option<PathBuf> {
        self.running
            .as_ref()
            .map(|running| running.runtime_dir.socket_path(server.as_str()))
    }

    /// The servers that have a socket now.
    pub fn live_servers(&self) -> Vec<ServerName> {
        self.running
            .as_ref()
            .map(Running::live_servers)
            .unwrap_or_default()
    }

    /// This set's record file in the per-user registry of live server sets; `None` when the
    /// set is not registered (turned off, or the registry could not be used: see
    /// [`registry_problem`](Self::registry_problem)).
    pub fn registry_record(&self) -> Option<PathBuf> {
        let running = self.running.as_ref()?;
        let state = lock(&running.registration);
        state.registration.as_ref().map(Registration::path)
    }

    /// Why this set could not be registered, when registering was asked for and failed.
    pub fn registry_problem(&self) -> Option<String> {
        let running = self.running.as_ref()?;
        let problem = lock(&running.registration).problem.clone();
        problem
    }

    /// Registers (or replaces) a domain; its server's socket appears if it had none. Returns
    /// the collisions that now withhold tools (the host is told of them too).
    pub fn register_domain(&self, domain: DomainSpec) -> Result<Vec<ToolCollision>, ServersError> {
        let running = self.running()?;
        let (registry, ()) = running
            .shared
            .update_registry(|current| current.with_domain(domain).map(|next| (next, ())))?;
        running.sync_listeners()?;
        let collisions = registry.collisions().to_vec();
        if !collisions.is_empty() {
            running.shared.host.tools_withheld(&collisions);
        }
        Ok(collisions)
    }

    /// Removes a domain of `server`; the socket disappears when it was the server's last one.
    /// Returns whether the domain existed.
    pub fn remove_domain(&self, server: ServerName, name: &str) -> Result<bool, ServersError> {
        let running = self.running()?;
        let removed = running.shared.update_registry(|current| {
            current
                .without_domain(server, name)
                .map(|next| (next, ()))
                .ok_or(())
        });
        if removed.is_err() {
            return Ok(false);
        }
        running.sync_listeners()?;
        Ok(true)
    }

    /// Rotates the token now: the new one is written to the token file, and the previous one
    /// stays valid for the overlap.
    pub fn rotate_token(&self) -> Result<(), ServersError> {
        let running = self.running()?;
        rotate(&running.shared, &running.runtime_dir)
    }

    /// The `mcpServers` block for the live servers, started with `launcher`.
    /// A registered set with a project root gets the native bridge's stable `--project` form.
    pub fn mcp_servers_block(&self, launcher: &BridgeLauncher) -> Option<Value> {
        let running = self.running.as_ref()?;
        Some(mcp_servers_block(
            running.runtime_dir.path(),
            &running.live_servers(),
            launcher,
            running.registered_project().as_deref(),
        ))
    }

    /// Split mode: tells the host the chat could not be shown but the servers are up, with
    /// the configuration to copy. Returns the notice it gave.
    pub fn announce_split_mode(
        &self,
        launcher: &BridgeLauncher,
    ) -> Result<SplitModeNotice, ServersError> {
        let running = self.running()?;
        let notice = SplitModeNotice {
            message: SPLIT_MODE_MESSAGE.to_owned(),
            configuration: mcp_servers_block(
                running.runtime_dir.path(),
                &running.live_servers(),
                launcher,
                running.registered_project().as_deref(),
            ),
        };
        running.shared.host.split_mode_notice(&notice);
        Ok(notice)
    }

    /// Declares a client process the host launched: it and its descendants are admitted
    /// without being announced.
    pub fn declare_launched_client(&self, pid: i32) -> Result<(), ServersError> {
        self.running()?.shared.admission.declare_launched(pid);
        Ok(())
    }

    /// Withdraws a declaration (the client exited).
    pub fn forget_launched_client(&self, pid: i32) -> Result<(), ServersError> {
        self.running()?.shared.admission.forget_launched(pid);
        Ok(())
    }

    /// Grants one admission credit: the next unexpected client within `valid_for` is admitted
    /// without being announced.
    pub fn grant_admission_credit(&self, valid_for: Duration) -> Result<(), ServersError> {
        self.running()?.shared.admission.grant_credit(valid_for);
        Ok(())
    }

    /// The audit log: every verdict of the Security Guard checkpoint, oldest first.
    pub fn audit_log(&self) -> Vec<AuditRecord> {
        self.running
            .as_ref()
            .map(|running| running.shared.audit.records())
            .unwrap_or_default()
    }

    /// Stops in order: stop accepting, cancel every call, drain, shut the runtime down,
    /// remove the directory. Must not be called from inside an async runtime.
    pub fn stop(mut self) -> Result<(), ServersError> {
        self.stop_in_place()
    }

    fn stop_in_place(&mut self) -> Result<(), ServersError> {
        let Some(running) = self.running.take() else {
            return Ok(());
        };
        let Running {
            runtime,
            shared,
            runtime_dir,
            listeners,
            registration,
            started_at: _,
        } = running;
        // First, so that no reader finds a set that is going away.
        let registration = registration
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .registration;
        if let Some(registration) = registration {
            if let Err(error) = registration.remove() {
                tracing::warn!(%error, "could not remove this server set's registry record; the next reader removes it");
            }
        }
        let listeners = listeners
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for (server, stop) in listeners {
            stop.cancel();
            let _ = std::fs::remove_file(runtime_dir.socket_path(server.as_str()));
        }
        shared.shutdown.cancel();
        shared.tasks.close();
        let drain_timeout = shared.config.drain_timeout;
        let tasks = shared.tasks.clone();
        runtime.block_on(async move {
            let _ = tokio::time::timeout(drain_timeout, tasks.wait()).await;
        });
        runtime.shutdown_timeout(Duration::from_secs(1));
        drop(shared);
        match Arc::try_unwrap(runtime_dir) {
            Ok(runtime_dir) => runtime_dir.remove()?,
            Err(_still_shared) => {
                tracing::warn!("the runtime directory is still in use; it will be cleaned up by the next start");
            }
        }
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Drop for IdeMcpServers {
    fn drop(&mut self) {
        if let Err(error) = self.stop_in_place() {
            tracing::warn!(%error, "stopping the servers on drop failed");
        }
    }
}
