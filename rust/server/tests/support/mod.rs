//! A server set started in a temporary directory, and helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_server::client::{Client, Wire};
use ide_mcp_server::diagnostics::diagnostics_domain;
use ide_mcp_server::ManualClock;
use ide_mcp_server::{
    AllowAll, DomainSpec, IdeMcpServers, SecurityGuard, ServerConfig, ServerName, ServersBuilder,
};
use serde_json::{json, Value};

/// A running server set in its own temporary base directory.
pub struct TestServers {
    pub servers: Option<IdeMcpServers>,
    pub clock: Arc<ManualClock>,
    pub base: tempfile::TempDir,
}

/// Options for a test server set.
pub struct Setup {
    pub config: ServerConfig,
    pub guard: Arc<dyn SecurityGuard>,
    pub domains: Vec<DomainSpec>,
    pub host: Option<Arc<dyn ide_mcp_server::Host>>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            config: ServerConfig::default(),
            guard: Arc::new(AllowAll),
            domains: ServerName::ALL
                .into_iter()
                .map(diagnostics_domain)
                .collect(),
            host: None,
        }
    }
}

impl TestServers {
    /// The four servers, each with the diagnostics domain.
    pub fn start() -> TestServers {
        TestServers::start_with(Setup::default())
    }

    pub fn start_with(setup: Setup) -> TestServers {
        let base = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new());
        let mut builder: ServersBuilder = IdeMcpServers::builder([base.path().to_path_buf()])
            .config(setup.config)
            .guard(setup.guard)
            .clock(clock.clone());
        if let Some(host) = setup.host {
            builder = builder.host(host);
        }
        for domain in setup.domains {
            builder = builder.domain(domain);
        }
        let servers = builder.start().unwrap();
        TestServers {
            servers: Some(servers),
            clock,
            base,
        }
    }

    pub fn servers(&self) -> &IdeMcpServers {
        self.servers.as_ref().unwrap()
    }

    pub fn socket(&self, server: ServerName) -> PathBuf {
        self.servers().socket_path(server).unwrap()
    }

    /// A framed client of `code`, not yet initialised, with a read timeout so a missing reply
    /// fails the test instead of hanging it.
    pub fn client(&self) -> Client {
        self.client_of(ServerName::Code, Wire::Frames)
    }

    pub fn client_of(&self, server: ServerName, wire: Wire) -> Client {
        let client = Client::connect_with(&self.socket(server), wire).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        client
    }

    pub fn stop(mut self) {
        if let Some(servers) = self.servers.take() {
            servers.stop().unwrap();
        }
    }
}

/// `tools/call run` params for `tool` with `args`.
pub fn run_params(tool: &str, args: Value) -> Value {
    json!({ "name": "run", "arguments": { "tool": tool, "args": args } })
}

/// Reads messages until the response with `id`, returning it and everything read before.
pub fn read_until_response(client: &mut Client, id: &Value) -> (Value, Vec<Value>) {
    let mut before = Vec::new();
    loop {
        let message = client.read_message().unwrap().expect("connection open");
        if message.get("id") == Some(id) && message.get("method").is_none() {
            return (message, before);
        }
        before.push(message);
    }
}

/// The text of a `tools/call` response.
pub fn result_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

pub fn is_error_result(response: &Value) -> bool {
    response["result"]["isError"] == json!(true)
}
