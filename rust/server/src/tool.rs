//! What a host registers: domains, and the tools inside them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::handler::ToolHandler;
use crate::server_name::ServerName;

/// A named group of tools on one server, e.g. `files` on `code`.
#[derive(Clone)]
pub struct DomainSpec {
    /// The domain's name, as `tools(domain)` takes it.
    pub name: String,
    /// One line that tells a model what the domain is for.
    pub description: String,
    /// The server whose socket serves it.
    pub server: ServerName,
    /// Its tools.
    pub tools: Vec<ToolSpec>,
}

/// One tool: its contract with the model and its implementation.
#[derive(Clone)]
pub struct ToolSpec {
    /// The tool's name, as `run(tool, args)` takes it.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A JSON Schema (draft 2020-12) for its arguments.
    pub input_schema: Value,
    /// Hints about what running it does.
    pub annotations: ToolAnnotations,
    /// How long a call may run; `None` takes the server's default.
    pub deadline: Option<Duration>,
    /// The implementation.
    pub handler: Arc<dyn ToolHandler>,
}

/// Behaviour hints a client (and the guard) may rely on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may destroy or overwrite something.
    pub destructive: bool,
}

impl fmt::Debug for DomainSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DomainSpec")
            .field("name", &self.name)
            .field("server", &self.server)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .field("annotations", &self.annotations)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}
